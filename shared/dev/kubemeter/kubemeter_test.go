package kubemeter

import (
	"net/url"
	"testing"
)

func TestOperation(t *testing.T) {
	tests := []struct{ method, path, want string }{
		{"POST", "/apis/batch/v1/namespaces/team-a/jobs", "POST jobs"},
		{"GET", "/apis/batch/v1/namespaces/team-a/jobs?labelSelector=tidegate.io%2Fjob-id", "LIST jobs"},
		{"GET", "/apis/batch/v1/jobs?labelSelector=x", "LIST jobs"},
		{"GET", "/api/v1/namespaces/team-a/pods?watch=true", "WATCH pods"},
		{"GET", "/api/v1/nodes/kwok-node", "GET nodes"},
		{"GET", "/api/v1/namespaces/team-a/pods/p-1/log?tailLines=20", "GET pods/log"},
		{"GET", "/api/v1/namespaces/team-a", "GET namespaces"},
		{"GET", "/api/v1/namespaces", "LIST namespaces"},
		{"GET", "/api", "GET /api"},
		{"GET", "/version", "GET /version"},
		{"GET", "/api/v1/namespaces/apps/pods/web-1", "GET pods"},
		{"PATCH", "/apis/networking.k8s.io/v1/namespaces/team-a/networkpolicies/tidegate-isolation", "PATCH networkpolicies"},
		{"DELETE", "/apis/batch/v1/namespaces/team-a/jobs/train", "DELETE jobs"},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := Operation(tt.method, u); got != tt.want {
			t.Errorf("Operation(%s, %s) = %q, want %q", tt.method, tt.path, got, tt.want)
		}
	}
}
