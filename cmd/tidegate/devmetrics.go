package main

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tidegate/tidegate/shared/dev/devstack"
	"github.com/tidegate/tidegate/shared/metrics"
)

func devMetricsCmd(dir *string) *cobra.Command {
	var output string
	var noColor bool
	cmd := &cobra.Command{
		Use:   "metrics",
		Short: "Show the latest value of each metric the dev stack's functions recorded, as CloudWatch would get it",
		Long: `Reads the EMF lines the dev stack's functions wrote to metrics.log in its folder, as CloudWatch
reads them from the functions' logs in AWS, and shows each metric's latest value under each set
of its dimensions, with when it was recorded: what an alarm on it would see now. For a count
(requests, dispatches, webhook attempts) it adds the sum of every value recorded, what the
dashboard's Sum shows, as each request or drain records its own.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := newPrinter(output, cmd.OutOrStdout(), cmd.ErrOrStderr(), noColor || os.Getenv(envNoColor) != "")
			if err != nil {
				return err
			}
			points, err := devstack.ReadMetrics(*dir)
			if err != nil {
				return err
			}
			if _, err := devstack.ReadState(*dir); errors.Is(err, devstack.ErrNotRunning) {
				p.note("tidegate dev is not running: these are what its last run recorded")
			}
			latest := metrics.Newest(points)
			if len(latest) == 0 && !p.scripted() {
				p.note("no metrics recorded yet: the functions record theirs as they run (a beat, a drain, a request)")
				return nil
			}
			return p.emit(latestJSON(latest), func() { p.print(latestTable(latest, p.age)) })
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", formatTable, "table, json or yaml")
	cmd.Flags().BoolVar(&noColor, "no-color", false, "no colour, even on a terminal (also "+envNoColor+")")
	return cmd
}

// latestTable is one row a series: the metric, its dimensions as Name=value in the metric's
// order, the latest value and unit, for a metric of counted events the sum of all it recorded
// (what the dashboard shows of it; its latest value is only its last request's or drain's), how
// many values it recorded, and when the latest was.
func latestTable(latest []metrics.Latest, age func(time.Time) string) *table {
	t := &table{header: []string{"METRIC", "DIMENSIONS", "VALUE", "UNIT", "SUM", "SAMPLES", "RECORDED", "AGE"}}
	for _, l := range latest {
		var dims []string
		for _, d := range l.Metric.Dimensions {
			dims = append(dims, d+"="+l.Dimensions[d])
		}
		sum := "-"
		if l.Metric.Summed {
			sum = strconv.FormatFloat(l.Sum, 'f', -1, 64)
		}
		t.add(plain(l.Metric.Name), plain(strings.Join(dims, " ")), plain(strconv.FormatFloat(l.Value, 'f', -1, 64)),
			plain(string(l.Metric.Unit)), plain(sum), plain(strconv.Itoa(l.Samples)), plain(when(l.At)), plain(age(l.At)))
	}
	return t
}

// latestRow is a series' latest value for scripts.
type latestRow struct {
	Metric     string            `json:"metric"`
	Dimensions map[string]string `json:"dimensions"`
	Value      float64           `json:"value"`
	Unit       string            `json:"unit"`
	At         time.Time         `json:"at"`
	Samples    int               `json:"samples"`
	// Sum is set for a metric of counted events (metrics.Metric.Summed).
	Sum *float64 `json:"sum,omitempty"`
}

func latestJSON(latest []metrics.Latest) []latestRow {
	out := make([]latestRow, 0, len(latest))
	for _, l := range latest {
		out = append(out, latestRow{Metric: l.Metric.Name, Dimensions: l.Dimensions, Value: l.Value, Unit: string(l.Metric.Unit), At: l.At,
			Samples: l.Samples})
		if l.Metric.Summed {
			out[len(out)-1].Sum = &l.Sum
		}
	}
	return out
}
