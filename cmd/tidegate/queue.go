package main

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/tidegate/tidegate/shared/apiclient"
)

func queueCmd(s *session) *cobra.Command {
	return apiGroup(s, "queue", "See the job queue of each region", &cobra.Command{
		Use:   "stats",
		Short: "Count your live batch jobs per region and status, the spot-gated ones, each region's capacity in use and your long-running jobs apart; then each flavor's resources, in use and your tenant's share of them",
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
				if st.Held {
					fmt.Fprintln(p.out, "Your tenant is held by the operator: none of its jobs is dispatched; each keeps its place.")
				}
				t := &table{header: []string{"REGION", "STATE", "QUEUED", "DISPATCHING", "PENDING", "RUNNING", "SPOT-GATED", "CAPACITY IN USE", "LONG-RUNNING"}}
				for _, r := range st.Regions {
					capacity := strconv.Itoa(r.CapacityInUse)
					if r.CapacityLimit > 0 {
						capacity = fmt.Sprintf("%d of %d", r.CapacityInUse, r.CapacityLimit)
					}
					t.add(plain(r.Region), plain(regionState(r.Reach)), plain(strconv.Itoa(r.Counts["queued"])), plain(strconv.Itoa(r.Counts["dispatching"])),
						plain(strconv.Itoa(r.Counts["pending"])), plain(strconv.Itoa(r.Counts["running"])), plain(strconv.Itoa(r.Gated)), plain(capacity),
						plain(longRunning(r.LongRunning.Counts)))
				}
				p.print(t)
				if ft := flavorTable(st.Regions); len(ft.rows) > 0 {
					fmt.Fprintln(p.out)
					p.print(ft)
				}
			})
		},
	}, queueAheadCmd(s))
}

// queueAheadCmd is `tidegate queue ahead JOB`: how much is ahead of a queued job, and how much of
// it is the caller's own.
func queueAheadCmd(s *session) *cobra.Command {
	var region string
	cmd := &cobra.Command{
		Use:     "ahead JOB [--region REGION]",
		Short:   "Count the jobs ahead of one of your queued jobs and what they ask per resource, yours apart",
		Example: "  tidegate queue ahead job-06h5… --region us-west-2",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, c, err := s.open(cmd)
			if err != nil {
				return err
			}
			if region == "" {
				j, err := c.Job(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				if region = j.Region; region == "" && len(j.Regions) > 0 {
					region = j.Regions[0]
				}
			}
			a, err := c.QueueAhead(cmd.Context(), region, args[0])
			if err != nil {
				return err
			}
			return p.emit(a, func() {
				fmt.Fprintf(p.out, "%d jobs ahead of %s in %s, %d of them yours.\n", a.JobsAhead, a.Job, a.Region, a.OwnJobsAhead)
				t := &table{header: []string{"RESOURCE", "AHEAD", "YOURS"}}
				for _, name := range slices.Sorted(maps.Keys(a.DemandAhead)) {
					t.add(plain(name), plain(a.DemandAhead[name]), plain(cmp.Or(a.OwnDemandAhead[name], "0")))
				}
				p.print(t)
				if !a.Complete {
					fmt.Fprintln(p.out, "(more are ahead than were counted)")
				}
			})
		},
	}
	cmd.Flags().StringVar(&region, "region", "", "the region's queue (default the job's region, or the first it allows)")
	return cmd
}

// regionState is a region's admission state as the queue stats give it: "admitting" where no
// beat has recorded it yet, and how long an unreached one has been so.
func regionState(r *apiclient.RegionReach) string {
	switch {
	case r == nil:
		return "admitting"
	case r.State == "unreachable" || r.State == "lost":
		return fmt.Sprintf("%s %s", r.State, (time.Duration(r.UnreachableSeconds) * time.Second).String())
	case r.State == "clearing":
		return fmt.Sprintf("clearing %d fenced", r.FencedAttempts)
	}
	return r.State
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

// flavorTable is each region's flavors, a row a resource and tenant shown: the flavor's capacity
// and use, and the tenant's use, nominal quota, borrowed and lent amounts.
func flavorTable(regions []apiclient.RegionStats) *table {
	t := &table{header: []string{"REGION", "FLAVOR", "RESOURCE", "CAPACITY", "IN USE", "TENANT", "TENANT'S", "NOMINAL", "BORROWED", "LENT"}}
	for _, r := range regions {
		for _, f := range r.Flavors {
			for _, res := range slices.Sorted(maps.Keys(f.Capacity)) {
				if len(f.Tenants) == 0 {
					t.add(plain(r.Region), plain(f.Name), plain(res), plain(f.Capacity[res]), plain(f.InUse[res]), plain(""), plain(""), plain(""), plain(""), plain(""))
				}
				for _, tn := range f.Tenants {
					t.add(plain(r.Region), plain(f.Name), plain(res), plain(f.Capacity[res]), plain(f.InUse[res]), plain(tn.Tenant),
						plain(tn.InUse[res]), plain(tn.Nominal[res]), plain(tn.Borrowed[res]), plain(tn.Lent[res]))
				}
			}
		}
	}
	return t
}
