package main

import (
	"errors"
	"fmt"
	"strings"
)

// The current table sits between these two lines of BENCHMARKS.md; nothing outside them changes.
const (
	beginMarker = "<!-- current: written by make bench -->"
	endMarker   = "<!-- end current -->"
)

const tableHead = "| Benchmark | Latest ratio | Goal | Met? | Measured | Command |\n|---|--:|--:|:-:|---|---|\n"

// notRunYet and none are what cells hold when there is no figure to put in them.
const (
	notRunYet = "not measured (not run yet)"
	none      = "—"
)

// Run is when and where a step ran.
type Run struct {
	At      string // "2006-01-02 15:04", local time
	Machine string // "2 cores linux/amd64"
	Load    string // the 1-minute load average as it started
}

func (r Run) String() string { return fmt.Sprintf("%s, %s, load %s", r.At, r.Machine, r.Load) }

// cells are a row's figures as the table shows them; its label, goal and command come from steps.
type cells struct{ ratio, met, measured string }

// Update is doc with the rows of its current table rewritten: those measured from this run, the
// others as the table last showed them. Goals and commands are always steps' own, and a row no
// longer in steps is dropped.
func Update(doc string, all []Step, run Run, measured []Measured) (string, error) {
	start, end, err := section(doc)
	if err != nil {
		return "", err
	}
	shown := shownRows(doc[start:end])
	fresh := make(map[string]Measured, len(measured))
	for _, m := range measured {
		fresh[m.Row.Label()] = m
	}
	var b strings.Builder
	b.WriteString("\n" + tableHead)
	for _, s := range all {
		for _, r := range s.Rows {
			c, ok := shown[r.Label()]
			if m, now := fresh[r.Label()]; now {
				c = measuredCells(m, run)
			} else if ok {
				c.met = recheck(r.Goal, c)
			} else {
				c = cells{ratio: notRunYet, met: none, measured: none}
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | `%s` |\n",
				r.Label(), c.ratio, r.Goal, c.met, c.measured, strings.ReplaceAll(s.Command, "|", `\|`))
		}
	}
	b.WriteString("\n")
	return doc[:start] + b.String() + doc[end:], nil
}

// section is where the current table's text begins (the line after the begin marker) and ends
// (the end marker's line).
func section(doc string) (start, end int, err error) {
	markers := fmt.Sprintf("the lines %q and %q", beginMarker, endMarker)
	begins, ends := linesAt(doc, beginMarker), linesAt(doc, endMarker)
	switch {
	case len(begins) == 0 || len(ends) == 0:
		return 0, 0, errors.New("no current table: it goes between " + markers)
	case len(begins) > 1 || len(ends) > 1:
		return 0, 0, errors.New("more than one current table: want " + markers + " once each")
	case ends[0] < begins[0]:
		return 0, 0, errors.New("the current table's end comes before its beginning: want " + markers + " in that order")
	}
	return begins[0] + len(beginMarker) + 1, ends[0], nil
}

// linesAt is where marker stands on a line of its own; quoted in prose, it is not a marker.
func linesAt(doc, marker string) []int {
	var at []int
	for i := 0; ; {
		j := strings.Index(doc[i:], marker)
		if j < 0 {
			return at
		}
		start, end := i+j, i+j+len(marker)
		if (start == 0 || doc[start-1] == '\n') && end < len(doc) && doc[end] == '\n' {
			at = append(at, start)
		}
		i = end
	}
}

// shownRows are the current table's rows by label.
func shownRows(text string) map[string]cells {
	rows := map[string]cells{}
	for _, line := range strings.Split(text, "\n") {
		if c, ok := splitRow(line); ok && len(c) == 6 && strings.HasPrefix(c[0], "`") {
			rows[c[0]] = cells{ratio: c[1], met: c[3], measured: c[4]}
		}
	}
	return rows
}

func measuredCells(m Measured, run Run) cells {
	if m.Why != "" {
		return cells{ratio: "not measured (" + m.Why + ")", met: none, measured: run.String()}
	}
	ratio := times(m.Ratio)
	return cells{ratio: ratio, met: met(m.Row.Goal, m.Ratio), measured: run.String()}
}

func met(g Goal, ratio float64) string {
	switch {
	case g.Op == NoGoal:
		return none
	case g.Met(ratio):
		return "yes"
	}
	return "**no**"
}

// recheck is a shown row's Met? against its goal as it is now, when its ratio is one figure;
// otherwise (a range carried over from the history, "not measured") what it showed.
func recheck(g Goal, c cells) string {
	if v, ok := leadingRatio(c.ratio); ok && ratioText.FindString(c.ratio) == c.ratio {
		return met(g, v)
	}
	return c.met
}
