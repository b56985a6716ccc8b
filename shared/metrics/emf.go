package metrics

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
)

// maxValues is the most values one EMF line may carry for a metric (CloudWatch's limit).
const maxValues = 100

// Recorder writes metric data points as EMF lines to w, one line a Put (a Put of more values
// than one line takes writes several). Each line is written with one Write, so lines from
// goroutines sharing w never interleave. It is safe for concurrent use; a nil *Recorder records
// nothing, for code run without metrics.
type Recorder struct {
	w   io.Writer
	now func() time.Time
	mu  sync.Mutex
}

// NewRecorder writes to w, the function's log (os.Stdout in Lambda), stamping lines with now.
func NewRecorder(w io.Writer, now func() time.Time) *Recorder {
	return &Recorder{w: w, now: now}
}

// Put records values of m under dims, the values of m.Dimensions in their order. A mismatch of
// dimensions is a programming error, reported as one so a test finds it.
func (r *Recorder) Put(m Metric, dims []string, values ...float64) error {
	if r == nil || len(values) == 0 {
		return nil
	}
	if len(dims) != len(m.Dimensions) {
		return fmt.Errorf("metric %s takes %d dimensions (%v), given %d", m.Name, len(m.Dimensions), m.Dimensions, len(dims))
	}
	for chunk := range slices.Chunk(values, maxValues) {
		line, err := r.line(m, dims, chunk)
		if err != nil {
			return err
		}
		r.mu.Lock()
		_, err = r.w.Write(line)
		r.mu.Unlock()
		if err != nil {
			return fmt.Errorf("writing metric %s: %w", m.Name, err)
		}
	}
	return nil
}

// line is one EMF object: the _aws metadata naming the metric and its dimensions, the dimensions'
// values and the metric's value (an array for more than one), newline-terminated.
func (r *Recorder) line(m Metric, dims []string, values []float64) ([]byte, error) {
	doc := map[string]any{
		"_aws": map[string]any{
			"Timestamp": r.now().UnixMilli(),
			"CloudWatchMetrics": []any{map[string]any{
				"Namespace":  Namespace,
				"Dimensions": m.DimensionSets(),
				"Metrics":    []any{map[string]any{"Name": m.Name, "Unit": string(m.Unit)}},
			}},
		},
	}
	for i, d := range m.Dimensions {
		doc[d] = dims[i]
	}
	if len(values) == 1 {
		doc[m.Name] = values[0]
	} else {
		doc[m.Name] = values
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encoding metric %s: %w", m.Name, err)
	}
	return append(b, '\n'), nil
}

// DimensionSets are the dimension sets m is published under: its dimensions (never nil: EMF
// wants [[]] for a metric without any), and none besides for a rollup. An alarm on m names one.
func (m Metric) DimensionSets() [][]string {
	sets := [][]string{m.Dimensions}
	if m.Dimensions == nil {
		sets[0] = []string{}
	}
	if m.Rollup && len(m.Dimensions) > 0 {
		sets = append(sets, []string{})
	}
	return sets
}
