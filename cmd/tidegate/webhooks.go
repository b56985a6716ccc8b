package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tidegate/tidegate/shared/apiclient"
)

// webhookEvents are API.md's event types, for completion and help.
var webhookEvents = []string{
	"job.queued", "job.dispatched", "job.started", "job.completed", "job.failed", "job.cancelled", "job.retrying",
	"job.preempted", "app.live", "app.failed", "webhook.test",
}

func webhooksCmd(s *session) *cobra.Command {
	return apiGroup(s, "webhooks", "Have events delivered, signed, to your HTTPS endpoints",
		webhooksCreateCmd(s), webhooksListCmd(s), webhookGetCmd(s), webhookDeleteCmd(s), webhookTestCmd(s),
		webhookRotateCmd(s), webhookDeliveriesCmd(s), webhookRedeliverCmd(s))
}

func webhooksCreateCmd(s *session) *cobra.Command {
	var wr apiclient.WebhookRequest
	cmd := &cobra.Command{
		Use:   "create --url URL --event TYPE…",
		Short: "Subscribe an HTTPS endpoint to events; prints the signing secret once",
		Long: `Subscribes URL to the events named (repeat --event, or comma-separate). The signing secret is
printed once: keep it to verify deliveries (Standard Webhooks; see the README). Here --url is the
receiver's; the API's comes from the context or ` + envURL + `.

Events: ` + strings.Join(webhookEvents, ", "),
		Example: `  tidegate webhooks create --url https://ci.example.com/hooks/tidegate --event job.completed --event job.failed`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, c, err := s.open(cmd)
			if err != nil {
				return err
			}
			w, err := c.CreateWebhook(cmd.Context(), wr)
			if err != nil {
				return err
			}
			return p.emit(w, func() {
				p.line("webhook %s created for %s", w.ID, strings.Join(w.Events, ", "))
				p.line("signing secret (shown once; keep it to verify deliveries): %s", w.Secret)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&wr.URL, "url", "", "the receiver's https URL (required)")
	f.StringSliceVar(&wr.Events, "event", nil, "an event type to deliver; repeat or comma-separate (required)")
	f.StringVarP(&wr.Namespace, "namespace", "n", "", "only events of jobs in this namespace")
	f.StringVar(&wr.Secret, "secret", "", "a whsec_… secret of your own (one is made when left out)")
	_ = cmd.MarkFlagRequired("url")
	_ = cmd.MarkFlagRequired("event")
	_ = cmd.RegisterFlagCompletionFunc("event", fixedCompletions(webhookEvents...))
	return cmd
}

func webhooksListCmd(s *session) *cobra.Command {
	var l listFlags
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List your webhooks",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, c, err := s.open(cmd)
			if err != nil {
				return err
			}
			page, err := apiclient.Collect(cmd.Context(), l.max(), l.cursor, c.Webhooks)
			if err != nil {
				return err
			}
			return p.emit(page, func() {
				webhooksTable(p, page.Items)
				moreNote(p, page.NextCursor)
			})
		},
	}
	l.add(cmd)
	return cmd
}

func webhooksTable(p *printer, ws []apiclient.Webhook) {
	t := &table{header: []string{"ID", "URL", "EVENTS", "NAMESPACE", "STATE", "AGE"}}
	for _, w := range ws {
		state := cell{"active", colorGreen}
		if w.Disabled {
			state = cell{"disabled", colorRed}
		}
		t.add(plain(w.ID), plain(w.URL), plain(strings.Join(w.Events, ",")), plain(w.Namespace), state, plain(p.age(w.CreatedAt)))
	}
	p.print(t)
}

// webhookCmd is a command on one webhook, by id.
func webhookCmd(s *session, use, short string, run func(cmd *cobra.Command, p *printer, c *apiclient.Client, id string) error) *cobra.Command {
	return &cobra.Command{
		Use:               use + " ID",
		Short:             short,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeWebhooks(s),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, c, err := s.open(cmd)
			if err != nil {
				return err
			}
			return run(cmd, p, c, args[0])
		},
	}
}

func webhookGetCmd(s *session) *cobra.Command {
	return webhookCmd(s, "get", "Show a webhook", func(cmd *cobra.Command, p *printer, c *apiclient.Client, id string) error {
		w, err := c.Webhook(cmd.Context(), id)
		if err != nil {
			return err
		}
		return p.emit(w, func() {
			p.kv([2]string{"ID", w.ID}, [2]string{"URL", w.URL}, [2]string{"Events", strings.Join(w.Events, ", ")},
				[2]string{"Namespace", w.Namespace}, [2]string{"Created", when(w.CreatedAt)}, [2]string{"Disabled", w.DisabledReason})
		})
	})
}

func webhookDeleteCmd(s *session) *cobra.Command {
	cmd := webhookCmd(s, "delete", "Delete a webhook; nothing more is delivered to it", func(cmd *cobra.Command, p *printer, c *apiclient.Client, id string) error {
		if err := c.DeleteWebhook(cmd.Context(), id); err != nil {
			return err
		}
		return p.emit(map[string]string{"deleted": id}, func() { p.line("webhook %s deleted", id) })
	})
	cmd.Aliases = []string{"rm"}
	return cmd
}

func webhookTestCmd(s *session) *cobra.Command {
	return webhookCmd(s, "test", "Send a webhook.test event to a webhook now", func(cmd *cobra.Command, p *printer, c *apiclient.Client, id string) error {
		out, err := c.TestWebhook(cmd.Context(), id)
		if err != nil {
			return err
		}
		return p.emit(out, func() {
			p.line("webhook.test sent to %s; see how it went with `tidegate webhooks deliveries %s`", id, id)
		})
	})
}

func webhookRotateCmd(s *session) *cobra.Command {
	return webhookCmd(s, "rotate-secret", "Make a new signing secret; the old one also signs for 24 hours", func(cmd *cobra.Command, p *printer, c *apiclient.Client, id string) error {
		w, err := c.RotateWebhookSecret(cmd.Context(), id)
		if err != nil {
			return err
		}
		return p.emit(w, func() {
			p.line("new signing secret for %s (shown once; the old one signs too for 24 hours): %s", id, w.Secret)
		})
	})
}

func webhookDeliveriesCmd(s *session) *cobra.Command {
	var l listFlags
	cmd := webhookCmd(s, "deliveries", "List a webhook's deliveries and how each went", func(cmd *cobra.Command, p *printer, c *apiclient.Client, id string) error {
		page, err := apiclient.Collect(cmd.Context(), l.max(), l.cursor, func(ctx context.Context, o apiclient.ListOptions) (apiclient.Page[apiclient.Delivery], error) {
			return c.Deliveries(ctx, id, o)
		})
		if err != nil {
			return err
		}
		return p.emit(page, func() {
			t := &table{header: []string{"ID", "EVENT", "STATUS", "ATTEMPTS", "LAST ANSWER", "AGE"}}
			for _, d := range page.Items {
				status := cell{d.Status, ""}
				switch d.Status {
				case "succeeded":
					status.color = colorGreen
				case "failed":
					status.color = colorRed
				case "pending":
					status.color = colorYellow
				}
				t.add(plain(d.ID), plain(d.EventType), status, plain(strconv.Itoa(d.AttemptCount)), plain(lastAnswer(d)), plain(p.age(d.CreatedAt)))
			}
			p.print(t)
			moreNote(p, page.NextCursor)
		})
	})
	l.add(cmd)
	return cmd
}

// lastAnswer is what the receiver last answered: a status code, or the error reaching it.
func lastAnswer(d apiclient.Delivery) string {
	if len(d.Attempts) == 0 {
		return d.FinalReason
	}
	a := d.Attempts[len(d.Attempts)-1]
	if a.Error != "" {
		return a.Error
	}
	return strconv.Itoa(a.StatusCode) + " in " + strconv.FormatInt(a.LatencyMS, 10) + " ms"
}

func webhookRedeliverCmd(s *session) *cobra.Command {
	return &cobra.Command{
		Use:   "redeliver ID DELIVERY_ID",
		Short: "Send a delivery's event again",
		Args:  cobra.ExactArgs(2),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return completeWebhooks(s)(cmd, args, toComplete)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			p, c, err := s.open(cmd)
			if err != nil {
				return err
			}
			out, err := c.Redeliver(cmd.Context(), args[0], args[1])
			if err != nil {
				return err
			}
			return p.emit(json.RawMessage(out), func() { p.line("delivery %s of webhook %s sent again", args[1], args[0]) })
		},
	}
}
