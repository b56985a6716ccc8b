package dispatch

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/aws/aws-lambda-go/events"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/jobobjects"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
)

// createRetried stores queued job id as createWith does, with retry policy retry.
func (r rig) createRetried(id, name string, retry *jobs.Retry, edit func(map[string]any)) (jobs.Job, error) {
	m := r.manifest(name)
	if edit != nil {
		edit(m)
	}
	now := r.clock.now()
	j := jobs.New(id, "ml", r.ns, region, jobs.DefaultPriority, nil, []map[string]any{m}, now)
	j.Retry = retry
	_, _, err := r.store.Create(context.Background(), j, jobs.Event(outbox.JobQueued, j, "", now), nil, now)
	return j, err
}

// podAnnotated sets annotation k=v on the Job's pod template, and a backoffLimit of 0 so that the
// Job fails with its first failed pod.
func podAnnotated(k, v string) func(map[string]any) {
	return func(m map[string]any) {
		spec := m["spec"].(map[string]any)
		spec["backoffLimit"] = 0
		tmpl := spec["template"].(map[string]any)
		tmpl["metadata"] = map[string]any{"annotations": map[string]any{k: v}}
	}
}

// interrupt gives job id's running pods of its first attempt the DisruptionTarget condition a
// spot reclaim sets (through the status subresource, as the kubelet or the taint manager would),
// and answers how many it gave it to.
func interrupt(t *testing.T, kc kubernetes.Interface, ns, id string) int {
	t.Helper()
	pods, err := kc.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: jobs.IDKey + "=" + id})
	if err != nil {
		t.Fatalf("listing job %s's pods: %v", id, err)
	}
	n := 0
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning || jobobjects.AttemptOf(p.Annotations) != 1 {
			continue
		}
		patch := fmt.Sprintf(`{"status":{"conditions":[{"type":"DisruptionTarget","status":"True","reason":"TerminationByKubelet","message":"the spot instance is being reclaimed","lastTransitionTime":%q}]}}`,
			time.Now().UTC().Format(time.RFC3339))
		if _, err := kc.CoreV1().Pods(ns).Patch(context.Background(), p.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
			t.Fatalf("interrupting pod %s: %v", p.Name, err)
		}
		n++
	}
	return n
}

// eventTypes counts job id's events by type.
func eventTypes(t *testing.T, r rig, id string) map[outbox.Type]int {
	return eventsByJob(t, r)[id]
}

// TestRetry is the beat and dispatch together on the sandbox: a job retried on spot interruption
// whose running pod gets DisruptionTarget is queued again with spot_interrupted, its first
// attempt's Job replaced by the second's, and succeeds, its history showing both attempts; a job
// whose pod fails with no retry policy fails; one retried on its exit code is retried once and
// then fails, its attempts used up.
func TestRetry(t *testing.T) {
	r := newRig(t, 3)
	kc, err := r.clusters.Client(context.Background(), region)
	if err != nil {
		t.Fatal(err)
	}
	spotPolicy := &jobs.Retry{Attempts: 2, On: []string{jobs.RetrySpotInterruption}}
	spot, err := r.createRetried("job-spot", "spot", spotPolicy, func(m map[string]any) {
		podAnnotated("pod-complete.stage.kwok.x-k8s.io/delay", "8s")(m)
	})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := r.createRetried("job-plain", "plain", nil, podAnnotated("tidegate.io/sandbox-exit-code", "3"))
	if err != nil {
		t.Fatal(err)
	}
	exit, err := r.createRetried("job-exit", "exit", &jobs.Retry{Attempts: 2, On: []string{"exit:3"}}, podAnnotated("tidegate.io/sandbox-exit-code", "3"))
	if err != nil {
		t.Fatal(err)
	}
	interrupted := 0
	ids := []string{spot.ID, plain.ID, exit.ID}
	for deadline := time.Now().Add(4 * time.Minute); ; time.Sleep(300 * time.Millisecond) {
		if err := r.dispatch.Drain(context.Background(), region); err != nil {
			t.Logf("Drain: %v", err)
		}
		if err := r.reconcile.HandleBeat(context.Background(), events.EventBridgeEvent{ID: "beat"}); err != nil {
			t.Logf("HandleBeat: %v", err)
		}
		if j := r.job(t, spot.ID); interrupted == 0 && j.Status == jobs.StatusRunning && j.AttemptOf() == 1 {
			interrupted = interrupt(t, kc, r.ns, spot.ID)
		}
		ended := true
		var states []string
		for _, id := range ids {
			j := r.job(t, id)
			ended = ended && j.Status.Terminal()
			states = append(states, fmt.Sprintf("%s %s attempt %d (%s)", id, j.Status, j.AttemptOf(), j.PendingReason))
		}
		if ended {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ended within 4 minutes: %s", strings.Join(states, "; "))
		}
	}
	if interrupted != 1 {
		t.Fatalf("interrupted %d pods of job-spot, want 1", interrupted)
	}

	got := r.job(t, spot.ID)
	if got.Status != jobs.StatusSucceeded || got.Attempt != 2 || got.SpotRetries != 1 || len(got.Attempts) != 1 {
		t.Fatalf("job-spot: %s, attempt %d, spot retries %d, attempts kept %d; want succeeded on attempt 2 after one uncounted spot retry",
			got.Status, got.Attempt, got.SpotRetries, len(got.Attempts))
	}
	var retrying []jobs.Transition
	second := 0
	for _, h := range got.StatusHistory {
		if strings.HasPrefix(h.Reason, jobs.ReasonRetrying+": ") {
			retrying = append(retrying, h)
		}
		if h.Attempt == 2 {
			second++
		}
	}
	if len(retrying) != 1 || !strings.HasPrefix(retrying[0].Reason, "retrying: spot_interrupted: ") || retrying[0].Status != jobs.StatusQueued || second < 4 {
		t.Errorf("job-spot history %+v: want one retrying entry for spot_interrupted, then attempt 2's queued, dispatching, pending, running and succeeded", got.StatusHistory)
	}
	if a := got.Attempts[0]; a.Attempt != 1 || !strings.HasPrefix(a.Reason, "spot_interrupted") || a.Placement == nil {
		t.Errorf("job-spot attempt kept = %+v, want attempt 1, spot_interrupted, with its placement", a)
	}
	if evs := eventTypes(t, r, spot.ID); evs[outbox.JobRetrying] != 1 || evs[outbox.JobDispatched] != 2 || evs[outbox.JobCompleted] != 1 || evs[outbox.JobFailed] != 0 {
		t.Errorf("job-spot events = %v, want one job.retrying, two job.dispatched, one job.completed", evs)
	}
	kjobs, err := kc.BatchV1().Jobs(r.ns).List(context.Background(), metav1.ListOptions{LabelSelector: jobs.IDKey + "=" + spot.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(kjobs.Items) != 1 || jobobjects.AttemptOf(kjobs.Items[0].Annotations) != 2 {
		t.Errorf("job-spot's Kubernetes Jobs = %d, want one, of attempt 2", len(kjobs.Items))
	}

	if got := r.job(t, plain.ID); got.Status != jobs.StatusFailed || got.AttemptOf() != 1 || eventTypes(t, r, plain.ID)[outbox.JobRetrying] != 0 {
		t.Errorf("job-plain (no retry policy, pod failed): %s on attempt %d; want failed on its first", got.Status, got.AttemptOf())
	}
	got = r.job(t, exit.ID)
	if got.Status != jobs.StatusFailed || got.Attempt != 2 || len(got.Attempts) != 1 || got.Attempts[0].Reason[:6] != "exit:3" ||
		eventTypes(t, r, exit.ID)[outbox.JobRetrying] != 1 || len(got.Attempts[0].Exits) == 0 {
		t.Errorf("job-exit: %s on attempt %d, attempts kept %+v; want failed on attempt 2 after one retry for exit:3, its exits kept", got.Status, got.Attempt, got.Attempts)
	}
}

// interruptRetried gives the running first-attempt pod of each retried job of the fault suite
// that has not had one a DisruptionTarget condition, counting them in interrupted. It goes
// through the rig's own client, not a faulty one: the interruption is the cluster's doing.
func interruptRetried(t *testing.T, r rig, interrupted map[string]int) {
	t.Helper()
	kc, err := r.clusters.Client(context.Background(), region)
	if err != nil {
		t.Fatal(err)
	}
	pods, err := kc.CoreV1().Pods(r.ns).List(context.Background(), metav1.ListOptions{LabelSelector: jobobjects.WatchKey})
	if err != nil {
		t.Fatalf("listing the retried jobs' pods: %v", err)
	}
	for _, p := range pods.Items {
		id := p.Labels[jobs.IDKey]
		if interrupted[id] > 0 || p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil || jobobjects.AttemptOf(p.Annotations) != 1 {
			continue
		}
		interrupted[id] += interrupt(t, kc, r.ns, id)
	}
}

// verifyRetried judges a retried job of the fault suite, interrupted n times (0 or 1): it must
// have succeeded on attempt 1+n, with one Kubernetes Job (of that attempt), one terminal status,
// n retrying entries and job.retrying events, 1+n job.dispatched, and one each of job.queued and
// job.completed. It answers what is lost and what is duplicated.
func verifyRetried(j jobs.Job, kube int, evs map[outbox.Type]int, n int) (lost, dup []string) {
	if !j.Status.Terminal() {
		lost = append(lost, "status "+string(j.Status))
	} else if j.Status != jobs.StatusSucceeded {
		lost = append(lost, fmt.Sprintf("%s, not succeeded (%q)", j.Status, j.StatusHistory[len(j.StatusHistory)-1].Reason))
	}
	lost, dup = oneKubeJob(kube, lost, dup)
	terminal, retrying := 0, 0
	for _, h := range j.StatusHistory {
		if h.Status.Terminal() {
			terminal++
		}
		if strings.HasPrefix(h.Reason, jobs.ReasonRetrying+": ") {
			retrying++
		}
	}
	if terminal > 1 || retrying > n || j.AttemptOf() > 1+n {
		dup = append(dup, fmt.Sprintf("%d terminal entries, %d retries, attempt %d after %d interruptions", terminal, retrying, j.AttemptOf(), n))
	}
	if retrying < n || j.AttemptOf() < 1+n {
		lost = append(lost, fmt.Sprintf("%d retries, attempt %d after %d interruptions", retrying, j.AttemptOf(), n))
	}
	want := map[outbox.Type]int{outbox.JobQueued: 1, outbox.JobDispatched: 1 + n, outbox.JobRetrying: n, outbox.JobCompleted: 1}
	for typ, k := range want {
		switch {
		case evs[typ] > k:
			dup = append(dup, fmt.Sprintf("%d %s events, want %d", evs[typ], typ, k))
		case evs[typ] < k && j.Status == jobs.StatusSucceeded:
			lost = append(lost, fmt.Sprintf("%d %s events, want %d", evs[typ], typ, k))
		}
	}
	if evs[outbox.JobStarted] > 1+n || evs[outbox.JobFailed] > 0 {
		dup = append(dup, fmt.Sprintf("%d job.started and %d job.failed events", evs[outbox.JobStarted], evs[outbox.JobFailed]))
	}
	return lost, dup
}

// oneKubeJob adds to lost or dup what is wrong with kube Kubernetes Jobs for a job that should
// have exactly one (the current attempt's; earlier ones deleted).
func oneKubeJob(kube int, lost, dup []string) ([]string, []string) {
	switch {
	case kube < 1:
		lost = append(lost, "no Kubernetes Job")
	case kube > 1:
		dup = append(dup, fmt.Sprintf("%d Kubernetes Jobs, want 1", kube))
	}
	return lost, dup
}

// add files job id under lost or duplicated, as verify does.
func (v *verdict) add(id string, lost, dup []string) {
	switch {
	case len(lost) > 0:
		v.lost = append(v.lost, id+": "+strings.Join(append(lost, dup...), "; "))
	case len(dup) > 0:
		v.duplicated = append(v.duplicated, id+": "+strings.Join(dup, "; "))
	}
}

// TestOOMKilledRetriedWithMoreMemory: a job whose first attempt is OOMKilled, under a retry rule
// raising memory by 1.5×, runs its second attempt with 1.5× the memory request and limit, and its
// record says so; the rule that fails exit 3 before it is not what matched.
func TestOOMKilledRetriedWithMoreMemory(t *testing.T) {
	r := newRig(t, 10)
	retry := &jobs.Retry{Attempts: 2, Rules: []jobs.RetryRule{
		{On: []string{"exit:3"}, Action: jobs.RuleFail},
		{On: []string{jobs.RuleOOMKilled}, Action: jobs.RuleRetry, MemoryFactor: 1.5},
	}}
	j, err := r.createRetried("job-oom", "oom", retry, func(m map[string]any) {
		podAnnotated(sandbox.OOMKillAnnotation, "true")(m)
		pod := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		pod["containers"].([]any)[0].(map[string]any)["resources"] = map[string]any{
			"requests": map[string]any{"memory": "1Gi"}, "limits": map[string]any{"memory": "2Gi"}}
	})
	if err != nil {
		t.Fatal(err)
	}
	kc := clientset(t)
	var second *corev1.Pod
	r.run(t, []string{j.ID}, func(m map[string]jobs.Job) bool {
		if m[j.ID].AttemptOf() < 2 {
			return false
		}
		pods, err := kc.CoreV1().Pods(r.ns).List(context.Background(), metav1.ListOptions{LabelSelector: jobs.IDKey + "=" + j.ID})
		if err != nil {
			return false
		}
		for i := range pods.Items {
			if jobobjects.AttemptOf(pods.Items[i].Annotations) == 2 {
				second = &pods.Items[i]
			}
		}
		return second != nil
	})
	got := r.job(t, j.ID)
	if got.MemoryFactor != 1.5 || !strings.HasPrefix(got.Attempts[0].Reason, "exit:137") {
		t.Errorf("after the OOMKilled attempt: memory factor %v, attempts %+v; want 1.5 after exit:137 (OOMKilled)", got.MemoryFactor, got.Attempts)
	}
	res := second.Spec.Containers[0].Resources
	if req, lim := res.Requests.Memory().String(), res.Limits.Memory().String(); req != "1536Mi" || lim != "3Gi" {
		t.Errorf("attempt 2's container asks memory %s, limited to %s; want 1536Mi and 3Gi (1.5× 1Gi and 2Gi)", req, lim)
	}
}
