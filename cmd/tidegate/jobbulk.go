package main

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tidegate/tidegate/shared/apiclient"
)

// msgBulkConfirm is what bulk-delete says when it cannot ask: cancelling is for good.
const msgBulkConfirm = "bulk-delete cancels or deletes every matching job for good: look first with --dry-run, then add --yes"

func jobsBulkDeleteCmd(s *session) *cobra.Command {
	var f jobFilterFlags
	var olderThan int
	var dryRun, yes, purge bool
	cmd := &cobra.Command{
		Use:   "bulk-delete [filters]",
		Short: "Cancel every unfinished job that matches the filters, or with a finished --status delete what is left of them (at most 500 a run)",
		Example: `  tidegate jobs bulk-delete --namespace team-a --status queued --dry-run
  tidegate jobs bulk-delete -l run=nightly --older-than-days 7 --yes
  tidegate jobs bulk-delete --status completed --older-than-days 7 --purge --yes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, c, err := s.open(cmd)
			if err != nil {
				return err
			}
			br := apiclient.BulkDeleteRequest{Namespace: f.namespace, Region: f.region, Status: f.status, LabelSelector: f.selector(), DryRun: true, Purge: purge}
			if cmd.Flags().Changed("older-than-days") {
				br.OlderThanDays = &olderThan
			}
			if !dryRun && !yes {
				ok, err := confirmBulk(cmd, p, c, br)
				if err != nil || !ok {
					return err
				}
			}
			br.DryRun = dryRun
			res, err := c.BulkDelete(cmd.Context(), br)
			if err != nil {
				return err
			}
			err = p.emit(res, func() {
				verb := "cancelled"
				if finishedStatus(f.status) {
					verb = "deleted"
				}
				switch {
				case res.DryRun:
					p.line("%d job(s) match; nothing was %s (drop --dry-run to do it)", res.Matched, verb)
				case purge:
					p.line("%d of %d matching job(s) %s, their records too", res.Deleted, res.Matched, verb)
				default:
					p.line("%d of %d matching job(s) %s", res.Deleted, res.Matched, verb)
				}
				if len(res.Jobs) > 0 {
					jobsTable(p, res.Jobs, true)
				}
				for _, f := range res.Failed {
					p.line("not cancelled: %s: %s", f.Field, f.Problem)
				}
				if res.More {
					p.line("more jobs may match: run it again for the rest")
				}
			})
			if err == nil && len(res.Failed) > 0 {
				return fmt.Errorf("%d job(s) could not be cancelled", len(res.Failed))
			}
			return err
		},
	}
	f.add(s, cmd)
	cmd.Flags().IntVar(&olderThan, "older-than-days", 0, "only jobs created more than this many days ago (1–365)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "only say which jobs match")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "cancel without asking")
	cmd.Flags().BoolVar(&purge, "purge", false, "delete the matching jobs' records too, for good")
	return cmd
}

// confirmBulk shows how many jobs match and asks on a terminal; elsewhere it refuses without --yes.
func confirmBulk(cmd *cobra.Command, p *printer, c *apiclient.Client, br apiclient.BulkDeleteRequest) (bool, error) {
	in := cmd.InOrStdin()
	if !isTerminal(in) {
		return false, fmt.Errorf("%s", msgBulkConfirm)
	}
	res, err := c.BulkDelete(cmd.Context(), br)
	if err != nil {
		return false, err
	}
	if res.Matched == 0 {
		p.note("no job matches; nothing to cancel")
		return false, nil
	}
	fmt.Fprintf(p.err, "cancel %d job(s)? [y/N] ", res.Matched)
	answer, _ := bufio.NewReader(in).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		p.note("nothing cancelled")
		return false, nil
	}
	return true, nil
}

// finishedStatus reports whether a --status filter names a finished status: bulk-delete then
// deletes what is left of finished jobs instead of cancelling unfinished ones.
func finishedStatus(s string) bool {
	switch s {
	case "succeeded", "completed", "failed", "cancelled":
		return true
	}
	return false
}
