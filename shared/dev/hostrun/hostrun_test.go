package hostrun

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestPlays: the runner plays its stack's hosts alone: not a pod without our labels (a tenant's
// copy of them included), not one being deleted, not one Skip leaves to kwok (--never-register),
// and not one a previous runner played to its end; one it already plays it keeps playing to the
// end.
func TestPlays(t *testing.T) {
	host, _ := hostPod(t, launch(nil), "u-host")
	never := host.DeepCopy()
	never.UID = "u-never"
	r := &Runner{
		opt:  Options{Skip: func(p *corev1.Pod) bool { return p.UID == "u-never" }},
		runs: map[types.UID]*run{"u-played": {}},
	}
	foreign := host.DeepCopy()
	foreign.Annotations = map[string]string{}
	going := host.DeepCopy()
	going.DeletionTimestamp = &metav1.Time{}
	over := host.DeepCopy()
	over.Status.Phase = corev1.PodFailed
	played := over.DeepCopy()
	played.UID = "u-played"
	for name, tc := range map[string]struct {
		pod  *corev1.Pod
		want bool
	}{
		"a new host":               {host, true},
		"a pod not ours":           {foreign, false},
		"a pod being deleted":      {going, false},
		"a host never registered":  {never, false},
		"a host over before":       {over, false},
		"a host played to its end": {played, true},
	} {
		if got := r.plays(tc.pod); got != tc.want {
			t.Errorf("plays(%s) = %v, want %v", name, got, tc.want)
		}
	}
}

// TestNewWithoutBwrap: a machine without bwrap cannot run hosts, and New says what to install
// before it reaches for any cluster.
func TestNewWithoutBwrap(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := New(Options{Kubeconfig: "/nonexistent"})
	if !errors.Is(err, ErrCannotRun) || !strings.Contains(err.Error(), "bubblewrap") {
		t.Errorf("New without bwrap on PATH = %v, want ErrCannotRun saying to install bubblewrap", err)
	}
}

// TestNewRunsHere: where bwrap is (scripts/tools-hostrun.sh installs it), New's trial sandbox
// starts, and Run removes the hosts' folder when it ends.
func TestNewRunsHere(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not on PATH: scripts/tools-hostrun.sh installs bubblewrap")
	}
	r, err := New(Options{Kubeconfig: writeKubeconfig(t), Every: time.Hour})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if _, err := os.Stat(r.dir); err != nil {
		t.Fatalf("the hosts' folder: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r.Run(ctx)
	if _, err := os.Stat(r.dir); !os.IsNotExist(err) {
		t.Errorf("after Run the hosts' folder %s is still there: %v", r.dir, err)
	}
}

// writeKubeconfig is a kubeconfig naming a server nobody serves: New makes clients without
// calling it.
func writeKubeconfig(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	const cfg = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
