package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tidegate/tidegate/shared/apiclient"
)

// jobsWhyCmd prints what was decided about a job, oldest first, and why it waits now.
func jobsWhyCmd(s *session) *cobra.Command {
	return jobCmd(s, "why ID", "Say what Tidegate decided about a job, and from what: admissions, waits, evictions, regions, retries",
		func(cmd *cobra.Command, p *printer, c *apiclient.Client, id string) error {
			j, err := c.Job(cmd.Context(), id)
			if err != nil {
				return err
			}
			ds, err := c.JobDecisions(cmd.Context(), id)
			if err != nil {
				return err
			}
			slices.Reverse(ds) // oldest first, as a story reads
			return p.emit(apiclient.Items[apiclient.Decision]{Items: ds}, func() {
				t := &table{header: []string{"WHEN", "DECISION", "REASON", "WHERE", "FROM"}}
				for _, d := range ds {
					t.add(plain(p.age(d.At)), plain(d.Kind), plain(d.Reason), plain(where(d)), plain(from(d)))
				}
				p.print(t)
				if j.PendingReason != "" {
					fmt.Fprintf(cmd.OutOrStdout(), "\nnow: %s, waiting: %s", j.Status, j.PendingReason)
					if j.PendingResource != "" {
						fmt.Fprintf(cmd.OutOrStdout(), " (short of %s)", j.PendingResource)
					}
					fmt.Fprintln(cmd.OutOrStdout())
				}
			})
		})
}

// where is the region and flavor a decision was made on.
func where(d apiclient.Decision) string {
	return strings.Trim(d.Region+"/"+d.Flavor, "/")
}

// from is what a decision was made from: its tenant's quota standing, the price seen, the
// resource lacked, the jobs evicted, the retry rule.
func from(d apiclient.Decision) string {
	var parts []string
	for _, r := range slices.Sorted(maps.Keys(d.Quota)) {
		parts = append(parts, fmt.Sprintf("%s %s of %s", r, d.Quota[r].Held, d.Quota[r].Nominal))
	}
	if d.Resource != "" {
		parts = append(parts, "short of "+d.Resource)
	}
	if d.Price != nil && d.Price.ObservedPrice != nil {
		parts = append(parts, fmt.Sprintf("%s at %g, cap %g", d.Price.InstanceType, *d.Price.ObservedPrice, d.Price.MaxPrice))
	}
	if d.Evicted > 0 {
		parts = append(parts, fmt.Sprintf("%d evicted", d.Evicted))
	}
	if d.Rule != "" {
		parts = append(parts, "retry "+d.Rule)
	}
	return strings.Join(parts, "; ")
}
