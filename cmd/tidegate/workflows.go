package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tidegate/tidegate/shared/apiclient"
)

func workflowsCmd(s *session) *cobra.Command {
	cmd := apiGroup(s, "workflows", "Submit workflows (jobs that come after jobs), follow them, cancel them",
		workflowsSubmitCmd(s), workflowsListCmd(s), workflowsGetCmd(s), workflowsDeleteCmd(s))
	cmd.Aliases = []string{"workflow", "wf"}
	return cmd
}

func workflowsSubmitCmd(s *session) *cobra.Command {
	var file, key string
	var watch bool
	cmd := &cobra.Command{
		Use:   "submit -f FILE|-",
		Short: "Submit a workflow from a YAML or JSON file: a name and its jobs, each with the steps it comes after",
		Long: `Submits the workflow in FILE (or standard input with -f -): a name, and jobs each with a name,
a manifest (or a template and its parameters), any job's settings, and after: the steps it
comes after. The graph is checked first (a cycle is refused, naming it); then every job is
stored at once and the jobs that come after none start. --watch follows it to its end, the
graph redrawn as its jobs move, and exits non-zero unless it succeeded.`,
		Example: `  tidegate workflows submit -f examples/pipeline.yaml --watch`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := s.printer(cmd)
			if err != nil {
				return err
			}
			in, err := readInput(cmd, file)
			if err != nil {
				return err
			}
			docs, err := documents(in)
			if err != nil || len(docs) != 1 {
				return fmt.Errorf("%s must hold one YAML or JSON document, the workflow (%d found): %v", inputName(file), len(docs), err)
			}
			c, err := s.client(cmd.Context())
			if err != nil {
				return err
			}
			wf, err := c.SubmitWorkflow(cmd.Context(), docs[0], key)
			if err != nil {
				return err
			}
			return showWorkflow(cmd.Context(), p, c, wf, watch)
		},
	}
	cmd.Flags().StringVarP(&file, "filename", "f", "", "the workflow: a YAML or JSON file, or - for standard input (required)")
	cmd.Flags().StringVar(&key, "idempotency-key", "", "send the same key again to get the same workflow, not a second one")
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "follow the workflow to its end; exit non-zero unless it succeeded")
	_ = cmd.MarkFlagRequired("filename")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	return cmd
}

func workflowsListCmd(s *session) *cobra.Command {
	var namespace string
	var l listFlags
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List your workflows, newest first",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, c, err := s.open(cmd)
			if err != nil {
				return err
			}
			page, err := apiclient.Collect(cmd.Context(), l.max(), l.cursor, func(ctx context.Context, o apiclient.ListOptions) (apiclient.Page[apiclient.WorkflowSummary], error) {
				return c.Workflows(ctx, namespace, o)
			})
			if err != nil {
				return err
			}
			return p.emit(page, func() {
				t := &table{header: []string{"ID", "NAME", "STATUS", "JOBS", "NAMESPACE", "CREATED"}}
				for _, w := range page.Items {
					t.add(plain(w.ID), plain(w.Name), plain(w.Status), plain(strconv.Itoa(w.Jobs)), plain(w.Namespace), plain(w.CreatedAt.Local().Format("2006-01-02 15:04:05")))
				}
				p.print(t)
				moreNote(p, page.NextCursor)
			})
		},
	}
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", "only this namespace's")
	l.add(cmd)
	return cmd
}

func workflowsGetCmd(s *session) *cobra.Command {
	var watch bool
	cmd := &cobra.Command{
		Use:     "get ID",
		Short:   "Show a workflow: its graph with each job's status",
		Example: "  tidegate workflows get wf-0abc --watch",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, c, err := s.open(cmd)
			if err != nil {
				return err
			}
			wf, err := c.Workflow(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return showWorkflow(cmd.Context(), p, c, wf, watch)
		},
	}
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "follow it to its end, the graph redrawn as its jobs move; exit non-zero unless it succeeded")
	return cmd
}

func workflowsDeleteCmd(s *session) *cobra.Command {
	return &cobra.Command{
		Use:   "delete ID",
		Short: "Cancel a workflow: every job of it not ended, and the workflow",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, c, err := s.open(cmd)
			if err != nil {
				return err
			}
			wf, err := c.CancelWorkflow(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return showWorkflow(cmd.Context(), p, c, wf, false)
		},
	}
}

// showWorkflow draws wf once, or with watch follows it to its end.
func showWorkflow(ctx context.Context, p *printer, c *apiclient.Client, wf apiclient.Workflow, watch bool) error {
	if watch {
		return followWorkflow(ctx, p, c, wf)
	}
	return p.emit(wf, func() { drawWorkflow(p.out, wf) })
}

// followWorkflow redraws wf's graph each time one of its jobs moves, until it ends; it fails
// unless the workflow succeeded.
func followWorkflow(ctx context.Context, p *printer, c *apiclient.Client, wf apiclient.Workflow) error {
	last, failures := "", 0
	for {
		var b strings.Builder
		drawWorkflow(&b, wf)
		if now := b.String(); now != last && !p.scripted() {
			fmt.Fprintf(p.out, "%s  %s", time.Now().Format("15:04:05"), now)
			last = now
		}
		if ended(wf.Status) {
			if p.scripted() {
				if err := p.emit(wf, func() {}); err != nil {
					return err
				}
			}
			if wf.Status != "succeeded" {
				return fmt.Errorf("workflow %s %s", wf.ID, wf.Status)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("stopped watching; workflow %s goes on: see it with `tidegate workflows get %s`", wf.ID, wf.ID)
		case <-time.After(followEvery):
		}
		got, err := c.Workflow(ctx, wf.ID)
		switch {
		case err != nil && retryable(err) && failures < maxFollowFailures:
			failures++
		case err != nil:
			return err
		default:
			wf, failures = got, 0
		}
	}
}

// ended reports whether a status is an end.
func ended(status string) bool {
	return status == "succeeded" || status == "failed" || status == "cancelled"
}

// drawWorkflow draws a workflow's graph: a heading, then its jobs by depth (the longest chain of
// steps before each), each under the steps it comes after, with its status and why.
func drawWorkflow(w io.Writer, wf apiclient.Workflow) {
	c := wf.Counts
	fmt.Fprintf(w, "%s (%s)  %s: %d blocked, %d active, %d succeeded, %d failed, %d cancelled\n",
		wf.Name, wf.ID, wf.Status, c.Blocked, c.Active, c.Succeeded, c.Failed, c.Cancelled)
	depth := depths(wf.Jobs)
	order := slices.Clone(wf.Jobs)
	slices.SortStableFunc(order, func(a, b apiclient.WorkflowJob) int { return depth[a.Name] - depth[b.Name] })
	width := 0
	for _, j := range order {
		width = max(width, 2*depth[j.Name]+len(j.Name))
	}
	for _, j := range order {
		name := strings.Repeat("  ", depth[j.Name]) + j.Name
		line := fmt.Sprintf("  %s %-*s  %-10s", glyph(j.Status), width, name, j.Status)
		if len(j.After) > 0 {
			line += "  after " + strings.Join(j.After, ", ")
		}
		if j.Reason != "" && (j.Status == "cancelled" || j.Status == "failed") {
			line += "  (" + j.Reason + ")"
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
}

// depths is each job's depth in the graph: 0 for a job after none, else one more than the
// deepest step it comes after.
func depths(js []apiclient.WorkflowJob) map[string]int {
	after := map[string][]string{}
	for _, j := range js {
		after[j.Name] = j.After
	}
	out := map[string]int{}
	var depth func(name string, seen int) int
	depth = func(name string, seen int) int {
		if d, ok := out[name]; ok {
			return d
		}
		d := 0
		if seen <= len(js) { // a graph the API checked has no cycle; this bounds one anyway
			for _, a := range after[name] {
				d = max(d, depth(a, seen+1)+1)
			}
		}
		out[name] = d
		return d
	}
	for _, j := range js {
		depth(j.Name, 0)
	}
	return out
}

// glyph is a job's status at a glance.
func glyph(status string) string {
	switch status {
	case "succeeded":
		return "✓"
	case "failed":
		return "✗"
	case "cancelled":
		return "⊘"
	case "blocked":
		return "·"
	}
	return "▶"
}
