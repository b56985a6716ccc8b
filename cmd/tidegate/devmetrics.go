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
of its dimensions, with when it was recorded: what an alarm on it would see now.`,
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
// order, the value and unit, and when it was recorded.
func latestTable(latest []metrics.Latest, age func(time.Time) string) *table {
	t := &table{header: []string{"METRIC", "DIMENSIONS", "VALUE", "UNIT", "RECORDED", "AGE"}}
	for _, l := range latest {
		var dims []string
		for _, d := range l.Metric.Dimensions {
			dims = append(dims, d+"="+l.Dimensions[d])
		}
		t.add(plain(l.Metric.Name), plain(strings.Join(dims, " ")), plain(strconv.FormatFloat(l.Value, 'f', -1, 64)),
			plain(string(l.Metric.Unit)), plain(when(l.At)), plain(age(l.At)))
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
}

func latestJSON(latest []metrics.Latest) []latestRow {
	out := make([]latestRow, 0, len(latest))
	for _, l := range latest {
		out = append(out, latestRow{Metric: l.Metric.Name, Dimensions: l.Dimensions, Value: l.Value, Unit: string(l.Metric.Unit), At: l.At})
	}
	return out
}
