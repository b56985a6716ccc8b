package jobs

import (
	"strings"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/outbox"
)

// TestDisplaced: a job taken out of its region for the region's sake is queued again as a new
// attempt, its region cleared when it allows another (fenced there when asked), kept in its
// region when it allows none, and counted against neither its retries nor its preemptions.
func TestDisplaced(t *testing.T) {
	at := time.Date(2026, 12, 7, 23, 0, 0, 0, time.UTC)
	roaming := New("job-1", "ml", "team-a", "us-west-2", 60, nil, nil, at.Add(-time.Hour))
	roaming.Regions, roaming.Status, roaming.Flavor = []string{"us-east-1", "us-west-2"}, StatusRunning, "spot"
	roaming.Retry = &Retry{Attempts: 2, On: []string{RetryPodFailure}}
	moved, c, err := Displaced(roaming, ReasonRegionLost, "us-west-2 unreached for 10m0s", "us-west-2", at)
	if err != nil {
		t.Fatalf("Displaced: %v", err)
	}
	if moved.Status != StatusQueued || moved.Attempt != 2 || moved.Region != "" || moved.Flavor != "" || !moved.Roaming() {
		t.Errorf("moved: status %s attempt %d region %q flavor %q", moved.Status, moved.Attempt, moved.Region, moved.Flavor)
	}
	if !c.Unplace || c.FenceIn != "us-west-2" || c.Event == nil || c.Event.Type != outbox.JobRetrying || c.Retried == nil || c.Retried.Attempt != 2 || c.Retried.Preemptions != 0 {
		t.Errorf("change: unplace %v fence %q event %+v retried %+v", c.Unplace, c.FenceIn, c.Event, c.Retried)
	}
	if last := moved.StatusHistory[len(moved.StatusHistory)-1]; !strings.HasPrefix(last.Reason, "region_lost: us-west-2 unreached") || last.Attempt != 2 {
		t.Errorf("history entry %+v", last)
	}
	if len(c.Retried.Attempts) != 1 || c.Retried.Attempts[0].Attempt != 1 || !strings.HasPrefix(c.Retried.Attempts[0].Reason, ReasonRegionLost) {
		t.Errorf("attempts kept %+v", c.Retried.Attempts)
	}
	if err := c.Check(); err != nil {
		t.Errorf("Check: %v", err)
	}

	pinned := New("job-2", "ml", "team-a", "us-west-2", 60, nil, nil, at.Add(-time.Hour))
	pinned.Status = StatusPending
	moved, c, err = Displaced(pinned, ReasonRegionDrained, "drained", "", at)
	if err != nil || moved.Region != "us-west-2" || c.Unplace || moved.Attempt != 2 || moved.Status != StatusQueued {
		t.Errorf("pinned drained: region %q unplace %v attempt %d status %s err %v", moved.Region, c.Unplace, moved.Attempt, moved.Status, err)
	}
	// A job with nowhere else to go is never fenced: its attempt is its region's to finish.
	if _, _, err := Displaced(pinned, ReasonRegionLost, "lost", "us-west-2", at); err == nil {
		t.Error("a pinned job fenced: no error")
	}
	for _, j := range []Job{
		{ID: "q", Status: StatusQueued, Regions: roaming.Regions, Region: "us-west-2"},
		{ID: "done", Status: StatusSucceeded, Regions: roaming.Regions, Region: "us-west-2"},
		{ID: "svc", Status: StatusRunning, Kind: KindLongRunning, Regions: roaming.Regions, Region: "us-west-2"},
	} {
		if _, _, err := Displaced(j, ReasonRegionDrained, "drained", "", at); err == nil {
			t.Errorf("Displaced(%s %s %s): no error", j.ID, j.Kind, j.Status)
		}
	}
	if !ValidOnRegionLost("") || !ValidOnRegionLost(OnRegionLostRequeue) || ValidOnRegionLost("retry") {
		t.Error("ValidOnRegionLost")
	}
}
