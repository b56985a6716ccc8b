package main

import (
	"context"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/tidegate/tidegate/shared/apiclient"
)

func auditCmd(s *session) *cobra.Command {
	var f apiclient.AuditFilter
	var l listFlags
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Show your tenant's audit log: who changed what, when, from where, and how it ended",
		Long: "Every change one of your tenant's principals asked for (submissions, cancels, retries, bulk deletes,\n" +
			"templates, webhooks, secrets by name, apps, releases, rollbacks), oldest first; the operator sees every\n" +
			"tenant's. A record is written before its change is made: STATUS 0 means the answer was never given.",
		Example: "  tidegate audit --from 2026-12-01T00:00:00Z\n" +
			"  tidegate audit --action 'DELETE /api/v1/jobs/{id}' -o json",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, c, err := s.open(cmd)
			if err != nil {
				return err
			}
			page, err := apiclient.Collect(cmd.Context(), l.max(), l.cursor, func(ctx context.Context, o apiclient.ListOptions) (apiclient.Page[apiclient.AuditRecord], error) {
				return c.Audit(ctx, f, o)
			})
			if err != nil {
				return err
			}
			return p.emit(page, func() {
				t := &table{header: []string{"AT", "TENANT", "PRINCIPAL", "ACTION", "PATH", "STATUS", "SOURCE", "REQUEST"}}
				for _, r := range page.Items {
					t.add(plain(r.At.Local().Format("2006-01-02 15:04:05")), plain(r.Tenant), plain(r.Principal), plain(r.Action),
						plain(r.Path), plain(strconv.Itoa(r.Status)), plain(r.SourceIP), plain(r.RequestID))
				}
				p.print(t)
				moreNote(p, page.NextCursor)
			})
		},
	}
	s.addFlags(cmd.PersistentFlags())
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletions("table", "json", "yaml"))
	cmd.Flags().StringVar(&f.From, "from", "", "start, RFC 3339 (default 30 days before --to)")
	cmd.Flags().StringVar(&f.To, "to", "", "end, excluded, RFC 3339 (default now)")
	cmd.Flags().StringVar(&f.Action, "action", "", "only this route, such as 'POST /api/v1/jobs'")
	cmd.Flags().StringVar(&f.Tenant, "tenant", "", "the operator only: one tenant's records")
	l.add(cmd)
	return cmd
}
