package devstack

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/metrics"
)

// TestMetricsLogUnderConcurrentWrites: the functions' goroutines share the log; every line they
// write is read back whole, across the file set aside at the limit, and the disk holds at most
// two files' worth.
func TestMetricsLogUnderConcurrentWrites(t *testing.T) {
	dir := t.TempDir()
	// 80 lines of about 190 bytes fill one file and part of the next.
	const limit = 10 << 10
	l, err := openMetricsLog(dir, limit)
	if err != nil {
		t.Fatal(err)
	}
	rec := metrics.NewRecorder(l, time.Now)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for range 10 {
				if err := rec.Put(metrics.ActiveJobs, []string{DevRegions[w%2]}, float64(w)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	points, err := ReadMetrics(dir)
	if err != nil {
		t.Fatalf("ReadMetrics = %v", err)
	}
	if len(points) != 80 {
		t.Errorf("read %d points of 80 written", len(points))
	}
	for _, name := range []string{MetricsFile, MetricsFile + ".1"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() > limit {
			t.Errorf("%s: %v, size past the limit %d", name, err, limit)
		}
	}

	// Past two files' worth, the oldest lines go.
	l, err = openMetricsLog(dir, 1<<10)
	if err != nil {
		t.Fatal(err)
	}
	rec = metrics.NewRecorder(l, time.Now)
	for i := range 100 {
		if err := rec.Put(metrics.QueuedJobs, []string{"us-east-1"}, float64(i)); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	points, err = ReadMetrics(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(points); n == 0 || n >= 100 || points[n-1].Values[0] != 99 {
		t.Errorf("after 100 lines in 1 KiB files: %d points, the last %v; want fewer than 100 ending with 99", n, points[n-1].Values)
	}
}

// TestMetricsLogBeginsAfresh: a stack's metrics are its own, not the last run's.
func TestMetricsLogBeginsAfresh(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{MetricsFile, MetricsFile + ".1"} {
		line := `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"Tidegate","Dimensions":[[]],"Metrics":[{"Name":"BeatDuration","Unit":"Milliseconds"}]}]},"BeatDuration":1}` + "\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(line), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l, err := openMetricsLog(dir, metricsLimit)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if points, err := ReadMetrics(dir); err != nil || len(points) != 0 {
		t.Errorf("ReadMetrics after a new start = %d points, %v; want none", len(points), err)
	}
}

// TestReadMetricsWithoutAFile: no metrics file says why there may be none; a line half written
// as it is read waits for the next read.
func TestReadMetricsWithoutAFile(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadMetrics(dir); !errors.Is(err, ErrNoMetrics) {
		t.Errorf("ReadMetrics(empty folder) = %v, want ErrNoMetrics", err)
	}
	half := `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namesp`
	if err := os.WriteFile(filepath.Join(dir, MetricsFile), []byte(half), 0o600); err != nil {
		t.Fatal(err)
	}
	if points, err := ReadMetrics(dir); err != nil || len(points) != 0 {
		t.Errorf("ReadMetrics(a half-written line) = %v, %v; want no points and no error", points, err)
	}
}
