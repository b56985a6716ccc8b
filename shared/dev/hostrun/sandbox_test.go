package hostrun

import (
	"context"
	"fmt"
	"log/slog"
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

// localRunner is a Runner that runs containers under bwrap on this machine and reaches no
// cluster: enough for execOne.
func localRunner(t *testing.T) *Runner {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not on PATH: scripts/tools-hostrun.sh installs bubblewrap")
	}
	r := &Runner{opt: Options{Log: slog.New(slog.DiscardHandler)}, asRoot: os.Geteuid() == 0}
	if err := r.probe(); err != nil {
		t.Fatalf("probe: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(r.dir) })
	return r
}

// shRun is a run of a pod whose one container runs script under sh, its folder made.
func shRun(t *testing.T, r *Runner, script string) (*run, corev1.Container) {
	t.Helper()
	c := corev1.Container{Name: "app", Command: []string{"sh", "-c", script}}
	rn := newRun(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-r1-0a1b2c3d", UID: types.UID("u-" + t.Name())}, Spec: corev1.PodSpec{Containers: []corev1.Container{c}}})
	rn.dir = filepath.Join(r.dir, string(rn.pod.UID))
	if err := os.MkdirAll(filepath.Join(rn.dir, "logs"), 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(logFile(rn.dir, c.Name), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return rn, c
}

// waitLog waits until rn's container's log holds want, and answers the log.
func waitLog(t *testing.T, rn *run, want string) string {
	t.Helper()
	var b []byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		b, _ = os.ReadFile(logFile(rn.dir, "app"))
		if strings.Contains(string(b), want) {
			return string(b)
		}
	}
	t.Fatalf("the log did not show %q within 10 s; it holds %q", want, b)
	return ""
}

type exit struct {
	code int
	err  error
	took time.Duration
}

// stopWhile runs rn's container, stops rn with grace once its log shows "up", and answers how the
// process ended and how long after the stop.
func stopWhile(t *testing.T, r *Runner, rn *run, c corev1.Container, grace time.Duration) exit {
	t.Helper()
	ended := make(chan exit, 1)
	go func() {
		code, err := r.execOne(context.Background(), rn, c, nil)
		ended <- exit{code: code, err: err}
	}()
	waitLog(t, rn, "stdout F up")
	stopped := time.Now()
	rn.stop(grace)
	select {
	case e := <-ended:
		e.took = time.Since(stopped)
		return e
	case <-time.After(grace + 15*time.Second):
		t.Fatalf("the process still ran %s after its stop with a grace of %s", grace+15*time.Second, grace)
	}
	return exit{}
}

// TestStopDrains: a process that traps SIGTERM is sent it when its pod goes, and what it writes
// on the way out is in its log; it ends well within its grace period.
func TestStopDrains(t *testing.T) {
	r := localRunner(t)
	rn, c := shRun(t, r, `trap 'echo draining on TERM; exit 0' TERM; echo up; while :; do sleep 0.1; done`)
	e := stopWhile(t, r, rn, c, 20*time.Second)
	if e.err != nil || e.code != 0 || e.took > 10*time.Second {
		t.Errorf("a process trapping TERM ended %d, %v, %s after its stop; want 0 well before its 20 s grace", e.code, e.err, e.took)
	}
	if log := waitLog(t, rn, "stdout F up"); !strings.Contains(log, "stdout F draining on TERM") {
		t.Errorf("the log of a process that traps TERM lacks its last line:\n%s", log)
	}
}

// TestStopKillsAfterGrace: a process that ignores SIGTERM is killed once its grace period has
// passed, not before.
func TestStopKillsAfterGrace(t *testing.T) {
	r := localRunner(t)
	rn, c := shRun(t, r, `trap '' TERM; echo up; while :; do sleep 0.1; done`)
	const grace = 2 * time.Second
	e := stopWhile(t, r, rn, c, grace)
	if e.err != nil || e.code != 128+9 || e.took < grace || e.took > grace+5*time.Second {
		t.Errorf("a process ignoring TERM ended %d, %v, %s after its stop; want killed (137) just after its %s grace", e.code, e.err, e.took, grace)
	}
}

// TestChattyProcessKept: a process that writes far more than what is kept leaves a log under the
// cap that holds its newest lines and not its oldest.
func TestChattyProcessKept(t *testing.T) {
	r := localRunner(t)
	r.keep = 64 << 10
	const lines = 20000 // about 1 MiB of log, sixteen times what is kept
	rn, c := shRun(t, r, fmt.Sprintf(`i=0; while [ $i -lt %d ]; do echo "chatty line $i"; i=$((i+1)); done`, lines))
	code, err := r.execOne(context.Background(), rn, c, nil)
	if err != nil || code != 0 {
		t.Fatalf("execOne = %d, %v", code, err)
	}
	b, err := os.ReadFile(logFile(rn.dir, c.Name))
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	if int64(len(b)) > r.keep {
		t.Errorf("the log is %d bytes, over the %d kept", len(b), r.keep)
	}
	if !strings.HasSuffix(log, fmt.Sprintf(" stdout F chatty line %d\n", lines-1)) || strings.Contains(log, "chatty line 0\n") {
		t.Errorf("the log does not hold the newest line alone of the oldest and newest; it begins %q and ends %q", log[:min(80, len(log))], log[max(0, len(log)-80):])
	}
}
