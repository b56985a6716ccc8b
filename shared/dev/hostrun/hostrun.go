// Package hostrun runs the sandbox's hosted apps for real, for `tidegate dev`: each hosting pod
// kwok would only pretend to run is played by processes on this machine, as a kubelet would run
// the pod's two containers — the install's script over the release's presigned sources, then the
// start command — each under bwrap, as user 1000 with the pod's environment alone. The process
// registers itself; the pod's status follows it, and its output is the pod's log.
package hostrun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/podspec"
)

// ErrCannotRun is what New wraps when this machine cannot run hosts: bwrap missing or refused,
// or neither node nor python3 where the sandbox looks for them.
var ErrCannotRun = errors.New("this machine cannot run hosted apps' processes")

// Options say which pods to run and where.
type Options struct {
	// Kubeconfig reaches the sandbox cluster.
	Kubeconfig string
	// Namespace is the hosting namespace; Stack the label value (podspec.StackValue) of the
	// stack whose hosts these are: another stack's pods in the namespace are left alone.
	Namespace, Stack string
	// Skip, when set, names pods left to kwok, never run: their hosts never register.
	Skip func(*corev1.Pod) bool
	// Every is how often the pods are listed.
	Every time.Duration
	Log   *slog.Logger
}

// Runner plays the stack's hosting pods with processes of this machine.
type Runner struct {
	opt    Options
	kc     kubernetes.Interface
	dc     dynamic.Interface
	bwrap  string
	system []systemPath
	dir    string // the pods' folders, one per pod UID
	asRoot bool   // the runner is root, so bwrap is started as user 1000 itself
	keep   int64  // the most of a container's output kept; 0 is maxKept

	mu   sync.Mutex
	runs map[types.UID]*run
	wg   sync.WaitGroup
}

// New checks that this machine can run hosts (bwrap works, node or python3 is there) and makes a
// Runner; an error wrapping ErrCannotRun says what is missing.
func New(opt Options) (*Runner, error) {
	r := &Runner{opt: opt, runs: map[types.UID]*run{}, asRoot: os.Geteuid() == 0}
	if r.opt.Log == nil {
		r.opt.Log = slog.New(slog.DiscardHandler)
	}
	if err := r.probe(); err != nil {
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", opt.Kubeconfig)
	if err == nil {
		r.kc, err = kubernetes.NewForConfig(cfg)
	}
	if err == nil {
		r.dc, err = dynamic.NewForConfig(cfg)
	}
	if err != nil {
		os.RemoveAll(r.dir)
		return nil, fmt.Errorf("reaching the cluster of kubeconfig %s: %w", opt.Kubeconfig, err)
	}
	return r, nil
}

// Run plays the stack's pods every opt.Every until ctx ends, then ends every process and removes
// their folders.
func (r *Runner) Run(ctx context.Context) {
	defer os.RemoveAll(r.dir)
	defer r.wg.Wait()
	t := time.NewTicker(r.opt.Every)
	defer t.Stop()
	for {
		if err := r.pass(ctx); err != nil && ctx.Err() == nil {
			r.opt.Log.WarnContext(ctx, "running hosts", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// pass starts a process for each new pod, ends those whose pod is gone or going, and writes the
// status again of a pod whose status someone else (kwok, before it saw the pod was ours) wrote.
func (r *Runner) pass(ctx context.Context) error {
	selector := podspec.StackSelector(podspec.Selector(), r.opt.Stack)
	pods, err := r.kc.CoreV1().Pods(r.opt.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return fmt.Errorf("listing hosts: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	listed := map[types.UID]bool{}
	for i := range pods.Items {
		p := &pods.Items[i]
		listed[p.UID] = true
		rn, ok := r.runs[p.UID]
		switch {
		case ok && p.DeletionTimestamp != nil:
			rn.stop(graceOf(p))
		case !ok && r.leftOver(p):
			r.remove(ctx, p, r.opt.Log.With("host", p.Name, "pod_uid", string(p.UID)))
		case !r.plays(p):
		case !ok:
			r.start(ctx, p)
		default:
			if want, ok := rn.status(); ok && !shows(p.Status, want) {
				r.show(ctx, rn)
			}
		}
	}
	for uid, rn := range r.runs {
		if !listed[uid] {
			// Gone without a deletion seen (a force delete): the spec's grace, as a kubelet.
			rn.stop(graceOf(rn.pod))
		}
	}
	return nil
}

// defaultGrace is a pod's terminationGracePeriodSeconds when its spec has none: Kubernetes'
// default.
const defaultGrace = 30 * time.Second

// graceOf is how long p's process has between SIGTERM and SIGKILL as a kubelet reckons it: the
// deletion's grace period, else the spec's terminationGracePeriodSeconds, else defaultGrace.
func graceOf(p *corev1.Pod) time.Duration {
	switch {
	case p.DeletionGracePeriodSeconds != nil:
		return time.Duration(*p.DeletionGracePeriodSeconds) * time.Second
	case p.Spec.TerminationGracePeriodSeconds != nil:
		return time.Duration(*p.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	return defaultGrace
}

// leftOver says p is a pod of ours a previous runner played, now going with no process of this
// runner's: that runner ended with it, so it is removed.
func (r *Runner) leftOver(p *corev1.Pod) bool {
	_, ours := podspec.AppOf(p)
	return ours && p.DeletionTimestamp != nil && p.Annotations[sandbox.ProcessAnnotation] == "true"
}

// kept is the most of a container's output kept on this machine.
func (r *Runner) kept() int64 {
	if r.keep > 0 {
		return r.keep
	}
	return maxKept
}

// plays says p is a pod of ours to run: not going, not left to kwok, and, when no process of the
// runner plays it yet, not over (a pod a previous runner played to its end stays as it ended).
func (r *Runner) plays(p *corev1.Pod) bool {
	if _, ours := podspec.AppOf(p); !ours || p.DeletionTimestamp != nil {
		return false
	}
	if r.opt.Skip != nil && r.opt.Skip(p) {
		return false
	}
	if _, running := r.runs[p.UID]; running {
		return true
	}
	return p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// start plays p in a goroutine of its own, until p is gone or the runner stops.
func (r *Runner) start(ctx context.Context, p *corev1.Pod) {
	rn := newRun(p)
	r.runs[p.UID] = rn
	r.wg.Go(func() { r.play(ctx, rn) })
}
