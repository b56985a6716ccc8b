package metrics

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var at = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func recorder() (*Recorder, *bytes.Buffer) {
	var buf bytes.Buffer
	return NewRecorder(&buf, func() time.Time { return at }), &buf
}

func TestPutWritesWhatReadReads(t *testing.T) {
	r, buf := recorder()
	if err := r.Put(QueuedJobs, []string{"us-east-1"}, 12); err != nil {
		t.Fatal(err)
	}
	if err := r.Put(BeatDuration, nil, 35.5); err != nil {
		t.Fatal(err)
	}
	if err := r.Put(SubmitToDispatched, []string{"us-west-2"}, 10, 20, 30); err != nil {
		t.Fatal(err)
	}
	// A function's own log record between metric lines is passed over.
	buf.WriteString(`{"level":"INFO","msg":"drained","region":"us-east-1"}` + "\n")
	got, err := Read(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := []Point{
		{QueuedJobs, map[string]string{DimRegion: "us-east-1"}, []float64{12}, at},
		{BeatDuration, map[string]string{}, []float64{35.5}, at},
		{SubmitToDispatched, map[string]string{DimRegion: "us-west-2"}, []float64{10, 20, 30}, at},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Read(Put…) (-want +got):\n%s", diff)
	}
	first, _, _ := strings.Cut(buf.String(), "\n")
	for _, part := range []string{`"Timestamp":1796126400000`, `"Namespace":"Tidegate"`, `"Dimensions":[["Region"]]`, `"Region":"us-east-1"`, `"QueuedJobs":12`} {
		if !strings.Contains(first, part) {
			t.Errorf("the first line %s lacks %s", first, part)
		}
	}
}

func TestRollupIsAlsoPublishedWithoutDimensions(t *testing.T) {
	r, buf := recorder()
	if err := r.Put(OldestQueuedAge, []string{"us-east-1"}, 90); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"Dimensions":[["Region"],[]]`) {
		t.Errorf("a rollup's line %s lacks the empty dimension set", buf)
	}
	if _, err := Read(buf.Bytes()); err != nil {
		t.Errorf("Read(a rollup's line) = %v", err)
	}
}

func TestPutSplitsManyValues(t *testing.T) {
	r, buf := recorder()
	values := make([]float64, 250)
	for i := range values {
		values[i] = float64(i)
	}
	if err := r.Put(SubmitToRunning, []string{"us-east-1"}, values...); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "\n"); n != 3 {
		t.Errorf("250 values took %d lines, want 3 (at most %d a line)", n, maxValues)
	}
	got, err := Read(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var all []float64
	for _, p := range got {
		all = append(all, p.Values...)
	}
	if diff := cmp.Diff(values, all); diff != "" {
		t.Errorf("values read back (-want +got):\n%s", diff)
	}
}

func TestPutRefusesWrongDimensions(t *testing.T) {
	r, buf := recorder()
	if err := r.Put(DispatchOutcomes, []string{"us-east-1"}, 1); err == nil {
		t.Error("Put of DispatchOutcomes with one dimension value = nil, want an error naming its two")
	}
	if buf.Len() != 0 {
		t.Errorf("a refused Put wrote %q", buf)
	}
}

func TestNilRecorderRecordsNothing(t *testing.T) {
	var r *Recorder
	if err := r.Put(QueuedJobs, []string{"us-east-1"}, 1); err != nil {
		t.Errorf("nil Recorder Put = %v, want nil", err)
	}
}

func TestLinesNeverInterleave(t *testing.T) {
	r, buf := recorder()
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			for range 20 {
				if err := r.Put(APIRequests, []string{"GET /api/v1/jobs/{id}", "2xx"}, float64(i)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	got, err := Read(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1000 {
		t.Errorf("read %d points from 1,000 Puts at once", len(got))
	}
}

func TestReadRefusesWhatCloudWatchWouldNotPublish(t *testing.T) {
	tests := map[string]string{
		"another namespace":     `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"Other","Dimensions":[[]],"Metrics":[{"Name":"BeatDuration","Unit":"Milliseconds"}]}]},"BeatDuration":1}`,
		"a metric not in All":   `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"Tidegate","Dimensions":[[]],"Metrics":[{"Name":"Beats","Unit":"Count"}]}]},"Beats":1}`,
		"another unit":          `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"Tidegate","Dimensions":[[]],"Metrics":[{"Name":"BeatDuration","Unit":"Seconds"}]}]},"BeatDuration":1}`,
		"other dimensions":      `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"Tidegate","Dimensions":[["Region"]],"Metrics":[{"Name":"BeatDuration","Unit":"Milliseconds"}]}]},"Region":"x","BeatDuration":1}`,
		"a dimension unvalued":  `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"Tidegate","Dimensions":[["Region"]],"Metrics":[{"Name":"QueuedJobs","Unit":"Count"}]}]},"QueuedJobs":1}`,
		"no value":              `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"Tidegate","Dimensions":[[]],"Metrics":[{"Name":"BeatDuration","Unit":"Milliseconds"}]}]}}`,
		"a text value":          `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"Tidegate","Dimensions":[[]],"Metrics":[{"Name":"BeatDuration","Unit":"Milliseconds"}]}]},"BeatDuration":"1"}`,
		"no timestamp":          `{"_aws":{"CloudWatchMetrics":[{"Namespace":"Tidegate","Dimensions":[[]],"Metrics":[{"Name":"BeatDuration","Unit":"Milliseconds"}]}]},"BeatDuration":1}`,
		"not JSON past its key": `{"_aws": nope`,
	}
	for name, line := range tests {
		if _, err := Read([]byte(line + "\n")); err == nil {
			t.Errorf("Read(%s) = nil error, want one", name)
		}
	}
}

func TestMetricsAreNamedOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range All {
		if seen[m.Name] {
			t.Errorf("metric %s is listed twice", m.Name)
		}
		seen[m.Name] = true
		if m.About == "" || m.Source == "" || m.Unit == "" {
			t.Errorf("metric %s lacks its unit, what it measures or its source", m.Name)
		}
		if got, ok := Named(m.Name); !ok || got.Name != m.Name {
			t.Errorf("Named(%s) = %v, %v", m.Name, got, ok)
		}
	}
}
