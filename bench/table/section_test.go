package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testSteps are two steps of one and two rows, as steps lists them.
var testSteps = func() []Step {
	s := []Step{
		{Name: "signing", Command: "go test -run '^$' -bench SignVsRawHMAC ./shared/signing/", Rows: []Row{
			{What: "sign ÷ HMAC", Goal: atMost(1.3), Find: Metric{"BenchmarkSignVsRawHMAC", "x-hmac"}},
		}},
		{Name: "delivery", Command: "go test -run '^$' -bench FanOutVsRawPost ./shared/delivery/", Rows: []Row{
			{What: "latency", Find: Metric{"BenchmarkFanOutVsRawPost", "delivered/raw"}},
			{What: "throughput", Goal: atLeast(0.8), Find: Metric{"BenchmarkFanOutVsRawPostThroughput/webhooks=1", "delivered/raw"}},
		}},
	}
	for i := range s {
		for j := range s[i].Rows {
			s[i].Rows[j].Step = s[i].Name
		}
	}
	return s
}()

var testRun = Run{At: "2026-12-01 09:30", Machine: "2 cores linux/amd64", Load: "1.52"}

// The text around the table, with look-alike rows and the markers quoted in prose, none of
// which the writer may touch.
const (
	before = "# Benchmarks\n\nThe table between `" + beginMarker + "` and its end is written by make bench.\n\n"
	after  = "\n## Webhook signing\n\n| Benchmark | Latest ratio | Goal | Met? | Measured | Command |\n" +
		"| `signing`: sign ÷ HMAC | 9.99× | ≤ 1.3× | **no** | long ago | `x` |\n\ntrailing text, no newline"
)

func doc(table string) string {
	return before + beginMarker + "\n" + table + endMarker + "\n" + after
}

func TestUpdateLeavesTheRestByteIdentical(t *testing.T) {
	in := doc("\nwhatever was here\n\n")
	out, err := Update(in, testSteps, testRun, Measure(testSteps[0], sample(t, "signing.txt"), 0, ""))
	if err != nil {
		t.Fatal(err)
	}
	head := before + beginMarker + "\n"
	tail := endMarker + "\n" + after
	if !strings.HasPrefix(out, head) || !strings.HasSuffix(out, tail) {
		t.Fatalf("Update changed text outside the markers:\n%s", out)
	}
	table := out[len(head) : len(out)-len(tail)]
	want := "\n" + tableHead +
		"| `signing`: sign ÷ HMAC | 0.93× | ≤ 1.3× | yes | 2026-12-01 09:30, 2 cores linux/amd64, load 1.52 | `go test -run '^$' -bench SignVsRawHMAC ./shared/signing/` |\n" +
		"| `delivery`: latency | not measured (not run yet) | none set | — | — | `go test -run '^$' -bench FanOutVsRawPost ./shared/delivery/` |\n" +
		"| `delivery`: throughput | not measured (not run yet) | ≥ 0.8× | — | — | `go test -run '^$' -bench FanOutVsRawPost ./shared/delivery/` |\n" +
		"\n"
	if diff := cmp.Diff(want, table); diff != "" {
		t.Errorf("Update's table (-want +got):\n%s", diff)
	}
	again, err := Update(out, testSteps, testRun, nil)
	if err != nil || again != out {
		t.Errorf("Update with nothing measured changed the document (err %v):\n%s", err, cmp.Diff(out, again))
	}
}

// shown is a table as an earlier run left it: signing measured, delivery carried over from the
// history, and a row of a benchmark no longer listed.
const shown = "\n" + tableHead +
	"| `signing`: sign ÷ HMAC | 1.04× | ≤ 1.3× | yes | 2026-11-30 03:49 (history below) | `old command` |\n" +
	"| `delivery`: latency | 38–43× | none set | — | 2026-11-30 06:02 (history below) | `c` |\n" +
	"| `delivery`: throughput | 0.022–0.027× | ≥ 0.8× | **no** | 2026-11-30 06:02 (history below) | `c` |\n" +
	"| `gone`: a benchmark since removed | 1.00× | ≤ 2× | yes | 2026-11-29 | `c` |\n\n"

func rowsOf(t *testing.T, d string) map[string]cells {
	t.Helper()
	start, end, err := section(d)
	if err != nil {
		t.Fatal(err)
	}
	return shownRows(d[start:end])
}

func TestUpdateRewritesOnlyTheStepRun(t *testing.T) {
	measured := Measure(testSteps[1], "BenchmarkFanOutVsRawPost-2 \t 5\t 2400000 ns/op\t 41.3 delivered/raw\n", 0, "")
	out, err := Update(doc(shown), testSteps, testRun, measured)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]cells{
		// Not run: as it was, with its own date.
		"`signing`: sign ÷ HMAC": {"1.04×", "yes", "2026-11-30 03:49 (history below)"},
		// Run: the ratio found, and the one not found, with no earlier figure left behind.
		"`delivery`: latency": {"41.3×", "—", testRun.String()},
		"`delivery`: throughput": {
			"not measured (BenchmarkFanOutVsRawPostThroughput/webhooks=1 printed no result)", "—", testRun.String(),
		},
	}
	if diff := cmp.Diff(want, rowsOf(t, out), cmp.AllowUnexported(cells{})); diff != "" {
		t.Errorf("rows after a delivery run (-want +got):\n%s", diff)
	}
	if !strings.Contains(out, "| `signing`: sign ÷ HMAC | 1.04× | ≤ 1.3× | yes | 2026-11-30 03:49 (history below) | `go test -run '^$' -bench SignVsRawHMAC ./shared/signing/` |\n") {
		t.Errorf("the row not run does not carry its current command:\n%s", out)
	}
}

func TestUpdateRechecksAShownRatioAgainstTheGoal(t *testing.T) {
	tighter := append([]Step(nil), testSteps...)
	tighter[0].Rows = []Row{{Step: "signing", What: "sign ÷ HMAC", Goal: atMost(1.02)}}
	out, err := Update(doc(shown), tighter, testRun, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows := rowsOf(t, out)
	if got := rows["`signing`: sign ÷ HMAC"].met; got != "**no**" {
		t.Errorf("1.04× against ≤ 1.02×: Met? = %q, want **no**", got)
	}
	if got := rows["`delivery`: throughput"].met; got != "**no**" {
		t.Errorf("a range carried over: Met? = %q, want it kept as **no**", got)
	}
}

func TestUpdateNeedsItsMarkers(t *testing.T) {
	tests := map[string]string{
		"none":            "# Benchmarks\n\nno table\n",
		"only quoted":     "see `" + beginMarker + "` and `" + endMarker + "`\n",
		"no end":          beginMarker + "\n| a |\n",
		"end first":       endMarker + "\n" + beginMarker + "\n",
		"twice":           doc("\n") + doc("\n"),
		"not on own line": "x " + beginMarker + "\n" + endMarker + "\n",
	}
	for name, d := range tests {
		if out, err := Update(d, testSteps, testRun, nil); err == nil {
			t.Errorf("Update of a document with markers %s = %q, want an error", name, out)
		}
	}
}

func TestStepsAreListedOnce(t *testing.T) {
	names, labels := map[string]bool{}, map[string]bool{}
	for _, s := range steps {
		if s.Name == "" || s.About == "" || s.Command == "" || len(s.Rows) == 0 {
			t.Errorf("step %+v lacks a name, a line of progress, a command or rows", s)
		}
		if names[s.Name] {
			t.Errorf("two steps named %q", s.Name)
		}
		names[s.Name] = true
		for _, r := range s.Rows {
			if r.Step != s.Name || r.Find == nil {
				t.Errorf("row %q of %s: step %q, finder %v", r.What, s.Name, r.Step, r.Find)
			}
			if labels[r.Label()] {
				t.Errorf("two rows labelled %q", r.Label())
			}
			labels[r.Label()] = true
			if strings.ContainsAny(r.Label(), "|\n") || strings.ContainsAny(s.Command, "\t\n") {
				t.Errorf("row %q or its command %q would break the table or scripts/bench.sh's reading of it", r.Label(), s.Command)
			}
		}
	}
}

func TestChoose(t *testing.T) {
	got, err := choose(steps, []string{"signing", "coldstart"})
	if err != nil || len(got) != 2 || got[0].Name != "signing" || got[1].Name != "coldstart" {
		t.Errorf("choose(signing, coldstart) = %v, %v; want those two in that order", got, err)
	}
	if all, err := choose(steps, nil); err != nil || len(all) != len(steps) {
		t.Errorf("choose() = %d steps, %v; want all %d", len(all), err, len(steps))
	}
	if _, err := choose(steps, []string{"signing", "sign"}); err == nil || !strings.Contains(err.Error(), "coldstart, devstart") {
		t.Errorf("choose(sign) = %v, want an error listing the names", err)
	}
}
