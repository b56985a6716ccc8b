package hosting_test

import (
	"bytes"
	"maps"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/metrics"
)

// TestPlanStepsAreCounted: each step the beat carries out is counted by its kind: a host started,
// then, once it registered, the release gone live.
func TestPlanStepsAreCounted(t *testing.T) {
	s := newStack(t)
	var log bytes.Buffer
	s.h.Metrics = metrics.NewRecorder(&log, time.Now)
	s.release(t, "web", 'a')
	s.beat(t)
	h1 := s.hostOf(t, s.app(t, "web"))
	s.running(t, h1)
	s.register(t, h1)
	s.beat(t)
	points, err := metrics.Read(log.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, p := range points {
		got[p.Metric.Name+" "+p.Dimensions[metrics.DimStep]] += p.Values[0]
	}
	if want := map[string]float64{"HostPlanSteps start": 1, "HostPlanSteps went_live": 1}; !maps.Equal(got, want) {
		t.Errorf("the beats counted %v, want %v", got, want)
	}
}
