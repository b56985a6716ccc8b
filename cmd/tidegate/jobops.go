package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tidegate/tidegate/shared/apiclient"
)

// listFlags choose a listing's pages.
type listFlags struct {
	limit  int
	all    bool
	cursor string
}

func (l *listFlags) add(cmd *cobra.Command) {
	cmd.Flags().IntVar(&l.limit, "limit", 100, "show at most this many")
	cmd.Flags().BoolVar(&l.all, "all", false, "show every one, page after page")
	cmd.Flags().StringVar(&l.cursor, "cursor", "", "start after the page that answered this next_cursor")
}

func (l *listFlags) max() int {
	if l.all {
		return 0
	}
	return max(l.limit, 1)
}

// jobFilterFlags are a listing's filters, shared by list and bulk-delete.
type jobFilterFlags struct {
	region, namespace, status string
	labels                    []string
}

func (f *jobFilterFlags) add(s *session, cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.region, "region", "", "only jobs in this region")
	fl.StringVarP(&f.namespace, "namespace", "n", "", "only jobs in this namespace")
	fl.StringVar(&f.status, "status", "", "only jobs in this status: blocked, queued, dispatching, pending, running, succeeded (or completed), failed, cancelled")
	fl.StringArrayVarP(&f.labels, "label", "l", nil, "only jobs with this label k=v; repeat for more")
	_ = cmd.RegisterFlagCompletionFunc("region", completeRegions(s))
	_ = cmd.RegisterFlagCompletionFunc("status", fixedCompletions("blocked", "queued", "dispatching", "pending", "running", "succeeded", "completed", "failed", "cancelled"))
}

func (f *jobFilterFlags) selector() string { return strings.Join(f.labels, ",") }

func jobsListCmd(s *session) *cobra.Command {
	var f jobFilterFlags
	var l listFlags
	var sortBy, name, parent string
	var watch bool
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List your jobs, newest first",
		Example: `  tidegate jobs list --status running
  tidegate jobs list -l team=ml --sort priority --watch
  tidegate jobs list --name 'train-*' --sort created:asc
  tidegate jobs list --sort name:desc
  tidegate jobs list -o json | jq -r '.items[].id'
  tidegate jobs list --parent job-0abc --status failed   # an array's children`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := s.printer(cmd)
			if err != nil {
				return err
			}
			c, err := s.client(cmd.Context())
			if err != nil {
				return err
			}
			filter := apiclient.JobFilter{Region: f.region, Namespace: f.namespace, Status: f.status, LabelSelector: f.selector(), Name: name, Parent: parent}
			if filter.Sort, err = listSort(sortBy); err != nil {
				return err
			}
			list := func(ctx context.Context) (apiclient.Page[apiclient.Job], error) {
				return apiclient.Collect(ctx, l.max(), l.cursor, func(ctx context.Context, o apiclient.ListOptions) (apiclient.Page[apiclient.Job], error) {
					return c.Jobs(ctx, filter, o)
				})
			}
			page, err := list(cmd.Context())
			if err != nil {
				return err
			}
			if err := p.emit(page, func() { jobsTable(p, page.Items, true) }); err != nil {
				return err
			}
			if !watch {
				moreNote(p, page.NextCursor)
				return nil
			}
			return watchJobs(cmd.Context(), p, page.Items, list)
		},
	}
	f.add(s, cmd)
	l.add(cmd)
	cmd.Flags().StringVar(&sortBy, "sort", "", "created (newest first, the default), priority (highest first) or name (a to z); add :asc or :desc for either order")
	cmd.Flags().StringVar(&name, "name", "", "only jobs with this name, or whose name starts so when it ends in *")
	cmd.Flags().StringVar(&parent, "parent", "", "list the children of this array job instead, in index order")
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "keep listing: print each job again when it changes, until Ctrl-C")
	_ = cmd.RegisterFlagCompletionFunc("sort", fixedCompletions("created", "created:asc", "priority", "priority:asc", "name", "name:desc"))
	return cmd
}

// listSort turns --sort into the API's sort: created, priority or name, the API's own field names
// too, with :asc or :desc; the default direction is newest and highest first, names a to z.
func listSort(s string) (string, error) {
	field, dir, _ := strings.Cut(s, ":")
	natural := "desc"
	switch field {
	case "", "created", "created_at":
		field = "created_at"
	case "priority":
	case "name":
		natural = "asc"
	default:
		return "", fmt.Errorf("--sort %q: choose created, priority or name, optionally with :asc or :desc", s)
	}
	switch dir {
	case "":
		dir = natural
	case "asc", "desc":
	default:
		return "", fmt.Errorf("--sort %q: the order after ':' is asc or desc", s)
	}
	if field == "created_at" && dir == "desc" {
		return "", nil // the API's default
	}
	return field + ":" + dir, nil
}

// moreNote says how to see the next page, when there is one.
func moreNote(p *printer, next *string) {
	if next != nil && !p.scripted() {
		p.note("more jobs: add --cursor %s, or --all", *next)
	}
}

// jobsTable writes jobs one a row; header false continues a table already begun.
func jobsTable(p *printer, js []apiclient.Job, header bool) {
	t := &table{header: []string{"ID", "NAME", "STATUS", "NAMESPACE", "REGION", "PRIORITY", "WAITING", "AGE"}}
	for _, j := range js {
		waiting := ""
		if why, ok := pendingWhy[j.PendingReason]; ok && !j.Terminal() {
			waiting = strings.SplitN(fmt.Sprintf(why, j.Region), ":", 2)[0]
			if j.QueuePosition > 0 {
				waiting += " (" + ordinal(j.QueuePosition) + ")"
			}
		}
		t.add(plain(j.ID), plain(j.Name), stateCell(j.Status), plain(j.Namespace), plain(j.Region), plain(strconv.Itoa(j.Priority)), plain(waiting), plain(p.age(j.CreatedAt)))
	}
	if !header {
		t.header = nil
	}
	p.print(t)
}

// watchJobs lists again every watchEvery and prints each job that is new or changed, until the
// command is interrupted; for scripts, one JSON (or YAML) document a change.
func watchJobs(ctx context.Context, p *printer, first []apiclient.Job, list func(context.Context) (apiclient.Page[apiclient.Job], error)) error {
	seen := map[string]string{}
	for _, j := range first {
		seen[j.ID] = j.Status + j.PendingReason + strconv.Itoa(j.QueuePosition)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(watchEvery):
		}
		page, err := list(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			if retryable(err) {
				continue
			}
			return err
		}
		var changed []apiclient.Job
		for _, j := range page.Items {
			key := j.Status + j.PendingReason + strconv.Itoa(j.QueuePosition)
			if seen[j.ID] != key {
				seen[j.ID] = key
				changed = append(changed, j)
			}
		}
		for _, j := range changed {
			if err := p.emit(j, func() { jobsTable(p, []apiclient.Job{j}, false) }); err != nil {
				return err
			}
		}
	}
}

func jobsGetCmd(s *session) *cobra.Command {
	return jobCmd(s, "get ID", "Show a job: its status and why it waits, its place in line, spot gate, placement and history",
		func(cmd *cobra.Command, p *printer, c *apiclient.Client, id string) error {
			j, err := c.Job(cmd.Context(), id)
			if err != nil {
				return err
			}
			return p.emit(j, func() { describeJob(p, j) })
		})
}

// jobCmd is a command on one job, by id, completed from the API's jobs.
func jobCmd(s *session, use, short string, run func(cmd *cobra.Command, p *printer, c *apiclient.Client, id string) error) *cobra.Command {
	return &cobra.Command{
		Use:               use,
		Short:             short,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeJobs(s),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, c, err := s.open(cmd)
			if err != nil {
				return err
			}
			return run(cmd, p, c, args[0])
		},
	}
}

// open is a command's printer and client.
func (s *session) open(cmd *cobra.Command) (*printer, *apiclient.Client, error) {
	p, err := s.printer(cmd)
	if err != nil {
		return nil, nil, err
	}
	c, err := s.client(cmd.Context())
	return p, c, err
}

func jobsDeleteCmd(s *session) *cobra.Command {
	var purge bool
	cmd := &cobra.Command{
		Use:     "delete ID…",
		Aliases: []string{"cancel", "rm"},
		Short: "Cancel jobs: a queued one at once, a dispatched one after deleting it from its cluster; " +
			"of a finished one delete what is left in its cluster",
		Example: `  tidegate jobs delete job-20261201-abc
  tidegate jobs delete --purge job-20261201-abc   # its record too`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeJobs(s),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, c, err := s.open(cmd)
			if err != nil {
				return err
			}
			for _, id := range args {
				if purge {
					if err := c.PurgeJob(cmd.Context(), id); err != nil {
						return err
					}
					p.line("job %s deleted, its record too", id)
					continue
				}
				j, err := c.CancelJob(cmd.Context(), id)
				if err != nil {
					return err
				}
				if err := p.emit(j, func() { p.line("%s", deletedLine(j)) }); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&purge, "purge", false, "delete the jobs' records too, for good")
	return cmd
}

// deletedLine says what jobs delete did to job j, as the API answered it.
func deletedLine(j apiclient.Job) string {
	if j.Status == "cancelled" {
		return "job " + j.ID + " cancelled"
	}
	return "job " + j.ID + " is " + j.Status + "; what was left of it in the cluster is deleted"
}

func jobsRetryCmd(s *session) *cobra.Command {
	var key string
	var wait bool
	cmd := &cobra.Command{
		Use:               "retry ID",
		Short:             "Submit a new job from another's manifests and settings",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeJobs(s),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, c, err := s.open(cmd)
			if err != nil {
				return err
			}
			j, err := c.RetryJob(cmd.Context(), args[0], key)
			if err != nil {
				return err
			}
			return submitted(cmd, p, c, j, wait)
		},
	}
	cmd.Flags().StringVar(&key, "idempotency-key", "", "send the same key again to get the same retry, not a second one")
	cmd.Flags().BoolVarP(&wait, "wait", "w", false, "follow the new job until it ends; exit non-zero unless it succeeded")
	return cmd
}
