package admission

import (
	"math"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/spotgate"
)

func TestDeadline(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	spot := func(onDeadline jobs.OnDeadline) *jobs.Spot {
		return &jobs.Spot{InstanceType: "g5.xlarge", MaxPrice: 0.40, Deadline: &at, OnDeadline: onDeadline}
	}
	above := spotgate.Observation{InstanceType: "g5.xlarge", Price: 0.55, Known: true}
	within := spotgate.Observation{InstanceType: "g5.xlarge", Price: 0.40, Known: true}
	for _, tc := range []struct {
		name string
		spot *jobs.Spot
		o    spotgate.Observation
		now  time.Time
		want AtDeadline
	}{
		{"no cap", nil, above, at.Add(time.Hour), Gated},
		{"no deadline", &jobs.Spot{InstanceType: "g5.xlarge", MaxPrice: 0.40}, above, at.Add(time.Hour), Gated},
		{"before it", spot(jobs.OnDeadlineOnDemand), above, at.Add(-time.Nanosecond), Gated},
		{"at it, above the cap, on demand", spot(jobs.OnDeadlineOnDemand), above, at, OnDemand},
		{"past it, above the cap, fail", spot(jobs.OnDeadlineFail), above, at.Add(time.Second), Fail},
		{"past it, no choice given, fails", spot(""), above, at.Add(time.Second), Fail},
		{"past it, within the cap, stays on spot", spot(jobs.OnDeadlineOnDemand), within, at.Add(time.Hour), Gated},
		{"past it, within the cap, does not fail", spot(jobs.OnDeadlineFail), within, at.Add(time.Hour), Gated},
		{"past it, price unknown", spot(jobs.OnDeadlineOnDemand), spotgate.Observation{}, at, OnDemand},
		{"past it, price unreadable", spot(jobs.OnDeadlineFail), spotgate.Observation{Price: math.NaN(), Known: true}, at, Fail},
	} {
		if got := Deadline(tc.spot, tc.o, tc.now); got != tc.want {
			t.Errorf("%s: Deadline = %d, want %d", tc.name, got, tc.want)
		}
	}
}
