package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
)

func queueCmd(s *session) *cobra.Command {
	return apiGroup(s, "queue", "See the job queue of each region", &cobra.Command{
		Use:   "stats",
		Short: "Count your live batch jobs per region and status, the spot-gated ones, each region's capacity in use, and your long-running jobs apart",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, c, err := s.open(cmd)
			if err != nil {
				return err
			}
			st, err := c.QueueStats(cmd.Context())
			if err != nil {
				return err
			}
			return p.emit(st, func() {
				t := &table{header: []string{"REGION", "QUEUED", "DISPATCHING", "PENDING", "RUNNING", "SPOT-GATED", "CAPACITY IN USE", "LONG-RUNNING"}}
				for _, r := range st.Regions {
					capacity := strconv.Itoa(r.CapacityInUse)
					if r.CapacityLimit > 0 {
						capacity = fmt.Sprintf("%d of %d", r.CapacityInUse, r.CapacityLimit)
					}
					t.add(plain(r.Region), plain(strconv.Itoa(r.Counts["queued"])), plain(strconv.Itoa(r.Counts["dispatching"])),
						plain(strconv.Itoa(r.Counts["pending"])), plain(strconv.Itoa(r.Counts["running"])), plain(strconv.Itoa(r.Gated)), plain(capacity),
						plain(longRunning(r.LongRunning.Counts)))
				}
				p.print(t)
			})
		},
	})
}

// longRunning says how many long-running jobs there are, and how many of them run: "0", or
// "3 (2 running)".
func longRunning(counts map[string]int) string {
	total := 0
	for _, n := range counts {
		total += n
	}
	if total == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (%d running)", total, counts["running"])
}
