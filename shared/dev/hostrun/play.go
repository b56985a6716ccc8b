package hostrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tidegate/tidegate/shared/dev/sandbox"
)

// waitDelay bounds how long a process's output is read after it ends: a child that kept the
// pipes open is not waited on.
const waitDelay = 2 * time.Second

// run is one pod played: its spec as first seen and how far its process has come.
type run struct {
	pod *corev1.Pod
	dir string // set by prepare

	// stopping is closed once the pod is gone or going; grace is then how long its process has
	// between SIGTERM and SIGKILL.
	stopping chan struct{}
	stopOnce sync.Once
	grace    time.Duration

	mu       sync.Mutex
	progress *progress // nil until the install begins
}

func newRun(p *corev1.Pod) *run { return &run{pod: p.DeepCopy(), stopping: make(chan struct{})} }

// stop ends rn's process as a kubelet ends a container of a pod going: SIGTERM, then SIGKILL once
// grace has passed. Only the first call counts.
func (rn *run) stop(grace time.Duration) {
	rn.stopOnce.Do(func() {
		rn.grace = grace
		close(rn.stopping)
	})
}

func (rn *run) stopped() bool {
	select {
	case <-rn.stopping:
		return true
	default:
		return false
	}
}

// ending is how rn's sandbox is to end: with the runner (ctx), or as rn's pod goes.
func (rn *run) ending(ctx context.Context, log *slog.Logger) *ending {
	return &ending{ctx: ctx, stop: rn.stopping, grace: func() time.Duration { return rn.grace }, log: log}
}

func (rn *run) set(p progress) {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	rn.progress = &p
}

// status is what rn's pod's status should show; ok is false before the install begins.
func (rn *run) status() (corev1.PodStatus, bool) {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	if rn.progress == nil {
		return corev1.PodStatus{}, false
	}
	return statusOf(rn.pod, *rn.progress), true
}

// play runs rn's pod: the install container, then, if it succeeded and the pod is not going, the
// app container, showing each step in the pod's status. Once the pod is going and its process has
// ended, it removes the pod, as a kubelet does, and the pod's folder; when the runner ends (ctx),
// a process still running is killed and the pod left for the next runner.
func (r *Runner) play(ctx context.Context, rn *run) {
	p := rn.pod
	log := r.opt.Log.With("host", p.Name, "pod_uid", string(p.UID))
	defer r.leave(ctx, rn, log)
	if err := r.prepare(ctx, rn); err != nil {
		log.WarnContext(ctx, "preparing a host's process", "error", err)
		return
	}
	began := time.Now()
	rn.set(progress{Stage: installing, Began: began})
	r.show(ctx, rn)
	log.InfoContext(ctx, "installing a host's release")
	code, err := r.exec(ctx, rn, p.Spec.InitContainers, nil)
	if ctx.Err() != nil || rn.stopped() {
		return
	}
	if err != nil || code != 0 {
		log.WarnContext(ctx, "a host's install failed", "exit_code", code, "error", err)
		rn.set(progress{Stage: installFailed, Began: began, Ended: time.Now(), ExitCode: failed(code, err)})
		r.show(ctx, rn)
		return
	}
	secrets, err := r.secrets(ctx, p)
	if err != nil {
		log.WarnContext(ctx, "reading a host's environment", "error", err)
		return
	}
	started := time.Now()
	rn.set(progress{Stage: running, Began: began, Started: started})
	r.show(ctx, rn)
	log.InfoContext(ctx, "starting a host's process")
	code, err = r.exec(ctx, rn, p.Spec.Containers, secrets)
	if ctx.Err() != nil {
		return
	}
	log.InfoContext(ctx, "a host's process exited", "exit_code", failed(code, err), "error", err)
	rn.set(progress{Stage: exited, Began: began, Started: started, Ended: time.Now(), ExitCode: failed(code, err)})
	r.show(ctx, rn)
}

// leave waits until rn's pod is going (or the runner ends), then, its process having ended,
// removes the pod and its folder and forgets rn.
func (r *Runner) leave(ctx context.Context, rn *run, log *slog.Logger) {
	select {
	case <-rn.stopping:
		r.remove(ctx, rn.pod, log)
	case <-ctx.Done():
	}
	if rn.dir != "" {
		os.RemoveAll(rn.dir)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.runs, rn.pod.UID)
}

// remove deletes pod p, whose process has ended, at once: the last step of a pod's deletion,
// which kwok leaves to the runner for the pods it plays. The UID precondition spares a newer pod
// of the same name; a pod already gone is no error.
func (r *Runner) remove(ctx context.Context, p *corev1.Pod, log *slog.Logger) {
	zero := int64(0)
	err := r.kc.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &p.UID},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) && ctx.Err() == nil {
		log.WarnContext(ctx, "removing a host's pod once its process ended", "error", err)
	}
}

// failed is the exit code to show: code, or 127 (a shell's "could not run") when the process did
// not start at all.
func failed(code int, err error) int32 {
	if err != nil && code == 0 {
		return 127
	}
	return int32(code)
}

// prepare marks rn's pod as played here (kwok's pod-ready stage then leaves it alone), makes its
// volumes and log files, and has kwok serve those files as its containers' logs.
func (r *Runner) prepare(ctx context.Context, rn *run) error {
	p := rn.pod
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid": p.UID, "annotations": map[string]string{sandbox.ProcessAnnotation: "true"}}})
	if _, err := r.kc.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("marking pod %s as run here: %w", p.Name, err)
	}
	rn.dir = filepath.Join(r.dir, string(p.UID))
	if err := os.MkdirAll(filepath.Join(rn.dir, "logs"), 0o711); err != nil {
		return err
	}
	for _, v := range p.Spec.Volumes {
		if v.EmptyDir == nil {
			return fmt.Errorf("pod %s has volume %s, which is not an emptyDir: the runner makes emptyDirs only", p.Name, v.Name)
		}
		if err := r.userDir(filepath.Join(rn.dir, "volumes", v.Name)); err != nil {
			return err
		}
	}
	for _, c := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
		if err := os.WriteFile(logFile(rn.dir, c.Name), nil, 0o600); err != nil {
			return err
		}
	}
	return r.serveLogs(ctx, rn)
}

// userDir makes dir for user 1000 to write in.
func (r *Runner) userDir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o711); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	if r.asRoot {
		return os.Chown(dir, 1000, 1000)
	}
	return nil
}

func logFile(dir, container string) string { return filepath.Join(dir, "logs", container+".log") }

// secrets reads the Secrets pod's containers take their environment from.
func (r *Runner) secrets(ctx context.Context, p *corev1.Pod) (map[string]map[string][]byte, error) {
	out := map[string]map[string][]byte{}
	for _, c := range p.Spec.Containers {
		for _, from := range c.EnvFrom {
			if from.SecretRef == nil {
				continue
			}
			s, err := r.kc.CoreV1().Secrets(p.Namespace).Get(ctx, from.SecretRef.Name, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("reading Secret %s: %w", from.SecretRef.Name, err)
			}
			out[s.Name] = s.Data
		}
	}
	return out, nil
}

// exec runs each of containers in turn (a host has one of each kind) under bwrap, its output to
// its log file, and answers the last one's exit code. secrets are nil for the install, which
// takes nothing from them.
func (r *Runner) exec(ctx context.Context, rn *run, containers []corev1.Container, secrets map[string]map[string][]byte) (int, error) {
	for _, c := range containers {
		if rn.stopped() {
			return 0, nil
		}
		code, err := r.execOne(ctx, rn, c, secrets)
		if err != nil || code != 0 {
			return code, err
		}
	}
	return 0, nil
}

func (r *Runner) execOne(ctx context.Context, rn *run, c corev1.Container, secrets map[string]map[string][]byte) (int, error) {
	port := 0
	if secrets != nil {
		var err error
		if port, err = freePort(); err != nil {
			return 0, err
		}
	}
	env, err := containerEnv(rn.pod, c, secrets, port)
	if err != nil {
		return 0, err
	}
	f, err := openKept(logFile(rn.dir, c.Name), r.kept())
	if err != nil {
		return 0, err
	}
	defer f.Close()
	log := &criLog{w: f, now: time.Now}
	stdout, stderr := log.stream("stdout"), log.stream("stderr")
	defer stdout.Close()
	defer stderr.Close()
	s := jail{Hostname: rn.pod.Name, System: r.system, Dir: c.WorkingDir, Argv: append(append([]string{}, c.Command...), c.Args...)}
	for _, m := range c.VolumeMounts {
		s.Mounts = append(s.Mounts, mount{Source: filepath.Join(rn.dir, "volumes", m.Name), Target: m.MountPath, ReadOnly: m.ReadOnly})
	}
	cmd := exec.Command(r.bwrap, bwrapArgs(s)...)
	cmd.Stdout, cmd.Stderr, cmd.WaitDelay = stdout, stderr, waitDelay
	cmd.SysProcAttr = r.credential()
	err = runWithEnv(cmd, env, rn.ending(ctx, r.opt.Log.With("host", rn.pod.Name, "container", c.Name)))
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return exit.ExitCode(), nil
	}
	return 0, err
}

// freePort is a loopback port nothing listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port for a host: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// show writes what rn's process has come to into its pod's status. The patch names the pod's
// UID, so it never lands on another pod of the same name; a failure is left to the next pass,
// which writes the status again when the pod does not show it.
func (r *Runner) show(ctx context.Context, rn *run) {
	status, ok := rn.status()
	if !ok {
		return
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"uid": rn.pod.UID}, "status": status})
	if err != nil {
		return
	}
	_, err = r.kc.CoreV1().Pods(rn.pod.Namespace).Patch(ctx, rn.pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil && ctx.Err() == nil {
		r.opt.Log.DebugContext(ctx, "writing a host's status", "host", rn.pod.Name, "error", err)
	}
}
