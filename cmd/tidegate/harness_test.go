package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/apiclient"
	"github.com/tidegate/tidegate/shared/dev/contract"
	"github.com/tidegate/tidegate/shared/dev/devstack"
	"github.com/tidegate/tidegate/shared/dev/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ with what the commands print now")

// harness is `tidegate dev` running in this test's process on the shared stand-ins, under table,
// queue and bucket names only this test uses, and the CLI pointed at it by the context the dev
// stack saves, in a config folder of the test's own.
type harness struct {
	t     *testing.T
	state devstack.State
	api   *apiclient.Client
	stdin string // what the next command reads as standard input
}

var stacks atomic.Int32

// newHarness starts a dev stack over the shared stand-ins, each of tweaks applied to its options
// first, and points a CLI at it.
func newHarness(t *testing.T, tweaks ...func(*devstack.Options)) *harness {
	t.Helper()
	kube := testenv.Kube(t)
	for _, v := range []string{envURL, envAPIKey, envContext, envProfile, envNoColor} {
		t.Setenv(v, "")
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	ready := make(chan devstack.State, 1)
	opt := devstack.Options{
		Addr: freeAddr(t), APIKey: fmt.Sprintf("cli-test-%d", os.Getpid()), Beat: time.Second,
		WebhooksAllowPrivate: true, Dir: t.TempDir(), Standins: &kube, RegisterHosts: true,
		Prefix: fmt.Sprintf("cli-%d-%d", os.Getpid(), stacks.Add(1)),
		Ready:  func(st devstack.State) { ready <- st },
		// Every exchange of every CLI test is held to the contract.
		WrapAPI: contract.Middleware(t),
	}
	for _, tweak := range tweaks {
		tweak(&opt)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- devstack.Run(ctx, opt, io.Discard, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() { cancel(); <-done })
	h := &harness{t: t}
	select {
	case h.state = <-ready:
	case err := <-done:
		t.Fatalf("tidegate dev ended before it served: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("tidegate dev did not serve within 2 minutes")
	}
	var say bytes.Buffer
	saveDevContext(h.state, &say)
	if !strings.Contains(say.String(), "the CLI now talks to this stack") {
		t.Fatalf("saving the dev context said %q", say.String())
	}
	var err error
	if h.api, err = apiclient.New(apiclient.Options{URL: h.state.URL, Auth: apiclient.APIKey(h.state.APIKey)}); err != nil {
		t.Fatal(err)
	}
	return h
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// run runs the CLI with args as main does, and answers what it printed and its error (main
// prints the error too, and exits 1 on one).
func (h *harness) run(args ...string) (stdout, stderr string, err error) {
	h.t.Helper()
	cmd := root()
	var out, errOut bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetIn(strings.NewReader(h.stdin))
	h.stdin = ""
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err = cmd.ExecuteContext(ctx)
	if err != nil {
		reportError(&errOut, err)
	}
	return out.String(), errOut.String(), err
}

// ok runs the CLI and fails the test unless it succeeds; it answers standard output.
func (h *harness) ok(args ...string) string {
	h.t.Helper()
	out, errOut, err := h.run(args...)
	if err != nil {
		h.t.Fatalf("tidegate %s = %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// fails runs the CLI and fails the test unless it exits non-zero; it answers standard error.
func (h *harness) fails(args ...string) string {
	h.t.Helper()
	out, errOut, err := h.run(args...)
	if err == nil {
		h.t.Fatalf("tidegate %s succeeded, want an error\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), out, errOut)
	}
	return errOut
}

// eventually polls cond until it holds, for what the dev stack does on its own (a drain, a beat).
func (h *harness) eventually(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("%s did not happen within a minute", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Volatile parts of a table, replaced before comparing it with its golden file.
var (
	jobID   = regexp.MustCompile(`\bjob-[0-9a-v]{26}\b`)
	ageCell = regexp.MustCompile(`^\d+[smhd]$`)
	// nameCell is a uniqueName cell: its process id and count differ from run to run.
	nameCell  = regexp.MustCompile(`^[a-z][a-z-]*-\d+-\d+$`)
	clockTime = regexp.MustCompile(`\b\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\b`)
)

// normalise rewrites a table with its ids, ages and times replaced, and aligns it again (their
// widths vary), so it can be compared with a golden file. Cells are split where the table put at
// least two spaces.
func normalise(text string) string {
	ids := map[string]string{}
	t := &table{}
	for i, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		var cells []string
		for _, c := range regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(line), -1) {
			c = jobID.ReplaceAllStringFunc(c, func(id string) string {
				if ids[id] == "" {
					ids[id] = fmt.Sprintf("<job-%d>", len(ids)+1)
				}
				return ids[id]
			})
			c = clockTime.ReplaceAllString(c, "<time>")
			if ageCell.MatchString(c) {
				c = "<age>"
			}
			if nameCell.MatchString(c) {
				c = "<name>"
			}
			cells = append(cells, c)
		}
		if i == 0 {
			t.header = cells
		} else {
			t.add(plainCells(cells)...)
		}
	}
	var b bytes.Buffer
	(&printer{out: &b}).print(t)
	return b.String()
}

// golden compares a table with testdata/name.golden, after normalising it.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	got = normalise(got)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s (make it with go test -run %s -update): %v", path, t.Name(), err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}
