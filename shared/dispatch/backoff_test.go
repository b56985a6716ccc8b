package dispatch

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/admission"
	"github.com/tidegate/tidegate/shared/jobs"
)

// TestBackingOff: a retried job waiting out its backoff is kept out of admission, so it holds no
// room and no place ahead of anyone else's job, and says why it waits; at its time it is a
// candidate like any other.
func TestBackingOff(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	later, earlier := now.Add(time.Minute), now.Add(-time.Second)
	queued := []jobs.Job{
		{ID: "a", Tenant: "hostile", NotBefore: &later},
		{ID: "b", Tenant: "other"},
		{ID: "c", Tenant: "hostile", NotBefore: &earlier},
		{ID: "d", Tenant: "hostile", NotBefore: &now},
	}
	ready, waits := backingOff(queued, now)
	var ids []string
	for _, j := range ready {
		ids = append(ids, j.ID)
	}
	if diff := cmp.Diff([]string{"b", "c", "d"}, ids); diff != "" {
		t.Errorf("backingOff ready (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]admission.FlavorWait{{Wait: admission.Wait{ID: "a", Reason: reasonRetryBackoff}}}, waits); diff != "" {
		t.Errorf("backingOff waits (-want +got):\n%s", diff)
	}
	if len(queued) != 4 || queued[1].ID != "b" {
		t.Errorf("backingOff changed the queue it was given: %v", queued)
	}
}
