package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The files in testdata are what the commands printed: signing, hostplan, admission and policy
// from real runs of their go test commands; gotest-fail from a package whose benchmarks fail,
// log and write to stderr; coldstart, devstart and seedplan in the form their programs print,
// with figures from the history in BENCHMARKS.md; decodemem from a real run, its table of
// bodies shortened; calls from a real run.
func sample(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMetricFind(t *testing.T) {
	tests := []struct {
		file string
		m    Metric
		want float64
	}{
		{"signing.txt", Metric{"BenchmarkSignVsRawHMAC", "x-hmac"}, 0.9307},
		{"signing.txt", Metric{"BenchmarkSignVsRawHMAC", "ns/op"}, 1189},
		{"signing.txt", Metric{"BenchmarkSignVsRawHMAC", "allocs/op"}, 1},
		{"hostplan.txt", Metric{"BenchmarkPlan10k", "x-index"}, 1.883},
		{"hostplan.txt", Metric{"BenchmarkPlan20k", "x-index"}, 1.871},
		{"hostplan.txt", Metric{"BenchmarkPlan20k", "t20k/t10k"}, 1.885},
		{"hostplan.txt", Metric{"BenchmarkPlan20k", "index-t20k/t10k"}, 1.720},
		{"admission.txt", Metric{"BenchmarkDecide200k", "t200k/t100k"}, 2.119},
		{"admission.txt", Metric{"BenchmarkDecide200kShuffled", "t200k/t100k"}, 2.200},
		{"policy.txt", Metric{"BenchmarkCheckDeployment", "x-upstream"}, 11.14},
		{"policy.txt", Metric{"BenchmarkCheckBundle20", "x-upstream"}, 9.622},
		{"policy.txt", Metric{"BenchmarkWalkDeployment", "x-upstream"}, 2.571},
		{"policy.txt", Metric{"BenchmarkStraightDeployment", "x-straight"}, 1.045},
		{"policy.txt", Metric{"BenchmarkStraightBundle20", "x-straight"}, 0.832},
		// Logged after its result, and a sub-benchmark.
		{"gotest-fail.txt", Metric{"BenchmarkLog", "a/b"}, 1.5},
		{"gotest-fail.txt", Metric{"BenchmarkSub/x=1", "d/r"}, 0.02},
	}
	for _, tt := range tests {
		got, err := tt.m.Find(sample(t, tt.file))
		if err != nil || got != tt.want {
			t.Errorf("%+v.Find(%s) = %v, %v; want %v", tt.m, tt.file, got, err, tt.want)
		}
	}
}

func TestMetricFindSaysWhyNot(t *testing.T) {
	tests := []struct {
		name string
		out  string
		m    Metric
		want string
	}{
		{"a unit it does not report", sample(t, "policy.txt"), Metric{"BenchmarkCheckDeployment", "t200k/t100k"},
			"BenchmarkCheckDeployment reported no t200k/t100k"},
		{"a name that only begins others'", sample(t, "admission.txt"), Metric{"BenchmarkDecide", "t200k/t100k"},
			"BenchmarkDecide printed no result"},
		{"a floor without the ratio", sample(t, "admission.txt"), Metric{"BenchmarkDecide100k", "t200k/t100k"},
			"BenchmarkDecide100k reported no t200k/t100k"},
		{"failed on its first call", sample(t, "gotest-fail.txt"), Metric{"BenchmarkFail", "x-raw"},
			"failed: creating table: boom"},
		{"skipped, which go test keeps quiet about", sample(t, "gotest-fail.txt"), Metric{"BenchmarkSub/x=8", "d/r"},
			"BenchmarkSub/x=8 printed no result"},
		{"failed after its name, the next benchmark's figures not taken for its own",
			"BenchmarkX-2   \t--- FAIL: BenchmarkX-2\n    x_test.go:9: listing jobs: EOF\nBenchmarkY-2 \t 1\t 5 ns/op\t 2.0 x-list\n",
			Metric{"BenchmarkX", "x-list"}, "failed: listing jobs: EOF"},
		{"no output at all", "", Metric{"BenchmarkX", "x-list"}, "BenchmarkX printed no result"},
	}
	for _, tt := range tests {
		got, err := tt.m.Find(tt.out)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: %+v.Find = %v, %v; want the error %q", tt.name, tt.m, got, err, tt.want)
		}
	}
}

// A line another goroutine writes between a benchmark's name and its figures does not hide them.
func TestMetricFindPastInterleavedOutput(t *testing.T) {
	out := "BenchmarkNoopBeatVsRawList-2   \ttime=2026-11-30T07:58:00Z level=INFO msg=\"lease taken\"\n" +
		"       1\t179000000 ns/op\t       179.0 beat-ms\t         1.060 beat/raw\t   169.0 raw-list-ms\n" +
		"--- BENCH: BenchmarkNoopBeatVsRawList-2\n    bench_test.go:119: a new instance's first beat: 227ms at best\n"
	got, err := Metric{"BenchmarkNoopBeatVsRawList", "beat/raw"}.Find(out)
	if err != nil || got != 1.06 {
		t.Errorf("Find over interleaved output = %v, %v; want 1.06", got, err)
	}
}

func TestCellFind(t *testing.T) {
	tests := []struct {
		file string
		c    Cell
		want float64
	}{
		{"coldstart.txt", Cell{"api", 9}, 1.40},
		{"coldstart.txt", Cell{"dispatch", 9}, 0.81},
		{"coldstart.txt", Cell{"reconcile", 9}, 1.41},
		{"coldstart.txt", Cell{"webhook", 9}, 0.96},
		{"coldstart.txt", Cell{"authorizer", 9}, 0.99},
		{"devstart.txt", Cell{"make dev to healthy API", 4}, 1.20},
		{"seedplan.txt", Cell{"10000 (", 4}, 16475},
		{"decodemem.txt", Cell{"YAML decode", 4}, 24.29},
		{"decodemem.txt", Cell{"JSON decode", 4}, 12.41},
		{"decodemem.txt", Cell{"admission of a YAML body", 4}, 24.67},
		{"decodemem.txt", Cell{"admission of a JSON body", 4}, 14.18},
		{"calls.txt", Cell{"all AWS calls", 4}, 1.69},
		{"calls.txt", Cell{"cost of 1000 jobs", 4}, 1.09},
	}
	for _, tt := range tests {
		got, err := tt.c.Find(sample(t, tt.file))
		if err != nil || got != tt.want {
			t.Errorf("%+v.Find(%s) = %v, %v; want %v", tt.c, tt.file, got, err, tt.want)
		}
	}
}

func TestCellFindSaysWhyNot(t *testing.T) {
	tests := []struct {
		file string
		c    Cell
		want string
	}{
		{"seedplan-not-run.txt", Cell{"10000 (", 4}, `its "10000 (50000)" row gives "—" as the ratio`},
		{"coldstart.txt", Cell{"lambda", 6}, `its output has no "lambda" row`},
		{"coldstart.txt", Cell{"api", 11}, `its "api" row has no column 11`},
		{"signing.txt", Cell{"api", 6}, `its output has no "api" row`},
	}
	for _, tt := range tests {
		got, err := tt.c.Find(sample(t, tt.file))
		if err == nil || err.Error() != tt.want {
			t.Errorf("%+v.Find(%s) = %v, %v; want the error %q", tt.c, tt.file, got, err, tt.want)
		}
	}
}

func TestMeasure(t *testing.T) {
	coldstart, _ := choose(steps, []string{"coldstart"})
	policy, _ := choose(steps, []string{"policy"})
	devstart, _ := choose(steps, []string{"devstart"})
	tests := []struct {
		name   string
		step   Step
		out    string
		status int
		stderr string
		want   []string // each row's Summary
	}{
		{"all there", coldstart[0], sample(t, "coldstart.txt"), 0, "", []string{
			"1.40×, goal ≤ 2×: met", "0.81×, goal ≤ 2×: met", "1.41×, goal ≤ 2×: met", "0.96×, goal ≤ 2×: met", "0.99×, goal ≤ 2×: met",
		}},
		{"failed before its table, the reason on stderr", coldstart[0], "", 1,
			"coldstart: building api\ncoldstart: the runtime interface emulator is missing (run scripts/tools-aws.sh)\n", []string{
				"not measured (exit status 1: coldstart: the runtime interface emulator is missing (run scripts/tools-aws.sh))",
				"not measured (exit status 1: coldstart: the runtime interface emulator is missing (run scripts/tools-aws.sh))",
				"not measured (exit status 1: coldstart: the runtime interface emulator is missing (run scripts/tools-aws.sh))",
				"not measured (exit status 1: coldstart: the runtime interface emulator is missing (run scripts/tools-aws.sh))",
				"not measured (exit status 1: coldstart: the runtime interface emulator is missing (run scripts/tools-aws.sh))",
			}},
		{"failed, the reason on stdout", devstart[0],
			"scripts/bench-devstart.sh: line 16: ./bin/tidegate: No such file or directory\n", 1, "", []string{
				"not measured (exit status 1: scripts/bench-devstart.sh: line 16: ./bin/tidegate: No such file or directory)",
			}},
		{"went well but printed no table", coldstart[0], "", 0, "", []string{
			`not measured (its output has no "api" row)`, `not measured (its output has no "dispatch" row)`,
			`not measured (its output has no "reconcile" row)`, `not measured (its output has no "webhook" row)`,
			`not measured (its output has no "authorizer" row)`,
		}},
		{"one benchmark of four failed", policy[0],
			"BenchmarkCheckDeployment-2   \t   32023\t     32655 ns/op\t        12.23 x-upstream\t    7653 B/op\t      45 allocs/op\n" +
				"--- FAIL: BenchmarkCheckBundle20\n    bench_test.go:176: the benchmark's manifests are refused: [apps/v1 Deployment web]\n" +
				"BenchmarkStraightDeployment-2 \t   10000\t    209314 ns/op\t         0.9042 x-straight\t   21866 B/op\t     171 allocs/op\n" +
				"BenchmarkStraightBundle20-2   \t     232\t   5815583 ns/op\t         1.173 x-straight\t  257468 B/op\t    1876 allocs/op\n" +
				"FAIL\nexit status 1\nFAIL\tgithub.com/tidegate/tidegate/shared/policy\t3.104s\n",
			1, "FAIL\n", []string{
				"0.90×, goal ≤ 1×: met", "1.17×, goal ≤ 1×: NOT MET",
				"12.2×, no goal set", "not measured (failed: the benchmark's manifests are refused: [apps/v1 Deployment web])",
			}},
	}
	for _, tt := range tests {
		var got []string
		for _, m := range Measure(tt.step, tt.out, tt.status, tt.stderr) {
			got = append(got, m.Summary())
		}
		if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s: Measure(%s) gives\n%s\nwant\n%s", tt.name, tt.step.Name, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
		}
	}
}

func TestGoalMet(t *testing.T) {
	tests := []struct {
		goal  Goal
		ratio float64
		want  bool
	}{
		{atMost(2), 2.05, false},
		{atMost(2), 1.77, true},
		{atMost(2), 2, true},
		{atMost(1.3), 1.31, false},
		{atLeast(0.8), 0.82, true},
		{atLeast(0.8), 0.022, false},
		{atLeast(0.8), 0.8, true},
		{atLeast(100), 16475, true},
		{atLeast(100), 99.9, false},
		{Goal{}, 38, true},
	}
	for _, tt := range tests {
		if got := tt.goal.Met(tt.ratio); got != tt.want {
			t.Errorf("Goal %s: Met(%v) = %v, want %v", tt.goal, tt.ratio, got, tt.want)
		}
	}
}

func TestTimes(t *testing.T) {
	for r, want := range map[float64]string{0.0223: "0.022×", 0.82: "0.82×", 1.0: "1.00×", 1.883: "1.88×", 12.23: "12.2×", 104.4: "104×", 16475.2: "16,475×", 1234567: "1,234,567×"} {
		if got := times(r); got != want {
			t.Errorf("times(%v) = %q, want %q", r, got, want)
		}
	}
	for g, want := range map[Goal]string{atMost(2): "≤ 2×", atMost(1.3): "≤ 1.3×", atLeast(0.8): "≥ 0.8×", atLeast(100): "≥ 100×", {}: "none set"} {
		if got := g.String(); got != want {
			t.Errorf("Goal%+v.String() = %q, want %q", g, got, want)
		}
	}
}
