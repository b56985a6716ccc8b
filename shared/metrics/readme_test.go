package metrics

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEListsEveryMetric: README's "Metrics and alarms" table has one row per metric of All,
// in its order, with its unit, dimensions and source.
func TestREADMEListsEveryMetric(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "| metric | unit | dimensions | from | what |\n|---|---|---|---|---|\n")
	if !ok {
		t.Fatal("README.md has no metrics table (| metric | unit | dimensions | from | what |)")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	rows := strings.Split(table, "\n")
	if len(rows) != len(All) {
		t.Errorf("README's metrics table has %d rows, metrics.All %d metrics", len(rows), len(All))
	}
	for i, m := range All {
		if i >= len(rows) {
			break
		}
		dims := "—"
		if len(m.Dimensions) > 0 {
			dims = strings.Join(m.Dimensions, ", ")
		}
		if m.Rollup {
			dims += " (and none)"
		}
		want := "| `" + m.Name + "` | " + string(m.Unit) + " | " + dims + " | " + m.Source + " | " + m.About + " |"
		if rows[i] != want {
			t.Errorf("README's metrics row %d is\n%s\nwant\n%s", i+1, rows[i], want)
		}
	}
}
