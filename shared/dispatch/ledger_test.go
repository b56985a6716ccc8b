package dispatch

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tidegate/tidegate/shared/admission"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/flavors"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
)

// ledgerFlavors are a spot and an on-demand flavor over the sandbox's two nodes, small enough that
// 200 jobs queue for them.
const ledgerFlavors = `{"us-east-1": [
  {"name": "spot", "node_labels": {"karpenter.sh/capacity-type": "spot"}, "resources": {"cpu": "6", "memory": "16Gi", "pods": "24"}},
  {"name": "on-demand", "node_labels": {"karpenter.sh/capacity-type": "on-demand"},
   "resources": {"cpu": "6", "memory": "16Gi", "pods": "24", "nvidia.com/gpu": "4"}}]}`

// ledgerJob is one random job of the property test: its pods, what each asks, how it ends.
type ledgerJob struct {
	id, tenant string
	pods       int
	cpu        string // each pod's request
	gpu        bool
	selector   map[string]string
	longRun    bool
	fails      bool
}

// TestLedgerIsTrue: 200 jobs of four tenants, of mixed kinds (Jobs of 1 to 4 pods, GPU jobs, jobs
// pinned to a flavor, long-running Deployments), sizes and ends (succeeding, failing), through the
// drain and the beat on the stand-ins. After every beat, for each tenant, what the drain counts
// it to hold (its active jobs' demand) is at least the requests of its pods in the cluster that
// have not ended, and for a job whose pods all run, exactly theirs; no flavor is ever held past
// its capacity; and at the end every batch job has ended once, as its pods said, none lost.
func TestLedgerIsTrue(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 200 jobs on the stand-ins")
	}
	r := newRig(t, 10)
	set, err := flavors.Parse(ledgerFlavors)
	if err != nil {
		t.Fatal(err)
	}
	r.dispatch.Flavors, r.dispatch.LongRunningPerTenant = set, 2
	fr := set.Of(region, 10, 0)
	rnd := rand.New(rand.NewPCG(28, 200))
	byID := map[string]ledgerJob{}
	var batch []string
	for i := range 200 {
		lj := ledgerJob{id: fmt.Sprintf("job-l%03d", i), tenant: fmt.Sprintf("t%d", i%4), pods: 1 + rnd.IntN(4),
			cpu: []string{"100m", "250m", "500m", "1"}[rnd.IntN(4)]}
		switch k := rnd.IntN(20); {
		case k < 2:
			lj.longRun, lj.pods, lj.cpu = true, 1+rnd.IntN(2), "100m"
		case k < 5:
			lj.gpu, lj.pods = true, 1
		case k < 8:
			lj.selector = map[string]string{"karpenter.sh/capacity-type": []string{"spot", "on-demand"}[rnd.IntN(2)]}
		}
		lj.fails = !lj.longRun && rnd.IntN(10) == 0
		r.storeLedgerJob(t, lj, 1+rnd.IntN(100), time.Duration(1+rnd.IntN(3))*time.Second)
		byID[lj.id] = lj
		if !lj.longRun {
			batch = append(batch, lj.id)
		}
	}

	ctx := context.Background()
	kc, err := r.clusters.Client(ctx, region)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(4 * time.Minute)
	for beat := 1; ; beat++ {
		if err := r.dispatch.Drain(ctx, region); err != nil {
			t.Fatalf("Drain: %v", err)
		}
		if err := r.reconcile.HandleBeat(ctx, events.EventBridgeEvent{ID: fmt.Sprintf("ledger-beat-%d", beat)}); err != nil {
			t.Fatalf("HandleBeat: %v", err)
		}
		active, err := r.store.Active(ctx, region)
		if err != nil {
			t.Fatal(err)
		}
		pods, err := kc.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		checkLedger(t, beat, fr, active, pods.Items)
		ended := 0
		for _, id := range batch {
			if r.job(t, id).Status.Terminal() {
				ended++
			}
		}
		if ended == len(batch) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %d beats, %d of %d batch jobs have ended", beat, ended, len(batch))
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, id := range batch {
		j, want := r.job(t, id), jobs.StatusSucceeded
		if byID[id].fails {
			want = jobs.StatusFailed
		}
		dispatched := 0
		for _, tr := range j.StatusHistory {
			if tr.Status == jobs.StatusDispatching {
				dispatched++
			}
		}
		if j.Status != want || dispatched != 1 {
			t.Errorf("%s ended %s after %d dispatches, want %s after one (%+v)", id, j.Status, dispatched, want, j.StatusHistory)
		}
	}
}

// checkLedger holds the drain's ledger (fr's count of active's demand) against the pods in the
// cluster after one beat.
func checkLedger(t *testing.T, beat int, fr flavors.Region, active []jobs.Job, pods []corev1.Pod) {
	t.Helper()
	cpu := slices.Index(fr.Resources, "cpu")
	ledger := map[string]int64{}   // by tenant: the CPU its active jobs' demand counts
	jobOf := map[string]jobs.Job{} // by id
	var perFlavor []admission.Vec
	for _, j := range active {
		ledger[j.Tenant] += fr.Need(j).Demand[cpu]
		jobOf[j.ID] = j
		perFlavor = fr.Use(perFlavor, j)
	}
	for f, use := range perFlavor {
		for i := range use {
			if use[i] > fr.Flavors[f].Capacity[i] {
				t.Fatalf("beat %d: flavor %s holds %d of %s, over its %d", beat, fr.Flavors[f].Name, use[i], fr.Resources[i], fr.Flavors[f].Capacity[i])
			}
		}
	}
	inCluster := map[string]int64{} // by tenant: its pods' requests that have not ended
	running := map[string]int{}     // by job: its pods running
	asked := map[string]int64{}     // by job: its pods' requests that have not ended
	for _, p := range pods {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		id := p.Labels[jobs.IDKey]
		j, ok := jobOf[id]
		if !ok {
			// A pod whose job's end is recorded is being deleted with its objects, or is the
			// last of a Job the sweep takes; it holds nothing the drain counts.
			continue
		}
		var req int64
		for _, c := range p.Spec.Containers {
			req += c.Resources.Requests.Cpu().MilliValue()
		}
		inCluster[j.Tenant] += req
		asked[id] += req
		if p.Status.Phase == corev1.PodRunning {
			running[id]++
		}
	}
	for tenant, have := range inCluster {
		if ledger[tenant] < have {
			t.Fatalf("beat %d: tenant %s's ledger holds %dm CPU, its pods in the cluster ask %dm", beat, tenant, ledger[tenant], have)
		}
	}
	for id, n := range running {
		j := jobOf[id]
		need := fr.Need(j)
		if n == fr.Pods(need) && asked[id] != need.Demand[cpu] {
			t.Fatalf("beat %d: %s runs its %d pods asking %dm CPU, its demand counts %dm", beat, id, n, asked[id], need.Demand[cpu])
		}
	}
}

// storeLedgerJob stores lj queued at priority, its pods asking what lj says and ending after run
// (a Job's), and its demand as the policy would count it.
func (r rig) storeLedgerJob(t *testing.T, lj ledgerJob, priority int, run time.Duration) {
	t.Helper()
	name := lj.id[len("job-"):]
	m := r.manifest(name)
	spec := m["spec"].(map[string]any)
	pod := spec["template"].(map[string]any)["spec"].(map[string]any)
	requests := map[string]any{"cpu": lj.cpu, "memory": "64Mi"}
	demand := map[string]string{}
	if lj.gpu {
		requests["nvidia.com/gpu"] = "1"
		pod["containers"].([]any)[0].(map[string]any)["resources"] = map[string]any{"requests": requests, "limits": map[string]any{"nvidia.com/gpu": "1"}}
		demand["nvidia.com/gpu"] = fmt.Sprint(lj.pods)
	} else {
		pod["containers"].([]any)[0].(map[string]any)["resources"] = map[string]any{"requests": requests}
	}
	if lj.selector != nil {
		pod["nodeSelector"] = map[string]any{"karpenter.sh/capacity-type": lj.selector["karpenter.sh/capacity-type"]}
	}
	annotations := map[string]any{sandbox.CompleteDelayAnnotation: run.String()}
	if lj.fails {
		annotations[sandbox.ExitCodeAnnotation] = "1"
		spec["backoffLimit"] = 0
	}
	spec["template"].(map[string]any)["metadata"] = map[string]any{"annotations": annotations}
	if lj.longRun {
		m = r.deployment(name)
		m["spec"].(map[string]any)["replicas"] = lj.pods
		tmpl := m["spec"].(map[string]any)["template"].(map[string]any)
		tmpl["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["resources"] = map[string]any{"requests": requests}
	} else {
		spec["parallelism"], spec["completions"] = lj.pods, lj.pods
	}
	milli := map[string]int64{"100m": 100, "250m": 250, "500m": 500, "1": 1000}[lj.cpu] * int64(lj.pods)
	demand["cpu"], demand["memory"], demand["pods"] = fmt.Sprintf("%dm", milli), fmt.Sprintf("%dMi", 64*lj.pods), fmt.Sprint(lj.pods)
	now := r.clock.now()
	j := jobs.New(lj.id, lj.tenant, r.ns, region, priority, nil, []map[string]any{m}, now)
	j.Demand, j.NodeSelector = demand, lj.selector
	if _, _, err := r.store.Create(context.Background(), j, jobs.Event(outbox.JobQueued, j, "", now), nil, now); err != nil {
		t.Fatal(err)
	}
}
