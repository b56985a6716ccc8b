package devstack

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/tidegate/tidegate/shared/metrics"
)

// MetricsFile is the file in the dev folder that the functions' EMF lines go to, as they go to
// the functions' logs in Lambda; `tidegate dev metrics` reads it back.
const MetricsFile = "metrics.log"

// metricsLimit bounds metrics.log, which is then kept as metrics.log.1 and begun again, so a
// stack left running holds at most twice this on disk. An EMF line is 180 to 240 bytes (measured
// on TestPolicyPassThrough's stack). An idle stack writes three a beat (the beat's two timings and
// the webhook sweep's age), about 120 bytes a second at the default 5 s beat: 8 MiB is some 19
// hours of it. A job adds a dozen or so (its requests, the drains' four gauges, its outcome and
// timings), so a job a second fills 8 MiB in about an hour, long after every series has written
// its latest; and `tidegate dev metrics` reads 16 MiB in well under a second.
const metricsLimit = 8 << 20

// ErrNoMetrics is what ReadMetrics answers when the dev folder holds no metrics.
var ErrNoMetrics = errors.New("no metrics recorded")

// metricsLog is metrics.log: Writes from the functions' goroutines are appended whole, one after
// another, and the file is set aside as metrics.log.1 once it would pass limit.
type metricsLog struct {
	mu    sync.Mutex
	path  string
	limit int64
	f     *os.File
	size  int64
}

// openMetricsLog begins dir's metrics log afresh: a stack's metrics are its own, and a value left
// by the last run would read as this one's.
func openMetricsLog(dir string, limit int64) (*metricsLog, error) {
	path := filepath.Join(dir, MetricsFile)
	if err := os.Remove(path + ".1"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("removing the last run's metrics: %w", err)
	}
	l := &metricsLog{path: path, limit: limit}
	if err := l.begin(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *metricsLog) begin() error {
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("opening the metrics log: %w", err)
	}
	l.f, l.size = f, 0
	return nil
}

// Write appends p, a whole EMF line as metrics.Recorder writes one, setting the file aside first
// when p would take it past its limit.
func (l *metricsLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.size > 0 && l.size+int64(len(p)) > l.limit {
		if err := l.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	return n, err
}

func (l *metricsLog) rotate() error {
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("closing the metrics log: %w", err)
	}
	if err := os.Rename(l.path, l.path+".1"); err != nil {
		return fmt.Errorf("setting the metrics log aside: %w", err)
	}
	return l.begin()
}

// Close closes the file; the stack calls it once its functions have stopped.
func (l *metricsLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}

// ReadMetrics reads the points the dev stack kept in dir, the set-aside file's before the
// current one's, as metrics.Read reads a function's log. With no metrics file there it answers
// ErrNoMetrics, saying why there may be none.
func ReadMetrics(dir string) ([]metrics.Point, error) {
	path := filepath.Join(dir, MetricsFile)
	// The current file first: set aside between the two reads, it is read again as the older
	// one, where the other order would miss it.
	current, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w in %s: no `tidegate dev` has run with --dir %s, or it has not started yet", ErrNoMetrics, path, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("reading dev metrics: %w", err)
	}
	older, err := os.ReadFile(path + ".1")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading dev metrics: %w", err)
	}
	points, err := metrics.Read(append(wholeLines(older), wholeLines(current)...))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return points, nil
}

// wholeLines is b up to its last newline: a line being written as it was read is left for the
// next read.
func wholeLines(b []byte) []byte {
	return b[:bytes.LastIndexByte(b, '\n')+1]
}
