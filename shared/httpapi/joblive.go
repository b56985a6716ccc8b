package httpapi

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/jobobjects"
	"github.com/tidegate/tidegate/shared/jobs"
)

// maxLogBytes bounds what one logs request reads from the cluster: API Gateway answers at most
// 6 MB, and a person reads far less.
const maxLogBytes = 1 << 20

// livePods are the job's pods in its cluster right now.
func (a *api) livePods(ctx context.Context, j jobs.Job) (kubernetes.Interface, []corev1.Pod, error) {
	if a.clusters == nil {
		return nil, nil, Errorf(CodeUnavailable, "no cluster access is configured")
	}
	if j.Roaming() {
		return nil, nil, Errorf(CodeConflict, "job %s waits for a region among %s and has nothing in any cluster yet; its pending_reason says why", j.ID, strings.Join(j.Regions, ", "))
	}
	kc, err := a.clusters.Client(ctx, j.Region)
	if err != nil {
		return nil, nil, a.clusterError(ctx, "reaching the cluster", err)
	}
	pods, err := jobobjects.Pods(ctx, kc.CoreV1().RESTClient(), j)
	if err != nil {
		return nil, nil, a.clusterError(ctx, "listing the job's pods", err)
	}
	return kc, pods, nil
}

// jobPods is GET /api/v1/jobs/{id}/pods.
func (a *api) jobPods(w http.ResponseWriter, r *http.Request) error {
	j, err := a.visibleJob(r)
	if err != nil {
		return err
	}
	_, pods, err := a.livePods(r.Context(), j)
	if err != nil {
		return err
	}
	out := []map[string]any{}
	for _, p := range pods {
		out = append(out, podView(p))
	}
	return writeJSON(w, http.StatusOK, map[string]any{"items": out})
}

// jobEvents is GET /api/v1/jobs/{id}/events?cursor: the cluster's events about the job's objects
// and pods, from a page that reads at most a budget of the namespace's events
// (jobobjects.Events), with a cursor to read on from when there are more.
func (a *api) jobEvents(w http.ResponseWriter, r *http.Request) error {
	cursor, err := cursorParam(r.URL.Query())
	if err != nil {
		return err
	}
	j, err := a.visibleJob(r)
	if err != nil {
		return err
	}
	kc, pods, err := a.livePods(r.Context(), j)
	if err != nil {
		return err
	}
	events, next, err := jobobjects.Events(r.Context(), kc.CoreV1().RESTClient(), j, pods, cursor)
	if errors.Is(err, jobobjects.ErrCursorExpired) {
		return Invalid("the cursor has expired (the cluster keeps one for about five minutes); list the events again without it",
			FieldProblem{"cursor", "expired; leave it out"})
	}
	if err != nil {
		return a.clusterError(r.Context(), "listing the job's events", err)
	}
	out := []map[string]any{}
	for _, e := range events {
		first, last := e.FirstTimestamp.Time, e.LastTimestamp.Time
		if !e.EventTime.IsZero() { // events.k8s.io-style events set only eventTime
			first = cmp.Or(first, e.EventTime.Time)
			last = cmp.Or(last, e.EventTime.Time)
		}
		out = append(out, map[string]any{
			"type": e.Type, "reason": e.Reason, "message": e.Message, "count": max(e.Count, 1),
			"object": e.InvolvedObject.Kind + "/" + e.InvolvedObject.Name, "first_seen": timeOrNil(first), "last_seen": timeOrNil(last),
			"source": map[string]any{"component": cmp.Or(e.Source.Component, e.ReportingController), "host": cmp.Or(e.Source.Host, e.ReportingInstance)},
		})
	}
	return writeJSON(w, http.StatusOK, listPage[map[string]any]{Items: out, NextCursor: nextCursor(next)})
}

// jobLogs is GET /api/v1/jobs/{id}/logs?container&tail&previous&since_seconds: the newest pod's.
// A finished job whose pods are gone answers the tail kept on its record.
func (a *api) jobLogs(w http.ResponseWriter, r *http.Request) error {
	j, err := a.visibleJob(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	opts := &corev1.PodLogOptions{Container: q.Get("container")}
	var bad []FieldProblem
	if s := q.Get("tail"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 || n > 10000 {
			bad = append(bad, FieldProblem{"tail", "a whole number from 1 to 10000"})
		}
		opts.TailLines = &n
	}
	if s := q.Get("since_seconds"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 {
			bad = append(bad, FieldProblem{"since_seconds", "a whole number of seconds above 0"})
		}
		opts.SinceSeconds = &n
	}
	if s := q.Get("previous"); s != "" {
		v, err := strconv.ParseBool(s)
		if err != nil {
			bad = append(bad, FieldProblem{"previous", "true or false"})
		}
		opts.Previous = v
	}
	if len(bad) > 0 {
		return Invalid("fix the listed query parameters", bad...)
	}
	kc, pods, err := a.livePods(r.Context(), j)
	if err != nil {
		return err
	}
	if len(pods) == 0 {
		return writeJSON(w, http.StatusOK, map[string]any{"pod": nil, "lines": orEmpty(j.LogTail), "from": "record"})
	}
	p, _ := jobobjects.Newest(pods)
	if opts.Container == "" && len(p.Spec.Containers) > 0 {
		opts.Container = p.Spec.Containers[0].Name
	}
	if err := checkLogContainer(p, opts); err != nil {
		return err
	}
	lines, err := jobobjects.Logs(r.Context(), kc.CoreV1().RESTClient(), p, opts, maxLogBytes)
	if err != nil {
		return a.clusterError(r.Context(), "reading the pod's log", err)
	}
	return writeJSON(w, http.StatusOK, map[string]any{"pod": p.Name, "container": opts.Container, "lines": lines, "from": "cluster"})
}

// checkLogContainer refuses, naming the choices, a container the pod does not have or a previous
// run it has not had: the cluster's own refusal would reach the client only as a 503.
func checkLogContainer(p corev1.Pod, opts *corev1.PodLogOptions) error {
	var names []string
	for _, c := range append(slices.Clone(p.Spec.InitContainers), p.Spec.Containers...) {
		names = append(names, c.Name)
	}
	if !slices.Contains(names, opts.Container) {
		return Invalid("fix the listed query parameters", FieldProblem{"container", fmt.Sprintf("pod %s has no container %q; it has %s", p.Name, opts.Container, strings.Join(names, ", "))})
	}
	if !opts.Previous {
		return nil
	}
	for _, st := range append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
		if st.Name == opts.Container && st.LastTerminationState.Terminated != nil {
			return nil
		}
	}
	return Invalid("fix the listed query parameters", FieldProblem{"previous", fmt.Sprintf("container %q of pod %s has not restarted, so it has no previous run", opts.Container, p.Name)})
}

// liveBatchJobs are the live job's batch Jobs in its cluster now (a CronJob's runs among them),
// as jobobjects.ClusterJobs shows them. None for a job that is not live (its record keeps them
// from its end); a failed read is the fixed text clusterProblem gives, the cause logged.
func (a *api) liveBatchJobs(ctx context.Context, j jobs.Job) ([]jobs.ClusterJob, string) {
	if !live(j) || a.clusters == nil {
		return nil, ""
	}
	kc, err := a.clusters.Client(ctx, j.Region)
	if err != nil {
		return nil, a.clusterProblem(ctx, "reaching the cluster", err)
	}
	l, err := kc.BatchV1().Jobs(j.Namespace).List(ctx, metav1.ListOptions{LabelSelector: jobobjects.Selector(j.ID)})
	if err != nil {
		return nil, a.clusterProblem(ctx, "listing the job's batch Jobs", err)
	}
	return jobobjects.ClusterJobs(l.Items), ""
}

// podView is one pod as GET /jobs/{id}/pods shows it: where it runs, its addresses and times,
// its conditions, and each container (init containers apart) with its image and state.
func podView(p corev1.Pod) map[string]any {
	conditions := []map[string]any{}
	for _, c := range p.Status.Conditions {
		conditions = append(conditions, map[string]any{"type": c.Type, "status": c.Status, "reason": c.Reason, "message": c.Message, "last_transition_time": timeOrNil(c.LastTransitionTime.Time)})
	}
	var start time.Time
	if p.Status.StartTime != nil {
		start = p.Status.StartTime.Time
	}
	return map[string]any{
		"name": p.Name, "phase": p.Status.Phase, "node_name": p.Spec.NodeName, "labels": p.Labels,
		"created_at": timeOrNil(p.CreationTimestamp.Time), "start_time": timeOrNil(start),
		"host_ip": p.Status.HostIP, "pod_ip": p.Status.PodIP, "conditions": conditions,
		"containers":      containerViews(p.Spec.Containers, p.Status.ContainerStatuses),
		"init_containers": containerViews(p.Spec.InitContainers, p.Status.InitContainerStatuses),
	}
}

// containerViews joins the spec's containers with their statuses, in the spec's order: a
// container not started yet has its image and no state.
func containerViews(spec []corev1.Container, statuses []corev1.ContainerStatus) []map[string]any {
	out := []map[string]any{}
	for _, c := range spec {
		v := map[string]any{"name": c.Name, "image": c.Image, "ready": false, "restart_count": 0, "state": nil}
		for _, st := range statuses {
			if st.Name == c.Name {
				v["ready"], v["restart_count"], v["state"] = st.Ready, st.RestartCount, st.State
				if st.ImageID != "" {
					v["image_id"] = st.ImageID
				}
			}
		}
		out = append(out, v)
	}
	return out
}

// timeOrNil is t in UTC, or nil for the zero time, so an unset time reads null and not year 1.
func timeOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC()
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// live reports whether job j's objects are what the API shows of it rather than its record: it is
// active, or it has ended and the details of its end are not kept on the record yet (they follow
// the end within a moment, read from those objects).
func live(j jobs.Job) bool { return j.Status.Active() || j.DetailsDue }

// liveExits answers, for an ended job whose end's details are not kept yet, the containers of its
// pods that ended in error, as its record will keep them a moment later; the record's otherwise.
// A failed read answers the record's (none yet): the exits are details, never the job's status.
func (a *api) liveExits(ctx context.Context, j jobs.Job) []jobs.Exit {
	if !j.DetailsDue || a.clusters == nil {
		return j.Exits
	}
	_, pods, err := a.livePods(ctx, j)
	if err != nil {
		return j.Exits
	}
	return jobobjects.Exits(pods)
}

// livePlacement answers where a live job's pods are now; the record's placement otherwise.
func (a *api) livePlacement(ctx context.Context, j jobs.Job) map[string]any {
	if !live(j) || a.clusters == nil {
		return j.Placement
	}
	kc, pods, err := a.livePods(ctx, j)
	if err != nil {
		return map[string]any{"node_lookup_error": a.clusterProblem(ctx, "listing the job's pods", err)}
	}
	if len(pods) == 0 {
		return j.Placement
	}
	nodes, err := jobobjects.Nodes(ctx, kc.CoreV1().RESTClient(), pods)
	pl := jobobjects.Placement(pods, nodes)
	if err != nil {
		var failed []string
		for _, n := range pl["nodes"].([]map[string]any) {
			if n["lookup_failed"] == true {
				failed = append(failed, n["name"].(string))
			}
		}
		pl["node_lookup_error"] = a.clusterProblem(ctx, "reading node "+strings.Join(failed, ", "), err)
	}
	return pl
}
