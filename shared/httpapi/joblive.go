package httpapi

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/dispatch"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/reconcile"
)

// maxLogBytes bounds what one logs request reads from the cluster: API Gateway answers at most
// 6 MB, and a person reads far less.
const maxLogBytes = 1 << 20

// livePods are the job's pods in its cluster right now.
func (a *api) livePods(ctx context.Context, j jobs.Job) (kubernetes.Interface, []corev1.Pod, error) {
	if a.clusters == nil {
		return nil, nil, Errorf(CodeUnavailable, "no cluster access is configured")
	}
	kc, err := a.clusters.Client(ctx, j.Region)
	if err != nil {
		return nil, nil, err
	}
	l, err := kc.CoreV1().Pods(j.Namespace).List(ctx, metav1.ListOptions{LabelSelector: dispatch.JobIDKey + "=" + j.ID})
	if err != nil {
		return nil, nil, err
	}
	return kc, l.Items, nil
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
	type podView struct {
		Name       string            `json:"name"`
		Phase      string            `json:"phase"`
		NodeName   string            `json:"node_name"`
		Conditions []map[string]any  `json:"conditions"`
		Containers []map[string]any  `json:"containers"`
		Labels     map[string]string `json:"labels"`
	}
	out := []podView{}
	for _, p := range pods {
		v := podView{Name: p.Name, Phase: string(p.Status.Phase), NodeName: p.Spec.NodeName, Labels: p.Labels, Conditions: []map[string]any{}, Containers: []map[string]any{}}
		for _, c := range p.Status.Conditions {
			v.Conditions = append(v.Conditions, map[string]any{"type": c.Type, "status": c.Status, "reason": c.Reason, "message": c.Message})
		}
		for _, c := range p.Status.ContainerStatuses {
			v.Containers = append(v.Containers, map[string]any{"name": c.Name, "ready": c.Ready, "restart_count": c.RestartCount, "state": c.State})
		}
		out = append(out, v)
	}
	return writeJSON(w, http.StatusOK, map[string]any{"items": out})
}

// jobEvents is GET /api/v1/jobs/{id}/events: the cluster's events about the job's objects and pods.
func (a *api) jobEvents(w http.ResponseWriter, r *http.Request) error {
	j, err := a.visibleJob(r)
	if err != nil {
		return err
	}
	kc, pods, err := a.livePods(r.Context(), j)
	if err != nil {
		return err
	}
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
	l, err := kc.CoreV1().Events(j.Namespace).List(r.Context(), metav1.ListOptions{})
	if err != nil {
		return err
	}
	out := []map[string]any{}
	for _, e := range l.Items {
		if names[e.InvolvedObject.Name] {
			out = append(out, map[string]any{
				"type": e.Type, "reason": e.Reason, "message": e.Message, "count": e.Count,
				"object": e.InvolvedObject.Kind + "/" + e.InvolvedObject.Name, "last_seen": e.LastTimestamp.Time,
			})
		}
	}
	return writeJSON(w, http.StatusOK, map[string]any{"items": out})
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
	p := slices.MaxFunc(pods, func(x, y corev1.Pod) int { return x.CreationTimestamp.Compare(y.CreationTimestamp.Time) })
	if opts.Container == "" && len(p.Spec.Containers) > 0 {
		opts.Container = p.Spec.Containers[0].Name
	}
	rc, err := kc.CoreV1().Pods(p.Namespace).GetLogs(p.Name, opts).Stream(r.Context())
	if err != nil {
		return Errorf(CodeUnavailable, "the cluster did not give pod %s's logs: %v", p.Name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxLogBytes))
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(b) == 0 {
		lines = []string{}
	}
	return writeJSON(w, http.StatusOK, map[string]any{"pod": p.Name, "container": opts.Container, "lines": lines, "from": "cluster"})
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// livePlacement answers where an active job's pods are now; the record's placement otherwise.
func (a *api) livePlacement(ctx context.Context, j jobs.Job) map[string]any {
	if !j.Status.Active() || a.clusters == nil {
		return j.Placement
	}
	kc, pods, err := a.livePods(ctx, j)
	if err != nil {
		return map[string]any{"node_lookup_error": err.Error()}
	}
	if len(pods) == 0 {
		return j.Placement
	}
	nodes := map[string]corev1.Node{}
	for _, p := range pods {
		if _, ok := nodes[p.Spec.NodeName]; ok || p.Spec.NodeName == "" {
			continue
		}
		n, err := kc.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			pl := reconcile.Placement(pods, nodes)
			pl["node_lookup_error"] = err.Error()
			return pl
		}
		nodes[p.Spec.NodeName] = *n
	}
	return reconcile.Placement(pods, nodes)
}
