package main

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Finder finds one ratio in what a benchmark's command printed to stdout.
type Finder interface {
	Find(out string) (float64, error)
}

// Metric is a figure on a Go benchmark's result line, such as
//
//	BenchmarkCheckDeployment-2   32023   32655 ns/op   12.23 x-upstream   7653 B/op   45 allocs/op
//
// where Unit is what the benchmark named it in b.ReportMetric (or ns/op, B/op, allocs/op).
type Metric struct {
	// Bench is the benchmark's name as go test prints it, sub-benchmarks after a slash, without
	// the -GOMAXPROCS suffix.
	Bench string
	Unit  string
}

// resultFigures is a result's figures after its name: the iterations, then value-unit pairs.
var resultFigures = regexp.MustCompile(`(?:^|\s)\d+\s+([0-9.e+-]+ ns/op\b.*)`)

// nextEntry is where go test's account of the next benchmark, or of the package, begins.
var nextEntry = regexp.MustCompile(`(?m)^(?:Benchmark|--- |PASS$|FAIL|ok\s)`)

func (m Metric) Find(out string) (float64, error) {
	name := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(m.Bench) + `(?:-\d+)?(?:\s|$)`)
	loc := name.FindStringIndex(out)
	if loc == nil {
		if note := outcome(out, m.Bench); note != nil {
			return 0, note
		}
		return 0, fmt.Errorf("%s printed no result", m.Bench)
	}
	// The figures follow the name on its line, unless the benchmark or another goroutine wrote
	// first; either way they come before the next benchmark's name.
	rest := out[loc[1]-1:]
	if next := nextEntry.FindStringIndex(rest[1:]); next != nil {
		rest = rest[:next[0]+1]
	}
	figures := resultFigures.FindStringSubmatch(rest)
	if figures == nil {
		if note := outcome(out, m.Bench); note != nil {
			return 0, note
		}
		return 0, fmt.Errorf("%s printed no result", m.Bench)
	}
	f := strings.Fields(figures[1])
	for i := 0; i+1 < len(f); i += 2 {
		if f[i+1] == m.Unit {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return 0, fmt.Errorf("%s reported %s as %q", m.Bench, m.Unit, f[i])
			}
			return v, nil
		}
	}
	return 0, fmt.Errorf("%s reported no %s", m.Bench, m.Unit)
}

// goOutcome is what go test said of a benchmark it skipped or failed.
type goOutcome struct{ verdict, message string }

func (o *goOutcome) Error() string {
	if o.message == "" {
		return o.verdict
	}
	return o.verdict + ": " + o.message
}

// outcome is go test's "--- SKIP" or "--- FAIL" for bench or a benchmark it is under, with the
// first line logged beneath it; nil when there is none. A benchmark that fails on its first call
// has its verdict on a line of its own, one that fails later after its name; one that skips has
// none unless go test runs with -v.
func outcome(out, bench string) error {
	for name := bench; name != ""; {
		for _, verdict := range []string{"SKIP", "FAIL"} {
			re := regexp.MustCompile(`(?m)(?:^|\s)--- ` + verdict + `: ` + regexp.QuoteMeta(name) + `(?:-\d+)?\s*\n(?:\s+\S+\.go:\d+: (.*))?`)
			if m := re.FindStringSubmatch(out); m != nil {
				word := map[string]string{"SKIP": "skipped", "FAIL": "failed"}[verdict]
				return &goOutcome{verdict: word, message: strings.TrimSpace(m[1])}
			}
		}
		i := strings.LastIndex(name, "/")
		if i < 0 {
			break
		}
		name = name[:i]
	}
	return nil
}

// Cell is a ratio in a markdown row a program prints: the row whose first cell begins with
// First, in its Col-th cell (from 1), as in "| api | 33.6 MiB | … | 2.05× | …".
type Cell struct {
	First string
	Col   int
}

func (c Cell) Find(out string) (float64, error) {
	for _, line := range strings.Split(out, "\n") {
		cells, ok := splitRow(line)
		if !ok || !strings.HasPrefix(cells[0], c.First) {
			continue
		}
		if c.Col > len(cells) {
			return 0, fmt.Errorf("its %q row has no column %d", cells[0], c.Col)
		}
		v, ok := leadingRatio(cells[c.Col-1])
		if !ok {
			return 0, fmt.Errorf("its %q row gives %q as the ratio", cells[0], cells[c.Col-1])
		}
		return v, nil
	}
	return 0, fmt.Errorf("its output has no %q row", c.First)
}

// splitRow is a markdown table row's cells, trimmed; a \| inside a cell is not a border.
func splitRow(line string) ([]string, bool) {
	line = strings.TrimSpace(line)
	if len(line) < 2 || line[0] != '|' || line[len(line)-1] != '|' {
		return nil, false
	}
	var cells []string
	var cell strings.Builder
	for i := 1; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cell.WriteString(`\|`)
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(line[i])
		}
	}
	return cells, true
}

// ratioText is a cell that begins with one ratio, bold or not: "2.05×", "**0.82×**", "16475× (under goal)".
var ratioText = regexp.MustCompile(`^\**([0-9][0-9,]*(?:\.[0-9]+)?)×`)

func leadingRatio(cell string) (float64, bool) {
	m := ratioText.FindStringSubmatch(cell)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
	return v, err == nil
}

// Measured is one row's result from one run of its step.
type Measured struct {
	Row   Row
	Ratio float64
	// Why is why the ratio was not measured; empty when it was.
	Why string
}

// Measure finds each of step's ratios in out, what its command printed to stdout. A ratio that is
// there counts even when the command then failed (one benchmark of several failing); one that is
// not says why, from go test's own account or else the command's exit status and last word on
// stderr (on stdout when stderr is empty: scripts/bench-devstart.sh prints the log of what failed).
func Measure(step Step, out string, status int, stderr string) []Measured {
	var ms []Measured
	for _, r := range step.Rows {
		v, err := r.Find.Find(out)
		if err == nil {
			ms = append(ms, Measured{Row: r, Ratio: v})
			continue
		}
		why := err.Error()
		var said *goOutcome
		if status != 0 && !errors.As(err, &said) {
			why = fmt.Sprintf("exit status %d", status)
			if last := lastLine(stderr); last != "" {
				why += ": " + last
			} else if last := lastLine(out); last != "" {
				why += ": " + last
			}
		}
		ms = append(ms, Measured{Row: r, Why: oneLine(why)})
	}
	return ms
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// whyLength bounds a reason in the table; the full account is in the run's own output.
const whyLength = 120

// oneLine makes why fit a table cell: one line, no borders, not too long.
func oneLine(why string) string {
	why = strings.Join(strings.Fields(why), " ")
	why = strings.ReplaceAll(why, "|", "/")
	if r := []rune(why); len(r) > whyLength {
		why = string(r[:whyLength-1]) + "…"
	}
	return why
}

// Summary is the row's result in a line of progress.
func (m Measured) Summary() string {
	if m.Why != "" {
		return "not measured (" + m.Why + ")"
	}
	s := times(m.Ratio)
	if m.Row.Goal.Op == NoGoal {
		return s + ", no goal set"
	}
	return fmt.Sprintf("%s, goal %s: %s", s, m.Row.Goal, map[bool]string{true: "met", false: "NOT MET"}[m.Row.Goal.Met(m.Ratio)])
}
