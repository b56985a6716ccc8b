package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tidegate/tidegate/shared/apiclient"
)

// How a deploy is followed: the beat starts the host and marks the app live once the host
// registers, seconds in dev and a minute or two in AWS (a beat, then npm ci).
const (
	deployTimeout = 10 * time.Minute
	// failedLogLines is how much of a failed host's log a deploy shows: enough for a stack trace.
	failedLogLines = 20
)

func appsDeployCmd(s *session) *cobra.Command {
	var name, note string
	var dryRun, noWait bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "deploy [DIR]",
		Short: "Upload a folder as the app's next release and follow it until it is live or failed",
		Long: `Packs DIR (the current folder by default) as a gzip tar — without node_modules, .git, .env and
what .tidegateignore lists (.gitignore's syntax); symbolic links are refused — uploads it straight
to the sources bucket (a presigned PUT the API hands out, for any release up to 10 MiB packed),
makes it the app's next release, then follows the release until it is live (exit 0) or failed (its reason and
the host's last log lines, exit non-zero). The app is named by --name, else package.json's name,
else the folder's. The previous release keeps serving until the new one is live.`,
		Example: `  tidegate apps deploy examples/app
  tidegate apps deploy --name web --note "fix login redirect"
  tidegate apps deploy --dry-run     # list what would be uploaded`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			p, err := s.printer(cmd)
			if err != nil {
				return err
			}
			app, err := appName(dir, name)
			if err != nil {
				return err
			}
			var tgz bytes.Buffer
			got, err := pack(os.DirFS(dir), &tgz)
			if err != nil {
				return fmt.Errorf("packing %s: %w", dir, err)
			}
			if dryRun {
				return showPacked(p, app, tgz.Bytes(), got)
			}
			c, err := s.client(cmd.Context())
			if err != nil {
				return err
			}
			p.note("packed %d files of %s (%s compressed) for app %s", got.Files, dir, bytesText(int64(tgz.Len())), app)
			st := p.status()
			// Always through the sources bucket: one path for every size, and none that API
			// Gateway's request body limit (about 4.5 MB of sources) cuts short.
			rel, err := c.UploadViaS3(cmd.Context(), app, tgz.Bytes(), note, st.uploadProgress(app))
			st.clear()
			if err != nil {
				return err
			}
			if noWait {
				return p.emit(rel, func() { p.line("release %d of %s uploaded (sha256 %s)", rel.Release, app, shortSHA(rel.SHA256)) })
			}
			if !p.scripted() {
				p.line("release %d of %s uploaded (%s, sha256 %s)", rel.Release, app, bytesText(rel.Bytes), shortSHA(rel.SHA256))
			}
			return followRelease(cmd.Context(), p, c, app, rel.Release, timeout)
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", "", "the app's name, a DNS label (else package.json's name, else the folder's)")
	f.StringVar(&note, "note", "", "a note kept with the release, such as what changed")
	f.BoolVar(&dryRun, "dry-run", false, "list what would be uploaded, and upload nothing")
	f.BoolVar(&noWait, "no-wait", false, "upload, and do not follow the release")
	f.DurationVar(&timeout, "timeout", deployTimeout, "give up following after this long (the release goes on)")
	return cmd
}

// appNameChars is what an app's name may hold, as a DNS label does.
var appNameChars = regexp.MustCompile(`[^a-z0-9-]+`)

// appName is --name, else package.json's name (without an npm scope), else the folder's name,
// lowercased with other characters made '-'.
func appName(dir, flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	var pkg struct {
		Name string `json:"name"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, "package.json")); err == nil {
		_ = json.Unmarshal(b, &pkg)
	}
	name := pkg.Name
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	if name == "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return "", err
		}
		name = filepath.Base(abs)
	}
	name = strings.Trim(appNameChars.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if name == "" {
		return "", errors.New("cannot tell the app's name from the folder: give it with --name")
	}
	return name, nil
}

func showPacked(p *printer, app string, tgz []byte, got packed) error {
	names, err := packedNames(tgz)
	if err != nil {
		return err
	}
	return p.emit(map[string]any{"app": app, "files": names, "skipped": got.Skipped, "bytes": len(tgz)}, func() {
		for _, n := range names {
			p.line("%s", n)
		}
		p.note("%d files, %s compressed, for app %s; left out: %s", got.Files, bytesText(int64(len(tgz))), app, strings.Join(got.Skipped, ", "))
	})
}

func shortSHA(s string) string { return s[:min(len(s), 12)] }

// errFollowTimeout is why following a release stopped when --timeout ran out.
var errFollowTimeout = errors.New("the follow timeout ran out")

// followRelease waits up to timeout for release of app to be live or failed, with a live status
// line; a failure shows why and the host's last lines.
func followRelease(ctx context.Context, p *printer, c *apiclient.Client, app string, release int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errFollowTimeout)
	defer cancel()
	st := p.status()
	defer st.clear()
	failures := 0
	for {
		a, err := c.App(ctx, app)
		switch {
		case ctx.Err() != nil:
			st.clear()
			if errors.Is(context.Cause(ctx), errFollowTimeout) {
				return fmt.Errorf("release %d of %s is not live after %s; it goes on: follow it with `tidegate apps status %s`", release, app, timeout, app)
			}
			return fmt.Errorf("stopped following; release %d of %s goes on: see it with `tidegate apps status %s`", release, app, app)
		case err != nil && retryable(err) && failures < maxFollowFailures:
			failures++
		case err != nil:
			return err
		default:
			failures = 0
			done, err := releaseOutcome(ctx, p, c, a, release)
			if done {
				st.clear()
				return err
			}
			st.set("release %d of %s: %s%s", release, app, a.State, hostText(a.Host))
		}
		select {
		case <-ctx.Done():
		case <-time.After(followEvery):
		}
	}
}

// releaseOutcome reports whether the release is done with, and how: nil once live, an error once
// failed, stopped or replaced by a newer release.
func releaseOutcome(ctx context.Context, p *printer, c *apiclient.Client, a apiclient.App, release int) (bool, error) {
	switch {
	case a.LiveRelease >= release && a.State == "live":
		return true, p.emit(a, func() { p.line("%s is live: release %d%s", a.Name, a.LiveRelease, hostText(a.LiveHost)) })
	case a.Release > release:
		return true, fmt.Errorf("release %d of %s was replaced by release %d before it went live", release, a.Name, a.Release)
	case a.State == "stopped":
		return true, fmt.Errorf("%s was stopped before release %d went live; start it with `tidegate apps start %s`", a.Name, release, a.Name)
	case a.State == "failed":
		_ = p.emit(a, func() {
			p.line("release %d of %s failed: %s", release, a.Name, firstOf(a.FailedWhy, "no reason given"))
			if logs, err := c.AppLogs(ctx, a.Name, release, failedLogLines); err == nil && len(logs.Lines) > 0 {
				p.line("last log lines:")
				for _, l := range logs.Lines {
					p.line("  %s", l)
				}
			}
		})
		// The reason and the lines are printed above; the error says what failed, once.
		return true, fmt.Errorf("release %d of %s failed; `tidegate apps logs %s` shows its host's last lines", release, a.Name, a.Name)
	}
	return false, nil
}

func hostText(host string) string {
	if host == "" {
		return ""
	}
	return " (host " + host + ")"
}
