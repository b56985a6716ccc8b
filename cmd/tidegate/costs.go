package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
)

func costsCmd(s *session) *cobra.Command {
	var groupBy, from, to string
	cmd := &cobra.Command{
		Use:   "costs",
		Short: "Sum the cost estimates of your jobs that ended in a range, by tenant, namespace, array or workflow, or label",
		Long: "Sums the cost estimate kept on each job that ended in [--from, --to) (the last 30 days by default):\n" +
			"each node its pods ran on, at the node's whole price per hour, for the time they ran there.\n" +
			"INCOMPLETE counts jobs whose estimate lacks a node's price.",
		Example: "  tidegate costs --group-by namespace --from 2026-11-01T00:00:00Z --to 2026-12-01T00:00:00Z\n" +
			"  tidegate costs --group-by label:team -o json",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, c, err := s.open(cmd)
			if err != nil {
				return err
			}
			costs, err := c.Costs(cmd.Context(), groupBy, from, to)
			if err != nil {
				return err
			}
			return p.emit(costs, func() {
				t := &table{header: []string{"GROUP", "JOBS", "INCOMPLETE", "COST (" + costs.Currency + ")"}}
				for _, g := range costs.Groups {
					key := g.Key
					if key == "" {
						key = "(none)"
					}
					t.add(plain(key), plain(strconv.Itoa(g.Jobs)), plain(strconv.Itoa(g.Incomplete)), plain(fmt.Sprintf("%.4f", g.Total)))
				}
				t.add(plain("TOTAL"), plain(""), plain(""), plain(fmt.Sprintf("%.4f", costs.Total)))
				p.print(t)
				if costs.Truncated {
					p.note("only the newest %d jobs were read; narrow --from and --to for a full sum", costs.JobsRead)
				}
			})
		},
	}
	s.addFlags(cmd.PersistentFlags())
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletions("table", "json", "yaml"))
	cmd.Flags().StringVar(&groupBy, "group-by", "tenant", "tenant, namespace, group (each array's or workflow's jobs summed) or label:KEY")
	cmd.Flags().StringVar(&from, "from", "", "start of the range of end times, RFC 3339 (default 30 days before --to)")
	cmd.Flags().StringVar(&to, "to", "", "end of the range, excluded, RFC 3339 (default now)")
	_ = cmd.RegisterFlagCompletionFunc("group-by", fixedCompletions("tenant", "namespace", "label:"))
	return cmd
}
