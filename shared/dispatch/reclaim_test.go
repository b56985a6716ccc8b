package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/admission"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/flavors"
	"github.com/tidegate/tidegate/shared/jobobjects"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// gpuFlavor is one flavor of 8 GPUs over the sandbox's nodes.
const gpuFlavor = `{"us-east-1": [{"name": "gpu", "resources": {"nvidia.com/gpu": "8", "cpu": "64", "memory": "256Gi", "pods": "100"}}]}`

// reclaimRig is a rig whose region is gpuFlavor, shared by tenants A and B with a nominal 4 GPUs
// each, that evicts at most ten jobs a minute with a grace of at most 2 minutes.
func reclaimRig(t *testing.T, nominalA, nominalB string) rig {
	r := newRig(t, 100)
	set, err := flavors.Parse(gpuFlavor)
	if err != nil {
		t.Fatal(err)
	}
	r.dispatch.Flavors = set
	tenants := dynamo.NewTenantStore(r.db, r.tables.Control)
	for name, gpus := range map[string]string{"a": nominalA, "b": nominalB} {
		tn := tenancy.Tenant{Name: name, Org: "acme", Namespaces: []string{r.ns}, Role: tenancy.RoleMember, CreatedAt: time.Now(),
			Quotas: map[string]tenancy.Quota{region: {Flavors: map[string]tenancy.FlavorQuota{
				"gpu": {Nominal: map[string]string{"nvidia.com/gpu": gpus, "pods": "50", "cpu": "32", "memory": "128Gi"}}}}}}
		if err := tenants.PutTenant(context.Background(), tn); err != nil {
			t.Fatal(err)
		}
	}
	r.dispatch.Tenants = tenants
	r.dispatch.PreemptionsPerMinute, r.dispatch.PreemptionCooldown, r.dispatch.PreemptionGraceMax = 10, 10*time.Minute, 2*time.Minute
	return r
}

// submitGPUs stores tenant's queued job job-<name> of one pod asking 2 GPUs, which runs for an
// hour and asks 5 minutes to stop.
func (r rig) submitGPUs(t *testing.T, tenant, name string) string {
	t.Helper()
	return r.submitGPUsAt(t, tenant, name, jobs.DefaultPriority)
}

func (r rig) submitGPUsAt(t *testing.T, tenant, name string, priority int) string {
	t.Helper()
	m := r.manifest(name)
	tmpl := m["spec"].(map[string]any)["template"].(map[string]any)
	tmpl["metadata"] = map[string]any{"annotations": map[string]any{sandbox.CompleteDelayAnnotation: "1h"}}
	tmpl["spec"].(map[string]any)["terminationGracePeriodSeconds"] = int64(300)
	now := r.clock.now()
	j := jobs.New("job-"+name, tenant, r.ns, region, priority, nil, []map[string]any{m}, now)
	j.Demand = map[string]string{"nvidia.com/gpu": "2", "pods": "1"}
	j.CheckpointURI = jobs.CheckpointURI("ckpt", tenant, j.ID)
	if _, _, err := r.store.Create(context.Background(), j, jobs.Event(outbox.JobQueued, j, "", now), nil, now); err != nil {
		t.Fatal(err)
	}
	return j.ID
}

// graces watches the rig's namespace's pods and keeps the grace period each was deleted with, by
// the job id on it; stop ends the watch.
func (r rig) graces(t *testing.T) (got func() map[string][]int64) {
	t.Helper()
	cs := clientset(t)
	w, err := cs.CoreV1().Pods(r.ns).Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	var mu sync.Mutex
	seen := map[string][]int64{}
	go func() {
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok || ev.Type != watch.Modified || p.DeletionGracePeriodSeconds == nil {
				continue
			}
			mu.Lock()
			id := p.Labels[jobs.IDKey]
			if !slices.Contains(seen[id], *p.DeletionGracePeriodSeconds) {
				seen[id] = append(seen[id], *p.DeletionGracePeriodSeconds)
			}
			mu.Unlock()
		}
	}()
	return func() map[string][]int64 {
		mu.Lock()
		defer mu.Unlock()
		out := map[string][]int64{}
		for k, v := range seen {
			out[k] = slices.Clone(v)
		}
		return out
	}
}

// TestReclaimOnTheStandIns is the case on the stand-ins: a flavor of 8 GPUs, tenants A and
// B with a nominal 4 each. A runs 4 jobs of 2 GPUs, borrowing 4; B submits 2 of 2. Within one
// drain A's two most recent jobs are evicted: queued again in their place, job.preempted, counted
// in preemptions, their pods deleted with their grace period bounded at 2 minutes. The next drain
// starts B's jobs, whose pods carry the contract's variables; A's evicted jobs wait, and run when
// room frees.
func TestReclaimOnTheStandIns(t *testing.T) {
	r := reclaimRig(t, "4", "4")
	drain := func() { r.drainIn(t, region) }
	var as []string
	for i := range 4 {
		as = append(as, r.submitGPUs(t, "a", fmt.Sprintf("a%d", i+1)))
		drain()
		r.clock.skip(time.Minute) // each started after the one before
	}
	for _, id := range as {
		if j := r.job(t, id); !j.Status.Active() {
			t.Fatalf("A alone: %s is %s (%s); want it dispatched", id, j.Status, j.PendingReason)
		}
	}
	r.run(t, as, func(m map[string]jobs.Job) bool { return true }) // their pods exist
	waitPods(t, r, as)
	// The first job's record moves last (its pods all scheduled, say): its start is still the
	// earliest, and it is not what goes first.
	first := r.job(t, as[0])
	if err := r.store.Apply(context.Background(), first, jobs.AllScheduled(first, r.clock.now())); err != nil {
		t.Fatal(err)
	}
	graces := r.graces(t)
	place := map[string]string{} // each of A's jobs' place in the queue: its created time
	for _, id := range as {
		place[id] = r.job(t, id).CreatedAt.String()
	}
	b1, b2 := r.submitGPUs(t, "b", "b1"), r.submitGPUs(t, "b", "b2")
	drain()
	for _, id := range []string{as[2], as[3]} {
		j := r.job(t, id)
		if j.Status != jobs.StatusQueued || j.Preemptions != 1 || j.AttemptOf() != 2 || j.Attempts[0].Reason != "preempted: reclaimed" {
			t.Errorf("A's %s after B's drain: %s, preemptions %d, attempt %d, attempts %+v; want queued again, preempted once, attempt 2",
				id, j.Status, j.Preemptions, j.AttemptOf(), j.Attempts)
		}
		if j.CreatedAt.String() != place[id] || j.Priority != jobs.DefaultPriority {
			t.Errorf("%s lost its place: created %s (was %s), priority %d", id, j.CreatedAt, place[id], j.Priority)
		}
	}
	for _, id := range as[:2] {
		if j := r.job(t, id); !j.Status.Active() {
			t.Errorf("A's %s, within A's nominal, is %s; want it still running", id, j.Status)
		}
	}
	for _, id := range []string{b1, b2} {
		if j := r.job(t, id); j.Status != jobs.StatusQueued || j.PendingReason != string(admission.ReasonPreempting) || j.Shield == nil || j.Shield.Tenant != "a" {
			t.Errorf("B's %s after the evicting drain: %s waiting %q, shield %+v; want queued waiting_for_preempted_jobs, shielded from a", id, j.Status, j.PendingReason, j.Shield)
		}
	}
	checkPreemptedEvents(t, r, as[2:])
	deadline := time.Now().Add(30 * time.Second)
	for got := graces(); len(got[as[2]]) == 0 || len(got[as[3]]) == 0; got = graces() {
		if time.Now().After(deadline) {
			t.Fatalf("the evicted jobs' pods were deleted with graces %v; want each seen going", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, id := range as[2:] {
		if got := graces()[id]; got[0] != 120 {
			t.Errorf("%s's pods deleted with grace %v s; want 120 (their 300 bounded by the 2-minute maximum)", id, got)
		}
	}

	drain()
	for _, id := range []string{b1, b2} {
		if j := r.job(t, id); !j.Status.Active() {
			t.Errorf("B's %s after the room came back: %s (%s); want it dispatched", id, j.Status, j.PendingReason)
		}
	}
	for _, id := range as[2:] {
		if j := r.job(t, id); j.Status != jobs.StatusQueued {
			t.Errorf("A's evicted %s: %s; want it waiting for room", id, j.Status)
		}
	}
	checkContract(t, r, b1, 1, 0)
	checkTrail(t, r, as[3], b1, b2)

	// Two of A's first jobs end: the room goes back to A's evicted ones, as attempt 2.
	for _, id := range as[:2] {
		r.succeed(t, id)
	}
	drain()
	for _, id := range as[2:] {
		if j := r.job(t, id); !j.Status.Active() || j.AttemptOf() != 2 {
			t.Errorf("A's evicted %s once room freed: %s attempt %d (%s); want it dispatched again as attempt 2", id, j.Status, j.AttemptOf(), j.PendingReason)
		}
	}
	checkContract(t, r, as[3], 2, 1)
}

// TestReclaimBudgetPerMinute: with one eviction a minute, B's first job has one of A's evicted
// for it and its second waits for room, evicting nothing, until the minute is over.
func TestReclaimBudgetPerMinute(t *testing.T) {
	r := reclaimRig(t, "4", "4")
	r.dispatch.PreemptionsPerMinute = 1
	// The test's drains in one minute of the rig's clock: 5 s into the next, a minute's start
	// that real time's passing cannot cross within the test.
	now := r.clock.now()
	r.clock.skip(now.Truncate(time.Minute).Add(time.Minute + 5*time.Second).Sub(now))
	drain := func() { r.drainIn(t, region) }
	var as []string
	for i := range 4 {
		as = append(as, r.submitGPUs(t, "a", fmt.Sprintf("a%d", i)))
	}
	drain()
	b1, b2 := r.submitGPUs(t, "b", "b1"), r.submitGPUs(t, "b", "b2")
	drain()
	evicted := func() (n int) {
		for _, id := range as {
			n += r.job(t, id).Preemptions
		}
		return n
	}
	if n := evicted(); n != 1 {
		t.Errorf("one eviction a minute: %d of A's jobs evicted; want 1", n)
	}
	if j := r.job(t, b2); j.PendingReason == string(admission.ReasonPreempting) {
		t.Errorf("B's second job, past the budget, waits %q; want it waiting for room", j.PendingReason)
	}
	drain() // the same minute: b1 starts in the room its eviction freed; b2 still waits
	if n := evicted(); n != 1 {
		t.Errorf("a second drain in the minute: %d evicted in all; want still 1", n)
	}
	if j := r.job(t, b1); !j.Status.Active() {
		t.Errorf("b1: %s (%s); want it dispatched", j.Status, j.PendingReason)
	}
	r.clock.skip(time.Minute)
	drain()
	if n := evicted(); n != 2 {
		t.Errorf("the next minute: %d evicted in all; want 2", n)
	}
}

// TestReclaimLeavesEqualStanding: A and B each at their nominal (2 jobs of 2 GPUs each) and B
// submitting more: nothing is evicted, whatever B's priority, and B's job waits for room.
func TestReclaimLeavesEqualStanding(t *testing.T) {
	r := reclaimRig(t, "4", "4")
	var running []string
	for i := range 2 {
		running = append(running, r.submitGPUs(t, "a", fmt.Sprintf("a%d", i)), r.submitGPUs(t, "b", fmt.Sprintf("b%d", i)))
	}
	if err := r.dispatch.Drain(context.Background(), region); err != nil {
		t.Fatal(err)
	}
	more := r.submitGPUs(t, "b", "b-more")
	if err := r.dispatch.Drain(context.Background(), region); err != nil {
		t.Fatal(err)
	}
	for _, id := range running {
		if j := r.job(t, id); !j.Status.Active() || j.Preemptions != 0 {
			t.Errorf("%s: %s, preempted %d times; want it running, never evicted", id, j.Status, j.Preemptions)
		}
	}
	if j := r.job(t, more); j.Status != jobs.StatusQueued || j.PendingReason == string(admission.ReasonPreempting) {
		t.Errorf("B's job past its nominal: %s (%s); want it waiting for room, evicting nobody", j.Status, j.PendingReason)
	}
	if n, err := r.store.Evictions(context.Background(), region, r.clock.now()); err != nil || n != 0 {
		t.Errorf("evictions this minute = %d, %v; want 0", n, err)
	}
}

// TestPreemptWithinTenant: A fills the region with jobs of priority 10; its urgent job of
// priority 90 waits for room until the operator lets A's jobs evict its own of lower priority
// (`--preempt-within lower-priority`): then one of A's is evicted for it (lower_priority), and
// B's jobs, of no tenant that opted in, are never evicted for A's priorities.
func TestPreemptWithinTenant(t *testing.T) {
	r := reclaimRig(t, "4", "4")
	var low []string
	for i := range 3 {
		low = append(low, r.submitGPUsAt(t, "a", fmt.Sprintf("a-low%d", i), 10))
	}
	b := r.submitGPUsAt(t, "b", "b-low", 10)
	drain := func() { r.drainIn(t, region) }
	drain()
	urgent := r.submitGPUsAt(t, "a", "a-urgent", 90)
	drain()
	if j := r.job(t, urgent); j.Status != jobs.StatusQueued || j.PendingReason == string(admission.ReasonPreempting) {
		t.Fatalf("A not opted in: urgent is %s (%s); want it waiting for room", j.Status, j.PendingReason)
	}
	tenants := dynamo.NewTenantStore(r.db, r.tables.Control)
	a, err := tenants.Tenant(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	a.PreemptWithin = tenancy.PreemptLowerPriority
	if err := tenants.PutTenant(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	r.clock.skip(quotaTTL) // the drains' cache of tenants expires
	drain()
	evicted := 0
	for _, id := range low {
		if j := r.job(t, id); j.Preemptions == 1 {
			evicted++
			if j.Attempts[0].Reason != "preempted: lower_priority" {
				t.Errorf("%s evicted with %q; want preempted: lower_priority", id, j.Attempts[0].Reason)
			}
		}
	}
	if evicted != 1 {
		t.Errorf("A opted in: %d of its low jobs evicted; want 1", evicted)
	}
	if j := r.job(t, b); !j.Status.Active() || j.Preemptions != 0 {
		t.Errorf("B's job: %s, preempted %d times; want it running, untouched", j.Status, j.Preemptions)
	}
	drain()
	if j := r.job(t, urgent); !j.Status.Active() {
		t.Errorf("urgent after its room was freed: %s (%s); want it dispatched", j.Status, j.PendingReason)
	}
}

// succeed records job id's end, as the beat would once its Job completes.
func (r rig) succeed(t *testing.T, id string) {
	t.Helper()
	j := r.job(t, id)
	_, c, err := jobs.Move(j, jobs.StatusSucceeded, "", r.clock.now())
	if err == nil {
		err = r.store.Apply(context.Background(), j, c)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// waitPods waits until each of ids has a pod in the cluster.
func waitPods(t *testing.T, r rig, ids []string) {
	t.Helper()
	cs := clientset(t)
	deadline := time.Now().Add(60 * time.Second)
	for _, id := range ids {
		for {
			pods, err := cs.CoreV1().Pods(r.ns).List(context.Background(), metav1.ListOptions{LabelSelector: jobs.IDKey + "=" + id})
			if err == nil && len(pods.Items) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %s has no pod after a minute (%v)", id, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// checkContract checks that job id's pods of attempt carry the contract's variables.
func checkContract(t *testing.T, r rig, id string, attempt, preemptions int) {
	t.Helper()
	waitPods(t, r, []string{id})
	cs := clientset(t)
	pods, err := cs.CoreV1().Pods(r.ns).List(context.Background(), metav1.ListOptions{LabelSelector: jobs.IDKey + "=" + id})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{jobobjects.EnvJobID: id, jobobjects.EnvAttempt: fmt.Sprint(attempt),
		jobobjects.EnvPreemptions: fmt.Sprint(preemptions), jobobjects.EnvCheckpointURI: r.job(t, id).CheckpointURI}
	found := false
	for _, p := range pods.Items {
		if jobobjects.AttemptOf(p.Annotations) != attempt || p.DeletionTimestamp != nil {
			continue
		}
		found = true
		got := map[string]string{}
		for _, e := range p.Spec.Containers[0].Env {
			got[e.Name] = e.Value
		}
		for k, v := range want {
			if got[k] != v || v == "" {
				t.Errorf("pod %s of %s: %s = %q; want %q", p.Name, id, k, got[k], v)
			}
		}
	}
	if !found {
		t.Errorf("job %s has no live pod of attempt %d", id, attempt)
	}
}

// checkPreemptedEvents checks that each of ids has one job.preempted event.
func checkPreemptedEvents(t *testing.T, r rig, ids []string) {
	t.Helper()
	for _, id := range ids {
		if n := eventTypes(t, r, id)[outbox.JobPreempted]; n != 1 {
			t.Errorf("job %s has %d job.preempted events; want 1", id, n)
		}
	}
}

// checkTrail: the evicted job's decisions say it was preempted for its own tenant's borrowing,
// with its tenant's standing, and name nothing of the tenant or the jobs it made room for; the
// job the room went to shows the room reclaimed for it, then its admission.
func checkTrail(t *testing.T, r rig, evicted string, forJobs ...string) {
	t.Helper()
	ds, err := r.store.Decisions(context.Background(), evicted, jobs.MaxDecisions)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ds, func(d jobs.Decision) bool { return d.Kind == jobs.DecisionPreempted })
	if i < 0 || ds[i].Reason != string(admission.EvictReclaimed) || ds[i].Quota["nvidia.com/gpu"].Nominal != "4" {
		t.Errorf("%s's decisions %+v; want one preempted, reclaimed, with its tenant's GPU standing against a nominal 4", evicted, ds)
	}
	b, _ := json.Marshal(ds)
	for _, other := range append([]string{`"b"`}, forJobs...) {
		if strings.Contains(string(b), other) {
			t.Errorf("%s's decisions name %s, of another tenant: %s", evicted, other, b)
		}
	}
	ds, err = r.store.Decisions(context.Background(), forJobs[0], jobs.MaxDecisions)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []jobs.DecisionKind
	for _, d := range slices.Backward(ds) {
		kinds = append(kinds, d.Kind)
	}
	if !slices.Contains(kinds, jobs.DecisionRoomReclaimed) || kinds[len(kinds)-1] != jobs.DecisionAdmitted {
		t.Errorf("%s's decisions, oldest first: %v; want room_reclaimed, then admitted last", forJobs[0], kinds)
	}
}

// clientset reaches the sandbox cluster.
func clientset(t *testing.T) kubernetes.Interface {
	t.Helper()
	cs, err := sandbox.KubeClient(testenv.Kube(t).Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}
