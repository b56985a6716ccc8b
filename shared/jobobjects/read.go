package jobobjects

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/tidegate/tidegate/shared/jobs"
)

// The reads below take the REST client of a cluster's core API group (client-go's
// CoreV1().RESTClient()) and decode plain JSON into k8s.io/api's types, so that this package links
// no typed client set: dispatch applies through it, and a typed client set's scheme registers
// every API group in each cold start.

// get reads one GET of the core group into v, as JSON. A refusal comes back as the server's own
// *StatusError: Raw alone reports any Status it has no scheme for as "unknown".
func get(ctx context.Context, r *rest.Request, v any) error {
	b, err := r.SetHeader("Accept", "application/json").Do(ctx).Raw()
	if err != nil {
		var st metav1.Status
		if json.Unmarshal(b, &st) == nil && st.Kind == "Status" && st.Message != "" {
			return &apierrors.StatusError{ErrStatus: st}
		}
		return err
	}
	return json.Unmarshal(b, v)
}

// Selector selects job id's objects and pods: everything Apply stamped with it.
func Selector(id string) string {
	return jobs.IDKey + "=" + id
}

// Pods reads job j's pods in its cluster now: those of its Jobs and workloads, and its bare ones.
func Pods(ctx context.Context, core rest.Interface, j jobs.Job) ([]corev1.Pod, error) {
	var l corev1.PodList
	if err := get(ctx, core.Get().Namespace(j.Namespace).Resource("pods").Param("labelSelector", Selector(j.ID)), &l); err != nil {
		return nil, fmt.Errorf("listing job %s's pods: %w", j.ID, err)
	}
	return l.Items, nil
}

// podsOfChunk is how many jobs' pods one LIST of PodsOf asks for: a selector of a hundred ids
// stays a few kilobytes of URL.
const podsOfChunk = 100

// PodsOf reads the pods of the jobs ids, all of namespace ns, with one LIST for each hundred
// jobs, answered by job id: what a beat's pass reads of the jobs it sees end. One LIST a job would
// cost more than its share, as the API server answers a label selector by scanning the
// namespace's every pod. It answers what it read before an error too.
func PodsOf(ctx context.Context, core rest.Interface, ns string, ids []string) (map[string][]corev1.Pod, error) {
	out := make(map[string][]corev1.Pod, len(ids))
	for chunk := range slices.Chunk(ids, podsOfChunk) {
		var l corev1.PodList
		sel := jobs.IDKey + " in (" + strings.Join(chunk, ",") + ")"
		if err := get(ctx, core.Get().Namespace(ns).Resource("pods").Param("labelSelector", sel), &l); err != nil {
			return out, fmt.Errorf("listing the pods of %d jobs in namespace %s: %w", len(chunk), ns, err)
		}
		for _, p := range l.Items {
			id := p.Labels[jobs.IDKey]
			out[id] = append(out[id], p)
		}
	}
	return out, nil
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
func Logs(ctx context.Context, core rest.Interface, p corev1.Pod, opts *corev1.PodLogOptions, limit int64) ([]string, error) {
	r := core.Get().Namespace(p.Namespace).Resource("pods").Name(p.Name).SubResource("log")
	if opts.Container != "" {
		r = r.Param("container", opts.Container)
	}
	if opts.TailLines != nil {
		r = r.Param("tailLines", strconv.FormatInt(*opts.TailLines, 10))
	}
	if opts.SinceSeconds != nil {
		r = r.Param("sinceSeconds", strconv.FormatInt(*opts.SinceSeconds, 10))
	}
	if opts.Previous {
		r = r.Param("previous", "true")
	}
	rc, err := r.Stream(ctx)
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
func EndPods(ctx context.Context, core rest.Interface, j jobs.Job) []corev1.Pod {
	ctx, cancel := context.WithTimeout(ctx, finalReads)
	defer cancel()
	pods, err := Pods(ctx, core, j)
	if err != nil {
		return nil
	}
	return pods
}

// LogTail is the last lines of the newest pod's first container, or nothing if the logs cannot be
// read within finalReads: a missing tail never holds a job's end.
func LogTail(ctx context.Context, core rest.Interface, pods []corev1.Pod, lines int64) []string {
	p, ok := Newest(pods)
	if !ok || len(p.Spec.Containers) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, finalReads)
	defer cancel()
	tail, err := Logs(ctx, core, p, &corev1.PodLogOptions{Container: p.Spec.Containers[0].Name, TailLines: &lines}, 64<<10)
	if err != nil {
		return nil
	}
	return tail
}

// Nodes reads the nodes pods are on, for their labels and hardware. A node that cannot be read
// is left out, and every such node's error is answered, joined, beside the nodes that could be.
func Nodes(ctx context.Context, core rest.Interface, pods []corev1.Pod) (map[string]corev1.Node, error) {
	out := map[string]corev1.Node{}
	var errs []error
	tried := map[string]bool{}
	for _, p := range pods {
		if tried[p.Spec.NodeName] || p.Spec.NodeName == "" {
			continue
		}
		tried[p.Spec.NodeName] = true
		var n corev1.Node
		if err := get(ctx, core.Get().Resource("nodes").Name(p.Spec.NodeName), &n); err != nil {
			errs = append(errs, fmt.Errorf("reading node %s: %w", p.Spec.NodeName, err))
			continue
		}
		out[p.Spec.NodeName] = n
	}
	return out, errors.Join(errs...)
}

// Reading a job's events LISTs its namespace's, a page of eventsPage at a time: the API server
// cannot select the events of a set of objects, and a busy namespace (another job's thousands of
// pods) holds many. One request reads at most eventsBudget of them, then answers those of the job
// it found and where it stopped, to read on from.
var (
	eventsPage   = 250
	eventsBudget = 1000
)

// ErrCursorExpired is a cursor the cluster no longer takes: a LIST's continue token lasts about
// five minutes (until etcd compacts past it).
var ErrCursorExpired = errors.New("the cursor has expired")

// Events reads the cluster's events about job j's objects (by the names in its manifests) and
// about pods, from where cursor (a previous answer's next, or "") says, reading at most
// eventsBudget of the namespace's events; next is where to read on from, "" when all are read.
func Events(ctx context.Context, core rest.Interface, j jobs.Job, pods []corev1.Pod, cursor string) (events []corev1.Event, next string, err error) {
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
	var out []corev1.Event
	for read := 0; read < eventsBudget; {
		req := core.Get().Namespace(j.Namespace).Resource("events").Param("limit", strconv.Itoa(eventsPage))
		if cursor != "" {
			req = req.Param("continue", cursor)
		}
		var l corev1.EventList
		if err := get(ctx, req, &l); err != nil {
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				return nil, "", ErrCursorExpired
			}
			return nil, "", fmt.Errorf("listing the events of namespace %s: %w", j.Namespace, err)
		}
		for _, e := range l.Items {
			if names[e.InvolvedObject.Name] {
				out = append(out, e)
			}
		}
		read += len(l.Items)
		if cursor = l.Continue; cursor == "" {
			break
		}
	}
	return out, cursor, nil
}
