package httpapi_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/jobs"
)

// TestExpiredJobsAreGone: from a finished job's expires_at on, the API treats its record as gone,
// though DynamoDB Local never deletes it and DynamoDB takes days: GET is 404, and listings, bulk
// delete and costs leave it out. A retention of seconds shows it; a job kept for good (no
// retention when it ended) stays.
func TestExpiredJobsAreGone(t *testing.T) {
	e := newCleanupEnv(t)
	old := time.Now().Add(-10 * 24 * time.Hour)
	kept := e.job("kept", old, jobs.StatusPending, jobs.StatusSucceeded)
	e.store.Retain(3 * time.Second)
	expiring := e.job("expiring", old, jobs.StatusPending, jobs.StatusSucceeded)
	ended := time.Now()

	window := "/api/v1/costs?group_by=tenant&from=" + url.QueryEscape(old.UTC().Format(time.RFC3339)) +
		"&to=" + url.QueryEscape(time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	bulk := map[string]any{"status": "completed", "older_than_days": 7, "dry_run": true}
	seen := func(when string, want int) {
		t.Helper()
		code, out := e.do(e.key, "GET", "/api/v1/jobs?status=succeeded", nil)
		if items, _ := out["items"].([]any); code != http.StatusOK || len(items) != want {
			t.Errorf("%s: listing = %d with %d jobs, want %d", when, code, len(items), want)
		}
		if code, out := e.do(e.key, "POST", "/api/v1/jobs/bulk-delete", bulk); code != http.StatusOK || out["matched"] != float64(want) {
			t.Errorf("%s: bulk delete dry run = %d %v, want %d matched", when, code, out, want)
		}
		code, out = e.do(e.key, "GET", window, nil)
		groups, _ := out["groups"].([]any)
		if code != http.StatusOK || len(groups) != 1 || groups[0].(map[string]any)["jobs"] != float64(want) {
			t.Errorf("%s: costs = %d %v, want %d jobs counted", when, code, out, want)
		}
	}

	if code, _ := e.do(e.key, "GET", "/api/v1/jobs/"+expiring.ID, nil); code != http.StatusOK {
		t.Fatalf("GET the job within its retention = %d, want 200", code)
	}
	seen("within the retention", 2)

	time.Sleep(time.Until(ended.Add(3*time.Second + 1100*time.Millisecond)))
	if code, _ := e.do(e.key, "GET", "/api/v1/jobs/"+expiring.ID, nil); code != http.StatusNotFound {
		t.Errorf("GET the job past its retention = %d, want 404", code)
	}
	if code, _ := e.do(e.key, "DELETE", "/api/v1/jobs/"+expiring.ID+"?purge=true", nil); code != http.StatusNotFound {
		t.Errorf("DELETE ?purge=true of the job past its retention = %d, want 404", code)
	}
	seen("past the retention", 1)
	if code, _ := e.do(e.key, "GET", "/api/v1/jobs/"+kept.ID, nil); code != http.StatusOK {
		t.Errorf("GET the job kept for good = %d, want 200", code)
	}
	// Another tenant sees neither, expired or not.
	for _, id := range []string{kept.ID, expiring.ID} {
		if code, _ := e.do(e.otherKey, "GET", "/api/v1/jobs/"+id, nil); code != http.StatusNotFound {
			t.Errorf("another tenant's GET of ml's job %s = %d, want 404", id, code)
		}
	}
}
