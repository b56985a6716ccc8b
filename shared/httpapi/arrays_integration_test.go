package httpapi_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestSubmitArray: an array is one request that answers the running parent with its children
// counted; the children are listed under it, each named for its index, and only its own tenant
// sees them; a bad shape is a 400 naming the field, names its children could not take a 422, a
// retry of the parent a 409; and a cancel cancels every child.
func TestSubmitArray(t *testing.T) {
	st := newStack(t)
	submit := func(key string, array any, name string) (int, map[string]any) {
		t.Helper()
		body := map[string]any{"manifest": restrictedJob(func(pod map[string]any) {}), "region": "us-east-1", "namespace": "team-a", "array": array}
		if name != "" {
			body["manifest"].(map[string]any)["metadata"].(map[string]any)["name"] = name
		}
		return st.do(t, 0, "POST", "/api/v1/jobs", key, "application/json", mustJSON(body), nil)
	}
	status, out := submit(st.member, map[string]any{"size": 5, "parallelism": 2}, "")
	if status != 202 {
		t.Fatalf("POST an array = %d %v, want 202", status, out)
	}
	parent := out["job"].(map[string]any)
	id := fmt.Sprint(parent["id"])
	counts, _ := parent["array_status"].(map[string]any)
	if parent["status"] != "running" || fmt.Sprint(counts["active"]) != "2" || fmt.Sprint(counts["blocked"]) != "3" {
		t.Errorf("the array = %v with %v, want running, 2 active and 3 blocked", parent["status"], counts)
	}
	status, listed := st.do(t, 0, "GET", "/api/v1/jobs?parent="+id, st.member, "", "", nil)
	items, _ := listed["items"].([]any)
	if status != 200 || len(items) != 5 {
		t.Fatalf("GET ?parent = %d with %d children, want 200 and 5", status, len(items))
	}
	var queued []string
	for i, it := range items {
		c := it.(map[string]any)
		if c["parent"] != id || fmt.Sprint(c["array_index"]) != fmt.Sprint(i) || !strings.HasSuffix(fmt.Sprint(c["name"]), fmt.Sprintf("-%d", i)) {
			t.Errorf("child %d = parent %v, index %v, name %v; want %s, %d, …-%d", i, c["parent"], c["array_index"], c["name"], id, i, i)
		}
		if c["status"] == "queued" {
			queued = append(queued, fmt.Sprint(c["array_index"]))
		}
	}
	if !slices.Equal(queued, []string{"0", "1"}) {
		t.Errorf("children queued = %v, want 0 and 1", queued)
	}
	status, ns := st.do(t, 0, "GET", "/api/v1/jobs?namespace=team-a", st.member, "", "", nil)
	if nsItems, _ := ns["items"].([]any); status != 200 || len(nsItems) != 1 {
		t.Errorf("the namespace's listing = %d with %d jobs, want the parent alone", status, len(nsItems))
	}

	// Hostile: another tenant can neither list the children nor read one.
	if status, _ := st.do(t, 0, "GET", "/api/v1/jobs?parent="+id, st.rival, "", "", nil); status != 404 {
		t.Errorf("rival listing the children = %d, want 404", status)
	}
	if status, _ := st.do(t, 0, "GET", "/api/v1/jobs/"+id+"-0", st.rival, "", "", nil); status != 404 {
		t.Errorf("rival reading a child = %d, want 404", status)
	}

	for name, tc := range map[string]struct {
		array any
		field string
	}{
		"one child":              {map[string]any{"size": 1}, "array.size"},
		"too many":               {map[string]any{"size": 10001}, "array.size"},
		"parallelism above size": {map[string]any{"size": 3, "parallelism": 4}, "array.parallelism"},
		"negative parallelism":   {map[string]any{"size": 3, "parallelism": -1}, "array.parallelism"},
	} {
		status, out := submit(st.member, tc.array, "")
		fields, _ := out["fields"].([]any)
		if status != 400 || !slices.ContainsFunc(fields, func(f any) bool { return f.(map[string]any)["field"] == tc.field }) {
			t.Errorf("%s: = %d %v, want 400 naming %s", name, status, out, tc.field)
		}
	}
	if status, out := submit(st.member, map[string]any{"size": 10000}, strings.Repeat("a", 60)); status != 422 || !strings.Contains(fmt.Sprint(out["detail"]), "-9999") {
		t.Errorf("an array whose children's names would be too long = %d %v, want 422 naming the last child's", status, out)
	}
	if status, _ := st.do(t, 0, "POST", "/api/v1/jobs/"+id+"/retry", st.member, "application/json", "", nil); status != 409 {
		t.Errorf("retrying the array = %d, want 409", status)
	}

	// Purged while its children wait in the queue: they are cancelled first, none is left to run.
	status, out = submit(st.member, map[string]any{"size": 3}, "")
	if status != 202 {
		t.Fatalf("POST a second array = %d %v", status, out)
	}
	purged := fmt.Sprint(out["job"].(map[string]any)["id"])
	if status, out := st.do(t, 0, "DELETE", "/api/v1/jobs/"+purged+"?purge=true", st.member, "", "", nil); status != 204 {
		t.Fatalf("DELETE ?purge=true of an array with its children queued = %d %v, want 204", status, out)
	}
	for i := range 3 {
		if status, c := st.do(t, 0, "GET", fmt.Sprintf("/api/v1/jobs/%s-%d", purged, i), st.member, "", "", nil); status != 200 || c["status"] != "cancelled" {
			t.Errorf("child %d of the purged array = %d %v, want cancelled", i, status, c["status"])
		}
	}

	if status, out := st.do(t, 0, "DELETE", "/api/v1/jobs/"+id, st.member, "", "", nil); status != 200 {
		t.Fatalf("DELETE the array = %d %v", status, out)
	}
	status, got := st.do(t, 0, "GET", "/api/v1/jobs/"+id, st.member, "", "", nil)
	counts, _ = got["array_status"].(map[string]any)
	if status != 200 || got["status"] != "cancelled" || fmt.Sprint(counts["cancelled"]) != "5" {
		t.Errorf("the array after its cancel = %d %v with %v, want cancelled, 5 cancelled", status, got["status"], counts)
	}
	// The children are cancelled beside the answer (thousands take longer than a request may).
	for tries := 0; ; tries++ {
		_, listed = st.do(t, 0, "GET", "/api/v1/jobs?parent="+id+"&status=cancelled", st.member, "", "", nil)
		if items, _ := listed["items"].([]any); len(items) == 5 {
			break
		} else if tries == 50 {
			t.Fatalf("children cancelled = %d, want 5", len(items))
		}
		sleep()
	}
}
