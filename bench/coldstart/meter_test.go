package main

import (
	"net/http/httptest"
	"testing"
)

func TestKubeOperation(t *testing.T) {
	tests := []struct{ method, target, want string }{
		{"GET", "/api/v1/namespaces/apps/pods", "LIST pods"},
		{"GET", "/api/v1/namespaces/apps/pods?watch=true&resourceVersion=5", "WATCH pods"},
		{"GET", "/api/v1/namespaces/apps/pods/web-1", "GET pods"},
		{"GET", "/apis/networking.k8s.io/v1/networkpolicies", "LIST networkpolicies"},
		{"PATCH", "/apis/networking.k8s.io/v1/namespaces/team-a/networkpolicies/tidegate-isolation", "PATCH networkpolicies"},
		{"GET", "/api/v1/nodes", "LIST nodes"},
		{"DELETE", "/apis/batch/v1/namespaces/team-a/jobs/train", "DELETE jobs"},
		{"GET", "/version", "GET /version"},
	}
	for _, tt := range tests {
		if got := kubeOperation(httptest.NewRequest(tt.method, tt.target, nil)); got != tt.want {
			t.Errorf("kubeOperation(%s %s) = %q, want %q", tt.method, tt.target, got, tt.want)
		}
	}
}

func TestDescribeCalls(t *testing.T) {
	got := describeCalls(map[string]int{"DynamoDB Query": 2, "DynamoDB PutItem": 1, "Kubernetes LIST pods": 1})
	if want := "DynamoDB 3 (PutItem 1, Query 2); Kubernetes 1 (LIST pods 1)"; got != want {
		t.Errorf("describeCalls = %q, want %q", got, want)
	}
	if got := describeCalls(nil); got != "none" {
		t.Errorf("describeCalls(nil) = %q, want none", got)
	}
	starts := []start{{calls: map[string]int{"SQS SendMessage": 1}}, {calls: map[string]int{"SQS SendMessage": 1}}}
	if got := callsOf(starts); got != "SQS 1 (SendMessage 1)" {
		t.Errorf("callsOf two alike runs = %q, want one description", got)
	}
	starts = append(starts, start{})
	if got := callsOf(starts); got != "SQS 1 (SendMessage 1) / or / none" {
		t.Errorf("callsOf runs that differ = %q, want both descriptions", got)
	}
}
