package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/term"
	"sigs.k8s.io/yaml"
)

// printer writes results: aligned tables for people, or the API's JSON (or the same as YAML) for
// scripts. Notes and progress go to err, so out stays clean for a pipe.
type printer struct {
	format   string // table, json or yaml
	out, err io.Writer
	color    bool // out is a terminal and colour was not turned off
	live     bool // err is a terminal: progress may redraw a line
	now      func() time.Time
}

// The output formats -o takes.
const (
	formatTable = "table"
	formatJSON  = "json"
	formatYAML  = "yaml"
)

func newPrinter(format string, out, err io.Writer, noColor bool) (*printer, error) {
	switch format {
	case formatTable, formatJSON, formatYAML:
	default:
		return nil, fmt.Errorf("-o %q: choose table, json or yaml", format)
	}
	return &printer{format: format, out: out, err: err, color: !noColor && isTerminal(out), live: isTerminal(err), now: time.Now}, nil
}

// isTerminal reports whether a stream is a terminal, where colour, redrawn lines and questions
// make sense.
func isTerminal(stream any) bool {
	f, ok := stream.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// emit writes v for scripts, or calls human to write it for people.
func (p *printer) emit(v any, human func()) error {
	switch p.format {
	case formatJSON:
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(p.out, "%s\n", b)
		return err
	case formatYAML:
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		y, err := yaml.JSONToYAML(b)
		if err != nil {
			return err
		}
		_, err = p.out.Write(y)
		return err
	}
	human()
	return nil
}

// scripted reports whether the output is for a program: then only the result goes to out.
func (p *printer) scripted() bool { return p.format != formatTable }

// note tells the person something beside the result, on err.
func (p *printer) note(format string, args ...any) { fmt.Fprintf(p.err, format+"\n", args...) }

// line writes one line of a human result to out.
func (p *printer) line(format string, args ...any) { fmt.Fprintf(p.out, format+"\n", args...) }

// cell is one table cell: its text, and a colour when the terminal shows them.
type cell struct {
	text  string
	color string // an ANSI SGR code such as "32"; "" for none
}

// table is rows of cells under a header, aligned by what a person sees, colour codes aside.
type table struct {
	header []string
	rows   [][]cell
}

// columnGap separates columns, as kubectl's tables do.
const columnGap = "   "

func (t *table) add(cells ...cell) { t.rows = append(t.rows, cells) }

// print writes the table to p.out; an empty cell shows as "-" so every column stays readable.
func (p *printer) print(t *table) {
	all := t.rows
	if t.header != nil {
		all = append([][]cell{plainCells(t.header)}, t.rows...)
	}
	var widths []int
	for _, r := range all {
		for i := range r {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			if r[i].text == "" {
				r[i].text = "-"
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(r[i].text))
		}
	}
	for _, r := range all {
		var b strings.Builder
		for i, c := range r {
			text := c.text
			if p.color && c.color != "" {
				text = "\x1b[" + c.color + "m" + text + "\x1b[0m"
			}
			b.WriteString(text)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c.text)) + columnGap)
			}
		}
		fmt.Fprintln(p.out, b.String())
	}
}

func plainCells(texts []string) []cell {
	out := make([]cell, len(texts))
	for i, s := range texts {
		out[i] = cell{text: s}
	}
	return out
}

func plain(s string) cell { return cell{text: s} }

// ANSI colours for states: green is done well, red went wrong, yellow waits, cyan works.
const (
	colorGreen  = "32"
	colorRed    = "31"
	colorYellow = "33"
	colorCyan   = "36"
)

// stateCell colours a job's, app's or delivery's state.
func stateCell(state string) cell {
	switch state {
	case "succeeded", "live":
		return cell{state, colorGreen}
	case "failed", "cancelled":
		return cell{state, colorRed}
	case "queued", "pending", "deploying", "dispatching":
		return cell{state, colorYellow}
	case "running":
		return cell{state, colorCyan}
	}
	return cell{text: state}
}

// age is how long ago t was, in kubectl's terse style: 45s, 12m, 5h, 3d.
func (p *printer) age(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := p.now().Sub(t)
	switch {
	case d < 0:
		return "0s"
	case d < 2*time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < 2*time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// when writes a time for people: local, to the second.
func when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// kv prints "Key:   value" lines aligned, for one resource's details.
func (p *printer) kv(pairs ...[2]string) {
	width := 0
	for _, kv := range pairs {
		width = max(width, utf8.RuneCountInString(kv[0]))
	}
	for _, kv := range pairs {
		if kv[1] == "" {
			continue
		}
		fmt.Fprintf(p.out, "%s:%s%s\n", kv[0], strings.Repeat(" ", width-utf8.RuneCountInString(kv[0])+2), kv[1])
	}
}
