package main

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"
)

// report prints the table, each operation's growth and the monthly bill.
func report(w io.Writer, rows []row, took time.Duration) {
	fmt.Fprintf(w, "\n## Scale: %s, %d cores %s/%s, run took %s\n\n", time.Now().UTC().Format("2006-01-02 15:04"),
		runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, took.Round(time.Second))
	fmt.Fprintln(w, "| Operation | Input | Size | Time | Read units | Write units | AWS calls | Kubernetes calls | Queued jobs read |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %.1f | %.1f | %d | %d | %d |\n", r.op, r.input, thousands(r.n),
			r.took.Round(time.Millisecond), r.read, r.write, r.aws, r.kube, r.queueItems)
	}
	fmt.Fprintln(w, "\nGrowth: the least-squares slope of log(cost) on log(size) over the sizes measured, each")
	fmt.Fprintln(w, "operation against its own input (1 is linear, 0 flat; \"—\" where the cost is zero at some size).")
	fmt.Fprintln(w, "\n| Operation | Input | Sizes | Time | Read units | Write units | AWS calls | Kubernetes calls |")
	fmt.Fprintln(w, "|---|---|---|--:|--:|--:|--:|--:|")
	worst := 0.0
	for _, op := range ops(rows) {
		rs := byOp(rows, op)
		if len(rs) < 2 {
			continue
		}
		cells := []func(row) float64{
			func(r row) float64 { return r.took.Seconds() },
			func(r row) float64 { return r.read },
			func(r row) float64 { return r.write },
			func(r row) float64 { return float64(r.aws) },
			func(r row) float64 { return float64(r.kube) },
		}
		var out []string
		for _, c := range cells {
			s, ok := Slope(sizes(rs), values(rs, c))
			if !ok {
				out = append(out, "—")
				continue
			}
			worst = max(worst, s)
			out = append(out, fmt.Sprintf("%.2f", s))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", op, rs[0].input, sizeList(rs), strings.Join(out, " | "))
	}
	fmt.Fprintf(w, "\nThe steepest growth: %.2f (goal ≤ 1.0, no faster than linear; 1.2 allows the stand-ins' noise).\n", worst)
	bill(w, rows)
}

// Slope is the least-squares slope of log y on log x, and whether it is defined: at least two
// distinct x and every y above zero.
func Slope(x, y []float64) (float64, bool) {
	if len(x) < 2 || len(x) != len(y) {
		return 0, false
	}
	var sx, sy, sxx, sxy float64
	for i := range x {
		if x[i] <= 0 || y[i] <= 0 {
			return 0, false
		}
		lx, ly := math.Log(x[i]), math.Log(y[i])
		sx, sy, sxx, sxy = sx+lx, sy+ly, sxx+lx*lx, sxy+lx*ly
	}
	n := float64(len(x))
	d := n*sxx - sx*sx
	if d == 0 {
		return 0, false
	}
	return (n*sxy - sx*sy) / d, true
}

func ops(rows []row) []string {
	var out []string
	for _, r := range rows {
		if !slices.Contains(out, r.op) {
			out = append(out, r.op)
		}
	}
	return out
}

func byOp(rows []row, op string) []row {
	var out []row
	for _, r := range rows {
		if r.op == op {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b row) int { return a.n - b.n })
	return out
}

func sizes(rs []row) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = float64(r.n)
	}
	return out
}

func values(rs []row, f func(row) float64) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = f(r)
	}
	return out
}

func sizeList(rs []row) string {
	var s []string
	for _, r := range rs {
		s = append(s, thousands(r.n))
	}
	return strings.Join(s, ", ")
}

// thousands writes n with commas.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
