package jobobjects

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/jobs"
)

// Selector selects job id's objects and pods: everything Apply stamped with it.
func Selector(id string) string {
	return jobs.IDKey + "=" + id
}

// Pods reads job j's pods in its cluster now: those of its Jobs and workloads, and its bare ones.
func Pods(ctx context.Context, kc kubernetes.Interface, j jobs.Job) ([]corev1.Pod, error) {
	l, err := kc.CoreV1().Pods(j.Namespace).List(ctx, metav1.ListOptions{LabelSelector: Selector(j.ID)})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

// Newest is the pod of pods created last; false when there is none.
func Newest(pods []corev1.Pod) (corev1.Pod, bool) {
	if len(pods) == 0 {
		return corev1.Pod{}, false
	}
	return slices.MaxFunc(pods, func(x, y corev1.Pod) int { return x.CreationTimestamp.Compare(y.CreationTimestamp.Time) }), true
}

// Logs reads pod p's logs as opts asks, at most limit bytes of them, as lines (none for an empty
// log).
func Logs(ctx context.Context, kc kubernetes.Interface, p corev1.Pod, opts *corev1.PodLogOptions, limit int64) ([]string, error) {
	rc, err := kc.CoreV1().Pods(p.Namespace).GetLogs(p.Name, opts).Stream(ctx)
	if err != nil {
		return nil, fmt.Errorf("the cluster did not give pod %s's logs: %w", p.Name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, limit))
	if err != nil {
		return nil, fmt.Errorf("reading pod %s's logs: %w", p.Name, err)
	}
	if len(b) == 0 {
		return []string{}, nil
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n"), nil
}

// finalReads bound what the beat reads of a job that ended: a missing placement or tail never
// holds a job's end.
const finalReads = 5 * time.Second

// EndPods reads job j's pods once it ended, for its placement and last lines, or none when they
// cannot be read within finalReads.
func EndPods(ctx context.Context, kc kubernetes.Interface, j jobs.Job) []corev1.Pod {
	ctx, cancel := context.WithTimeout(ctx, finalReads)
	defer cancel()
	pods, err := Pods(ctx, kc, j)
	if err != nil {
		return nil
	}
	return pods
}

// LogTail is the last lines of the newest pod's first container, or nothing if the logs cannot be
// read within finalReads: a missing tail never holds a job's end.
func LogTail(ctx context.Context, kc kubernetes.Interface, pods []corev1.Pod, lines int64) []string {
	p, ok := Newest(pods)
	if !ok || len(p.Spec.Containers) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, finalReads)
	defer cancel()
	tail, err := Logs(ctx, kc, p, &corev1.PodLogOptions{Container: p.Spec.Containers[0].Name, TailLines: &lines}, 64<<10)
	if err != nil {
		return nil
	}
	return tail
}

// Nodes reads the nodes pods are on, for their labels. A node that cannot be read is left out,
// and the first such error is answered beside the nodes that could be.
func Nodes(ctx context.Context, kc kubernetes.Interface, pods []corev1.Pod) (map[string]corev1.Node, error) {
	out := map[string]corev1.Node{}
	var first error
	tried := map[string]bool{}
	for _, p := range pods {
		if tried[p.Spec.NodeName] || p.Spec.NodeName == "" {
			continue
		}
		tried[p.Spec.NodeName] = true
		n, err := kc.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			first = cmp.Or(first, err)
			continue
		}
		out[p.Spec.NodeName] = *n
	}
	return out, first
}

// Events reads the cluster's events about job j's objects (by the names in its manifests) and
// about pods.
func Events(ctx context.Context, kc kubernetes.Interface, j jobs.Job, pods []corev1.Pod) ([]corev1.Event, error) {
	names := map[string]bool{}
	for _, p := range pods {
		names[p.Name] = true
	}
	for _, m := range j.Manifests {
		if meta, ok := m["metadata"].(map[string]any); ok {
			if n, ok := meta["name"].(string); ok {
				names[n] = true
			}
		}
	}
	l, err := kc.CoreV1().Events(j.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []corev1.Event
	for _, e := range l.Items {
		if names[e.InvolvedObject.Name] {
			out = append(out, e)
		}
	}
	return out, nil
}
