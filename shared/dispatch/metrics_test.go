package dispatch

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/metrics"
)

// TestDrainRecordsMetrics: a drain records what it left waiting (the gated job among them), what
// is active, the oldest waiting job's age, and each dispatch's outcome with its time from
// submission.
func TestDrainRecordsMetrics(t *testing.T) {
	r := newRig(t, 1)
	var log bytes.Buffer
	r.dispatch.Metrics = metrics.NewRecorder(&log, time.Now)
	if err := r.book.Set(region, "g5.xlarge", 0.55, r.clock.now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	r.submit(t, "first", 90, nil)
	r.submit(t, "second", 50, nil)
	r.submit(t, "gated", 100, &jobs.Spot{InstanceType: "g5.xlarge", MaxPrice: 0.40})
	r.clock.skip(30 * time.Second)
	if err := r.dispatch.Drain(context.Background(), region); err != nil {
		t.Fatal(err)
	}
	points, err := metrics.Read(log.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, p := range points {
		key := p.Metric.Name
		if o := p.Dimensions[metrics.DimOutcome]; o != "" {
			key += " " + o
		}
		if p.Dimensions[metrics.DimRegion] != region {
			t.Errorf("%s recorded for region %q, want %s", p.Metric.Name, p.Dimensions[metrics.DimRegion], region)
		}
		got[key] = p.Values[0]
	}
	for name, want := range map[string]float64{
		"QueuedJobs": 2, "GatedJobs": 1, "ActiveJobs": 1, "DispatchOutcomes dispatched": 1,
	} {
		if got[name] != want {
			t.Errorf("%s = %v, want %v (all: %v)", name, got[name], want, got)
		}
	}
	if age := got["OldestQueuedAge"]; age < 29 || age > 120 {
		t.Errorf("OldestQueuedAge = %v s, want about 30", age)
	}
	if ms := got["SubmitToDispatched"]; ms < 29_000 || ms > 120_000 {
		t.Errorf("SubmitToDispatched = %v ms, want about 30,000", ms)
	}

	// The beat that sees the dispatched job run records its time from submission.
	log.Reset()
	r.reconcile.Metrics = r.dispatch.Metrics
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && !strings.Contains(log.String(), "SubmitToRunning") {
		if err := r.reconcile.HandleBeat(context.Background(), events.EventBridgeEvent{ID: "beat"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	points, err = metrics.Read(log.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var running []float64
	for _, p := range points {
		if p.Metric.Name == metrics.SubmitToRunning.Name {
			running = append(running, p.Values...)
		}
	}
	if len(running) != 1 || running[0] < 29_000 {
		t.Errorf("SubmitToRunning = %v, want one value of at least 30,000 ms", running)
	}
}

// TestEmptiedQueueReadsEmpty: the drains after one that emptied the queue, within the census's
// minute, record no waiting job and no age, not the queue as the census last counted it.
func TestEmptiedQueueReadsEmpty(t *testing.T) {
	r := newRig(t, 2)
	var log bytes.Buffer
	r.dispatch.Metrics = metrics.NewRecorder(&log, time.Now)
	r.submit(t, "only", 50, nil)
	r.clock.skip(10 * time.Second)
	for drain := 1; drain <= 2; drain++ {
		log.Reset()
		if err := r.dispatch.Drain(context.Background(), region); err != nil {
			t.Fatal(err)
		}
		points, err := metrics.Read(log.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, p := range points {
			got[p.Metric.Name] = p.Values[0]
		}
		if got["QueuedJobs"] != 0 || got["OldestQueuedAge"] != 0 || got["ActiveJobs"] != 1 {
			t.Errorf("drain %d recorded QueuedJobs %v, OldestQueuedAge %v, ActiveJobs %v; want 0, 0 and 1 (all: %v)",
				drain, got["QueuedJobs"], got["OldestQueuedAge"], got["ActiveJobs"], got)
		}
		r.clock.skip(5 * time.Second)
	}
}
