package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTenantsList: each tenant's max priority, cap of queued jobs, quotas and rate and burst show
// in the list, as --quota spells quotas, "none" for a cap of 0, and "default" where the record sets
// none.
func TestTenantsList(t *testing.T) {
	adminEnv(t)
	for _, args := range [][]string{
		{"tenants", "put", "capped", "--org", "acme", "--namespace", "ml-train,ml-eval", "--max-priority", "60", "--max-queued", "500",
			"--quota", "us-west-2=2", "--quota", "us-east-1=4:8", "--rate", "2.5", "--burst", "40"},
		{"tenants", "put", "open", "--org", "acme", "--namespace", "web", "--role", "viewer"},
		{"tenants", "put", "ops", "--org", "acme", "--namespace", "ops", "--role", "admin", "--operator", "--max-queued", "0"},
	} {
		if out, err := admin(t, args...); err != nil {
			t.Fatalf("tidegate admin %s = %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	out, err := admin(t, "tenants", "list")
	if err != nil {
		t.Fatalf("tidegate admin tenants list = %v\n%s", err, out)
	}
	var got [][]string
	for line := range strings.Lines(out) {
		fields := strings.Fields(line)
		got = append(got, fields[:len(fields)-1]) // all but CREATED, a time
	}
	want := [][]string{
		{"NAME", "ORG", "ROLE", "NAMESPACES", "MAX-PRIORITY", "MAX-QUEUED", "QUOTAS", "RATE", "BURST"},
		{"capped", "acme", "member", "ml-train,ml-eval", "60", "500", "us-east-1=4:8,us-west-2=2", "2.5", "40"},
		{"open", "acme", "viewer", "web", "100", "default", "default", "default", "default"},
		{"ops", "acme", "admin+operator", "ops", "100", "none", "default", "default", "default"},
	}
	if len(got) > 1 {
		slices.SortFunc(got[1:], func(a, b []string) int { return strings.Compare(a[0], b[0]) }) // the store lists tenants in no set order
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tidegate admin tenants list (-want +got):\n%s\n%s", diff, out)
	}
}
