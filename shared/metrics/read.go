package metrics

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Point is one metric's data from one EMF line, as CloudWatch would read it.
type Point struct {
	Metric     Metric
	Dimensions map[string]string
	Values     []float64
	// At is when it was recorded: the line's _aws.Timestamp, to the millisecond.
	At time.Time
}

// Read finds the EMF lines among a log's lines (others, such as the function's own JSON log
// records, are passed over) and answers their points. A line that claims to be EMF but is not
// well formed, or names a metric, unit or dimension set All does not have, is an error: CloudWatch
// would drop it or publish a metric no alarm or dashboard watches.
func Read(log []byte) ([]Point, error) {
	var out []Point
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if !bytes.Contains(line, []byte(`"_aws"`)) {
			continue
		}
		ps, err := readLine(line)
		if err != nil {
			return nil, fmt.Errorf("log line %d: %w", n, err)
		}
		out = append(out, ps...)
	}
	return out, sc.Err()
}

type emfLine struct {
	AWS struct {
		Timestamp         int64 `json:"Timestamp"`
		CloudWatchMetrics []struct {
			Namespace  string     `json:"Namespace"`
			Dimensions [][]string `json:"Dimensions"`
			Metrics    []struct {
				Name string `json:"Name"`
				Unit string `json:"Unit"`
			} `json:"Metrics"`
		} `json:"CloudWatchMetrics"`
	} `json:"_aws"`
}

func readLine(line []byte) ([]Point, error) {
	var meta emfLine
	if err := json.Unmarshal(line, &meta); err != nil {
		return nil, fmt.Errorf("not an EMF object: %w", err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		return nil, err
	}
	if meta.AWS.Timestamp <= 0 {
		return nil, fmt.Errorf("no _aws.Timestamp")
	}
	var out []Point
	for _, d := range meta.AWS.CloudWatchMetrics {
		if d.Namespace != Namespace {
			return nil, fmt.Errorf("namespace %q, want %q", d.Namespace, Namespace)
		}
		for _, md := range d.Metrics {
			p, err := readPoint(md.Name, md.Unit, d.Dimensions, fields)
			if err != nil {
				return nil, err
			}
			p.At = time.UnixMilli(meta.AWS.Timestamp).UTC()
			out = append(out, p)
		}
	}
	return out, nil
}

func readPoint(name, unit string, dimSets [][]string, fields map[string]json.RawMessage) (Point, error) {
	m, ok := Named(name)
	if !ok {
		return Point{}, fmt.Errorf("metric %q is not one of metrics.All", name)
	}
	if unit != string(m.Unit) {
		return Point{}, fmt.Errorf("metric %s in %q, want %q", name, unit, m.Unit)
	}
	if want := m.DimensionSets(); !slices.EqualFunc(dimSets, want, slices.Equal) {
		return Point{}, fmt.Errorf("metric %s under dimensions %v, want %v", name, dimSets, want)
	}
	p := Point{Metric: m, Dimensions: map[string]string{}}
	for _, d := range m.Dimensions {
		var v string
		if err := json.Unmarshal(fields[d], &v); err != nil || v == "" {
			return Point{}, fmt.Errorf("metric %s: dimension %s has no string value", name, d)
		}
		p.Dimensions[d] = v
	}
	raw := fields[name]
	var one float64
	if err := json.Unmarshal(raw, &one); err == nil {
		p.Values = []float64{one}
		return p, nil
	}
	if err := json.Unmarshal(raw, &p.Values); err != nil || len(p.Values) == 0 || len(p.Values) > maxValues {
		return Point{}, fmt.Errorf("metric %s: value %s is neither a number nor 1 to %d numbers", name, raw, maxValues)
	}
	return p, nil
}
