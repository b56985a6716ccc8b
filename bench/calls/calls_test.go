package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/dev/awscalls"
)

// TestPerJobTakesTheIdleBeatsOff: the beat's calls beyond what its idle beats made, per job; the
// other functions' calls whole.
func TestPerJobTakesTheIdleBeatsOff(t *testing.T) {
	query := awscalls.Key{Function: "reconcile", Service: "DynamoDB", Operation: "Query"}
	write := awscalls.Key{Function: "reconcile", Service: "DynamoDB", Operation: "TransactWriteItems"}
	submit := awscalls.Key{Function: "api", Service: "DynamoDB", Operation: "TransactWriteItems"}
	m := measured{
		jobs: 10, beats: 6,
		idle:            map[awscalls.Key]awscalls.Tally{query: {Calls: 39, ReadUnits: 3}},
		idleInvocations: map[string]awscalls.Invocations{"reconcile": {Count: 3}},
		run: map[awscalls.Key]awscalls.Tally{
			query:  {Calls: 80, ReadUnits: 8},
			write:  {Calls: 20, WriteUnits: 300},
			submit: {Calls: 10, WriteUnits: 140},
		},
	}
	want := map[awscalls.Key]rate{
		query:  {calls: (80 - 78) / 10.0, read: (8 - 6) / 10.0},
		write:  {calls: 2, write: 30},
		submit: {calls: 1, write: 14},
	}
	if diff := cmp.Diff(want, perJob(m), cmp.AllowUnexported(rate{})); diff != "" {
		t.Errorf("perJob (-want +got):\n%s", diff)
	}
}

func TestMinimumAmortisesPerInvocation(t *testing.T) {
	got := minimum(100, map[string]int{"dispatch": 10, "webhook": 20})
	checks := map[awscalls.Key]float64{
		key("api", "DynamoDB", "TransactWriteItems"):       1,
		key("dispatch", "DynamoDB", "Query"):               0.5, // 5 a drain, 10 drains, 100 jobs
		key("webhook", "DynamoDB", "PutItem"):              0.2,
		key(awscalls.Outside, "SQS", "ReceiveMessage"):     0.3,
		key("reconcile", "DynamoDB", "TransactWriteItems"): 2,
	}
	for k, want := range checks {
		if got[k] != want {
			t.Errorf("minimum(100 jobs)[%v] = %v, want %v", k, got[k], want)
		}
	}
}

func TestGBSecondsRoundsEachInvocationUp(t *testing.T) {
	inv := awscalls.Invocations{Count: 2, Durations: []time.Duration{1500 * time.Microsecond, 998 * time.Millisecond}}
	// 2 ms + 998 ms = 1 s at 512 MB.
	if got := gbSeconds(inv, 512); got != 0.5 {
		t.Errorf("gbSeconds(1.5 ms and 998 ms, 512 MB) = %v, want 0.5", got)
	}
}
