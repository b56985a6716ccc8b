package httpapi

import (
	"strings"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/dynamo"
)

// TestQueuedOf: a tenant's queued jobs are its jobs in every region's own queues, batch and
// long-running, as each region's census counted them, plus its roaming jobs once, as the freshest
// census counted them. A region whose queues are empty now counts nothing, whatever its census
// said; so do the roaming jobs once the roaming queue is empty; a region without a census counts
// nothing. Another tenant's figures never add to it.
func TestQueuedOf(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	censuses := map[string]dynamo.RegionCensus{
		"us-east-1": {Region: "us-east-1", At: t0,
			Queued:     map[string]dynamo.Queued{"a": {Batch: 7, LongRunning: 2}, "b": {Batch: 10_000}},
			Roaming:    map[string]int{"a": 3},
			RoamingAll: map[string]int{"a": 3, "b": 40}},
		"us-west-2": {Region: "us-west-2", At: t0.Add(30 * time.Second),
			Queued:     map[string]dynamo.Queued{"a": {Batch: 5}},
			Roaming:    map[string]int{"a": 4},
			RoamingAll: map[string]int{"a": 4, "b": 41}}, // the fresher: one more roaming job of a's since
		"eu-west-1": {Region: "eu-west-1", At: t0,
			Queued: map[string]dynamo.Queued{"a": {Batch: 100}}}, // its queues emptied since
	}
	waiting := map[string]bool{"us-east-1": true, "us-west-2": true, "eu-west-1": false, "ap-south-1": true}
	for _, tt := range []struct {
		name    string
		c       queueCensus
		tenant  string
		want    int
		because string
	}{
		{"a", queueCensus{censuses, waiting, true}, "a", 7 + 2 + 5 + 4, "us-east-1's 9, us-west-2's 5 and the freshest roaming count 4; eu-west-1's queues are empty"},
		{"b", queueCensus{censuses, waiting, true}, "b", 10_000 + 41, "its own, whatever a's"},
		{"no roaming now", queueCensus{censuses, waiting, false}, "a", 7 + 2 + 5, "the roaming queue is empty: its census counts left"},
		{"all queues empty", queueCensus{censuses, map[string]bool{}, false}, "a", 0, "nothing waits anywhere"},
		{"unknown tenant", queueCensus{censuses, waiting, true}, "c", 0, "no census counted any of its jobs"},
		{"no census", queueCensus{nil, waiting, true}, "a", 0, "no drain has kept one"},
	} {
		if got := tt.c.queuedOf(tt.tenant); got != tt.want {
			t.Errorf("queuedOf(%s), %s = %d, want %d: %s", tt.tenant, tt.name, got, tt.want, tt.because)
		}
	}
}

// TestQueueFullSays: the 429 of a submission at its cap names the tenant, its count and its cap,
// and says what to do, with the cap in its violation.
func TestQueueFullSays(t *testing.T) {
	e := queueFull("a", 120, 100)
	if e.Status() != 429 || e.Code != CodeQueueFull {
		t.Errorf("queueFull = %d %s, want 429 %s", e.Status(), e.Code, CodeQueueFull)
	}
	for _, say := range []string{"tenant a has 120 jobs queued and its cap is 100", "wait for its queue to drain", "--max-queued"} {
		if !strings.Contains(strings.ToLower(e.Detail), strings.ToLower(say)) {
			t.Errorf("queueFull detail %q does not say %q", e.Detail, say)
		}
	}
	if v, ok := e.Violations[0].(limitViolation); !ok || v.Limit != 100 || v.Field != "queued_jobs" {
		t.Errorf("queueFull violations = %+v, want one for queued_jobs with limit 100", e.Violations)
	}
}
