package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/dev/devstack"
	"github.com/tidegate/tidegate/shared/metrics"
)

// TestDevMetricsTable: one aligned row a series, its dimensions in the metric's order, "-" for none.
func TestDevMetricsTable(t *testing.T) {
	at := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	latest := []metrics.Latest{
		{Metric: metrics.QueuedJobs, Dimensions: map[string]string{metrics.DimRegion: "us-east-1"}, Value: 2, At: at, Samples: 4, Sum: 7},
		{Metric: metrics.DispatchOutcomes, Dimensions: map[string]string{metrics.DimOutcome: "dispatched", metrics.DimRegion: "us-east-1"}, Value: 1, At: at, Samples: 3, Sum: 3},
		{Metric: metrics.BeatDuration, Dimensions: map[string]string{}, Value: 35.5, At: at.Add(-time.Minute), Samples: 2, Sum: 71},
	}
	var b bytes.Buffer
	p := &printer{out: &b}
	p.print(latestTable(latest, func(t time.Time) string { return at.Add(5 * time.Second).Sub(t).String() }))
	w := when(at)
	want := []string{
		"METRIC             DIMENSIONS                            VALUE   UNIT           SUM   SAMPLES   RECORDED" + strings.Repeat(" ", len(w)-len("RECORDED")) + "   AGE",
		"QueuedJobs         Region=us-east-1                      2       Count          -     4         " + w + "   5s",
		"DispatchOutcomes   Region=us-east-1 Outcome=dispatched   1       Count          3     3         " + w + "   5s",
		"BeatDuration       -                                     35.5    Milliseconds   -     2         " + when(at.Add(-time.Minute)) + "   1m5s",
		"",
	}
	if diff := cmp.Diff(want, strings.Split(b.String(), "\n")); diff != "" {
		t.Errorf("latestTable (-want +got):\n%s", diff)
	}
}

// TestDevMetricsCommand: `tidegate dev metrics` reads the folder's metrics.log; without one it
// says the stack has recorded nothing there.
func TestDevMetricsCommand(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) (string, error) {
		cmd := root()
		var out, errOut bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		cmd.SetArgs(append([]string{"dev", "metrics", "--dir", dir}, args...))
		err := cmd.Execute()
		return out.String(), err
	}
	if _, err := run(); err == nil || !strings.Contains(err.Error(), "no metrics recorded") || !strings.Contains(err.Error(), dir) {
		t.Errorf("dev metrics without a metrics.log = %v; want it to say none is recorded in %s", err, dir)
	}
	var log bytes.Buffer
	rec := metrics.NewRecorder(&log, func() time.Time { return time.UnixMilli(1796126400000) })
	for _, v := range []float64{3, 1} {
		if err := rec.Put(metrics.ActiveJobs, []string{"us-west-2"}, v); err != nil {
			t.Fatal(err)
		}
	}
	// Two API requests: a metric of counted events has its sum besides its latest value.
	for _, class := range []string{"2xx", "2xx"} {
		if err := rec.Put(metrics.APIRequests, []string{"GET /api/v1/jobs", class}, 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, devstack.MetricsFile), log.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := run("-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	want := `[
  {
    "metric": "ActiveJobs",
    "dimensions": {
      "Region": "us-west-2"
    },
    "value": 1,
    "unit": "Count",
    "at": "2026-12-01T12:00:00Z",
    "samples": 2
  },
  {
    "metric": "APIRequests",
    "dimensions": {
      "Route": "GET /api/v1/jobs",
      "StatusClass": "2xx"
    },
    "value": 1,
    "unit": "Count",
    "at": "2026-12-01T12:00:00Z",
    "samples": 2,
    "sum": 2
  }
]
`
	if out != want {
		t.Errorf("dev metrics -o json =\n%s\nwant\n%s", out, want)
	}
}
