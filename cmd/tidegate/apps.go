package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/tidegate/tidegate/shared/apiclient"
)

func appsCmd(s *session) *cobra.Command {
	return apiGroup(s, "apps", "Deploy and run hosted apps: one gVisor-sandboxed pod each",
		appsDeployCmd(s), appsListCmd(s), appsStatusCmd(s), appsReleasesCmd(s), appsLogsCmd(s), appsRollbackCmd(s), appsPlanCmd(s),
		appActionCmd(s, "stop", "Stop an app's hosts; its releases are kept", (*apiclient.Client).StopApp),
		appActionCmd(s, "start", "Start an app's newest release again, after a stop or a failure", (*apiclient.Client).StartApp),
		appsRemoveCmd(s))
}

func appsListCmd(s *session) *cobra.Command {
	var l listFlags
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the org's apps",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, c, err := s.open(cmd)
			if err != nil {
				return err
			}
			page, err := apiclient.Collect(cmd.Context(), l.max(), l.cursor, c.Apps)
			if err != nil {
				return err
			}
			return p.emit(page, func() {
				t := &table{header: []string{"NAME", "STATE", "RELEASE", "LIVE RELEASE", "LIVE HOST", "WHY"}}
				for _, a := range page.Items {
					t.add(plain(a.Name), stateCell(a.State), plain(releaseText(a.Release)), plain(releaseText(a.LiveRelease)), plain(a.LiveHost), plain(a.FailedWhy))
				}
				p.print(t)
				moreNote(p, page.NextCursor)
			})
		},
	}
	l.add(cmd)
	return cmd
}

func releaseText(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// appCmd is a command on one app, by name.
func appCmd(s *session, use, short string, args cobra.PositionalArgs, run func(cmd *cobra.Command, p *printer, c *apiclient.Client, args []string) error) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  args,
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return completeApps(s)(cmd, args, toComplete)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			p, c, err := s.open(cmd)
			if err != nil {
				return err
			}
			return run(cmd, p, c, args)
		},
	}
}

func appsStatusCmd(s *session) *cobra.Command {
	return appCmd(s, "status NAME", "Show an app: the release wanted and the one live, its state and why it failed", cobra.ExactArgs(1),
		func(cmd *cobra.Command, p *printer, c *apiclient.Client, args []string) error {
			a, err := c.App(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return p.emit(a, func() {
				p.kv([2]string{"Name", a.Name}, [2]string{"State", a.State}, [2]string{"Release", releaseText(a.Release)},
					[2]string{"Host", a.Host}, [2]string{"Live release", releaseText(a.LiveRelease)}, [2]string{"Live host", a.LiveHost},
					[2]string{"Failed", a.FailedWhy})
				showRevives(p, a)
			})
		})
}

func appsReleasesCmd(s *session) *cobra.Command {
	var l listFlags
	cmd := appCmd(s, "releases NAME", "List an app's releases, newest first", cobra.ExactArgs(1),
		func(cmd *cobra.Command, p *printer, c *apiclient.Client, args []string) error {
			page, err := apiclient.Collect(cmd.Context(), l.max(), l.cursor, func(ctx context.Context, o apiclient.ListOptions) (apiclient.Page[apiclient.Release], error) {
				return c.Releases(ctx, args[0], o)
			})
			if err != nil {
				return err
			}
			return p.emit(page, func() {
				t := &table{header: []string{"RELEASE", "SHA256", "SIZE", "NOTE", "AGE"}}
				for _, r := range page.Items {
					note := r.Note
					if r.RollbackOf > 0 {
						note = fmt.Sprintf("rollback to %d %s", r.RollbackOf, note)
					}
					t.add(plain(strconv.Itoa(r.Release)), plain(shortSHA(r.SHA256)), plain(bytesText(r.Bytes)), plain(note), plain(p.age(r.CreatedAt)))
				}
				p.print(t)
				moreNote(p, page.NextCursor)
			})
		})
	l.add(cmd)
	return cmd
}

func appsPlanCmd(s *session) *cobra.Command {
	return &cobra.Command{
		Use:   "plan",
		Short: "Show what the next beat would do for the org's apps, and why, without doing it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, c, err := s.open(cmd)
			if err != nil {
				return err
			}
			plan, err := c.AppsPlan(cmd.Context())
			if err != nil {
				return err
			}
			return p.emit(map[string]any{"items": plan}, func() {
				t := &table{header: []string{"APP", "STATE", "STEP", "HOST", "WHY"}}
				for _, a := range plan {
					if len(a.Steps) == 0 {
						t.add(plain(a.App), stateCell(a.State), plain("-"), plain(a.Host), plain(a.Note))
					}
					for _, st := range a.Steps {
						t.add(plain(a.App), stateCell(a.State), plain(st.Step), plain(st.Host), plain(st.Why))
					}
				}
				p.print(t)
			})
		},
	}
}

func appsLogsCmd(s *session) *cobra.Command {
	var lines, release int
	cmd := appCmd(s, "logs NAME", "Print the last lines of an app's live host, or of a release's host", cobra.ExactArgs(1),
		func(cmd *cobra.Command, p *printer, c *apiclient.Client, args []string) error {
			logs, err := c.AppLogs(cmd.Context(), args[0], release, lines)
			if err != nil {
				return err
			}
			return p.emit(logs, func() {
				for _, l := range logs.Lines {
					p.line("%s", l)
				}
			})
		})
	cmd.Flags().IntVar(&lines, "lines", 100, "how many of the last lines")
	cmd.Flags().IntVar(&release, "release", 0, "this release's host instead of the live one: a failed or earlier release's")
	return cmd
}

func appsRollbackCmd(s *session) *cobra.Command {
	var noWait bool
	var timeout time.Duration
	cmd := appCmd(s, "rollback NAME RELEASE", "Make a new release with an earlier release's sources, and follow it", cobra.ExactArgs(2),
		func(cmd *cobra.Command, p *printer, c *apiclient.Client, args []string) error {
			to, err := strconv.Atoi(args[1])
			if err != nil || to < 1 {
				return fmt.Errorf("RELEASE %q is not a release number; see them with `tidegate apps releases %s`", args[1], args[0])
			}
			rel, err := c.Rollback(cmd.Context(), args[0], to)
			if err != nil {
				return err
			}
			if noWait {
				return p.emit(rel, func() { p.line("release %d of %s made from release %d", rel.Release, args[0], to) })
			}
			if !p.scripted() {
				p.line("release %d of %s made from release %d", rel.Release, args[0], to)
			}
			return followRelease(cmd.Context(), p, c, args[0], rel.Release, timeout)
		})
	cmd.Flags().BoolVar(&noWait, "no-wait", false, "do not follow the new release")
	cmd.Flags().DurationVar(&timeout, "timeout", deployTimeout, "give up following after this long (the release goes on)")
	return cmd
}

func appActionCmd(s *session, action, short string, call func(*apiclient.Client, context.Context, string) (apiclient.App, error)) *cobra.Command {
	return appCmd(s, action+" NAME", short, cobra.ExactArgs(1), func(cmd *cobra.Command, p *printer, c *apiclient.Client, args []string) error {
		a, err := call(c, cmd.Context(), args[0])
		if err != nil {
			return err
		}
		return p.emit(a, func() { p.line("%s: %s", args[0], firstOf(a.State, action+" asked")) })
	})
}

func appsRemoveCmd(s *session) *cobra.Command {
	cmd := appCmd(s, "rm NAME", "Remove an app, its hosts and its releases", cobra.ExactArgs(1),
		func(cmd *cobra.Command, p *printer, c *apiclient.Client, args []string) error {
			if err := c.DeleteApp(cmd.Context(), args[0]); err != nil {
				return err
			}
			return p.emit(map[string]string{"deleted": args[0]}, func() { p.line("app %s removed", args[0]) })
		})
	cmd.Aliases = []string{"delete"}
	return cmd
}

// revivedLines is how many of a revive's kept lines `apps status` shows; `apps logs --release`
// shows the rest.
const revivedLines = 5

// showRevives lists the app's last revives, newest first, each with its host's last lines then.
func showRevives(p *printer, a apiclient.App) {
	if len(a.Revives) == 0 {
		return
	}
	p.line("Revived (its process exited, or stayed unready, and it ran again):")
	for i := len(a.Revives) - 1; i >= 0; i-- {
		rv := a.Revives[i]
		why := ""
		if rv.Verdict != "" {
			why = ", " + rv.Verdict
		}
		p.line("  %s ago  %s (release %d%s)", p.age(rv.At), rv.Host, rv.Release, why)
		for _, l := range rv.Lines[max(0, len(rv.Lines)-revivedLines):] {
			p.line("    %s", l)
		}
	}
	p.line("All kept lines of a release: tidegate apps logs %s --release N", a.Name)
}
