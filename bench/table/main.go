// Command table keeps the current table at the top of BENCHMARKS.md: each benchmark `make bench`
// runs, its latest ratio against its floor, its goal, whether it meets it, when and where it was
// measured, and the command that measures it. The benchmarks are listed once, in benchmarks.go;
// scripts/bench.sh asks for them, runs each, and hands this command its output.
//
//	table steps [name…]             the named benchmarks (all when none), one a line:
//	                                name, what it measures and its command, tab-separated
//	table write -step name -out f   find the step's ratios in its output f and rewrite their rows
//	            [-err f] [-status n] [-at time] [-load l] [-doc BENCHMARKS.md]
//
// A step that failed, or whose ratio is not in its output, shows as "not measured (why)": the
// table never keeps an earlier figure for a row that was just run. Rows of steps not run keep
// theirs, with their own date.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fail(errors.New("usage: table steps [name…] | table write -step name -out file [flags]"))
	}
	var err error
	switch os.Args[1] {
	case "steps":
		err = printSteps(os.Args[2:])
	case "write":
		err = write(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: want steps or write", os.Args[1])
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "tidegate bench: %v\n", err)
	os.Exit(2)
}

func printSteps(names []string) error {
	chosen, err := choose(steps, names)
	if err != nil {
		return err
	}
	for _, s := range chosen {
		fmt.Printf("%s\t%s\t%s\n", s.Name, s.About, s.Command)
	}
	return nil
}

func write(args []string) error {
	fs := flag.NewFlagSet("write", flag.ContinueOnError)
	doc := fs.String("doc", "BENCHMARKS.md", "the file whose current table to rewrite")
	name := fs.String("step", "", "the benchmark that ran")
	out := fs.String("out", "", "the file holding what its command printed to stdout")
	errFile := fs.String("err", "", "the file holding what it printed to stderr, for why it failed")
	status := fs.Int("status", 0, "its command's exit status")
	at := fs.String("at", time.Now().Format(stamp), "when it started")
	load := fs.String("load", loadAverage(), "the 1-minute load average when it started")
	if err := fs.Parse(args); err != nil {
		return err
	}
	chosen, err := choose(steps, []string{*name})
	if err != nil {
		return err
	}
	s := chosen[0]
	output, err := os.ReadFile(*out)
	if err != nil {
		return err
	}
	var stderr []byte
	if *errFile != "" {
		if stderr, err = os.ReadFile(*errFile); err != nil {
			return err
		}
	}
	text, err := os.ReadFile(*doc)
	if err != nil {
		return err
	}
	run := Run{At: *at, Machine: fmt.Sprintf("%d cores %s/%s", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH), Load: *load}
	measured := Measure(s, string(output), *status, string(stderr))
	updated, err := Update(string(text), steps, run, measured)
	if err != nil {
		return fmt.Errorf("%s: %w", *doc, err)
	}
	if err := os.WriteFile(*doc, []byte(updated), 0o644); err != nil {
		return err
	}
	for _, m := range measured {
		fmt.Fprintf(os.Stderr, "tidegate bench: %s — %s\n", m.Row.Label(), m.Summary())
	}
	return nil
}

// stamp is how the table dates a measurement, as the history below it does.
const stamp = "2006-01-02 15:04"

// loadAverage is the 1-minute load average where Linux tells it: on a busy machine a figure and
// its floor both slow, but not always alike.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "unknown"
}
