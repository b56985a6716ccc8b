package dispatch

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/flavors"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
)

// The preemption fault suite's region: one flavor of 40 GPUs, tenants a and b a nominal 20 each;
// every job asks 2 GPUs.
const (
	preemptFlavor = `{"us-east-1": [{"name": "gpu", "resources": {"nvidia.com/gpu": "40", "cpu": "640", "memory": "2560Gi", "pods": "1000"}}]}`
	// aRun is how long a's jobs run; b's end at once. waveJobs of b's (its nominal's worth) come
	// every waveEvery rounds.
	aRun      = "8s"
	waveJobs  = 10
	waveEvery = 4
)

// TestFaultsWithPreemptions is the fault suite with preemptions among its faults: tenant a
// submits two thirds of the jobs, which run a while, and fills the region, borrowing b's half; a
// few rounds later, once a's jobs run, b submits the rest in waves, and its jobs, within its nominal quota, take the room back from a's
// running jobs, evicted (job.preempted) and queued again in their place. All of it under the suite's faults:
// crashes after a claim, between an apply and its record, and between an eviction's record and
// the stopping of its pods; API-server 429s, 500s and timeouts; leases overrun; two dispatch and
// two reconcile workers at once. Every job must succeed exactly once, with one job.completed, a
// job.dispatched for each attempt and a job.preempted for each eviction, no attempt counted twice,
// and no job evicted more often than waves came; nothing of theirs may be left running.
func TestFaultsWithPreemptions(t *testing.T) {
	n, seed := faultJobs(t), faultSeed(t)
	t.Logf("preemption fault suite seed %d (replay with %s=%d), %d jobs", seed, envFaultSeed, seed, n)
	r := reclaimRig(t, "20", "20")
	set, err := flavors.Parse(preemptFlavor)
	if err != nil {
		t.Fatal(err)
	}
	r.dispatch.Flavors = set
	r.dispatch.PreemptionsPerMinute = 1000 // the rig's clock hardly moves: let the faults, not the budget, bound them
	f := newFaults(seed)
	start := time.Now()
	submit := func(tenant, run string, from, to int) []string {
		var ids []string
		for i := from; i < to; i++ {
			ids = append(ids, r.submitShort(t, tenant, fmt.Sprintf("p%05d", i), run))
		}
		return ids
	}
	ids := submit("a", aRun, 0, 2*n/3)
	// a's jobs fill the region, borrowing b's half; b's arrive in waves of its nominal's worth, a
	// few rounds apart: each wave finds a holding b's room (it took it back when the last wave's
	// short jobs ended) and takes it back by evicting.
	round, next, lastWave, waves := 0, 2*n/3, 0, 0
	rs := runRounds(t, r, f, []string{region}, n, func() bool {
		round++
		// A wave comes once a borrows (so it has room to take back: on a loaded machine a's
		// first jobs may take rounds to run), waveEvery rounds after the last; once a has
		// stopped borrowing, the rest come anyway.
		since := round - lastWave
		if next < n && since >= waveEvery && (since >= 3*waveEvery || r.borrowing(t, "a", waveJobs)) {
			lastWave, waves = round, waves+1
			to := min(n, next+waveJobs)
			ids = append(ids, submit("b", "", next, to)...)
			next = to
		}
		return next < n
	})
	v, preempted := verifyPreempted(t, r, ids, waves)
	t.Logf("preemption fault suite: %d jobs, %d waves, %d evictions (%d jobs evicted, at most %d times one), %d lost, %d duplicated, %d wrong, seed %d, %s in %d rounds; injected:\n%s",
		len(ids), waves, preempted.evictions, preempted.jobs, preempted.most, len(v.lost), len(v.duplicated), len(v.wrong), seed,
		time.Since(start).Round(time.Second), rs.rounds, f)
	nothingLeft(t, r)
	if preempted.evictions == 0 {
		t.Errorf("no job was evicted: the suite tested nothing of preemption")
	}
	v.report(t, seed)
}

// submitShort stores tenant's queued job job-<name>: one pod asking 2 GPUs, running for run
// ("" as long as kwok takes).
func (r rig) submitShort(t *testing.T, tenant, name, run string) string {
	t.Helper()
	m := r.manifest(name)
	if run != "" {
		tmpl := m["spec"].(map[string]any)["template"].(map[string]any)
		tmpl["metadata"] = map[string]any{"annotations": map[string]any{sandbox.CompleteDelayAnnotation: run}}
	}
	now := r.clock.now()
	j := jobs.New("job-"+name, tenant, r.ns, region, jobs.DefaultPriority, nil, []map[string]any{m}, now)
	j.Demand = map[string]string{"nvidia.com/gpu": "2", "pods": "1"}
	if _, _, err := r.store.Create(context.Background(), j, jobs.Event(outbox.JobQueued, j, "", now), nil, now); err != nil {
		t.Fatal(err)
	}
	return j.ID
}

// preemptions counts what the suite's evictions did.
type preemptions struct{ evictions, jobs, most int }

// verifyPreempted judges each job of ids: succeeded, once; one job.completed and job.queued; a
// job.preempted and a "preempted: reclaimed" history entry for each eviction its record counts;
// a job.dispatched for each attempt; attempts one more than its evictions; one Kubernetes Job at
// most (the last attempt's); no more evictions than waves came (a wave takes back room once; a
// job evicted twice in one is a loop).
func verifyPreempted(t *testing.T, r rig, ids []string, waves int) (verdict, preemptions) {
	t.Helper()
	kjobs := kubeJobsByID(t, r)
	evs := eventsByJob(t, r)
	var v verdict
	var p preemptions
	for _, id := range ids {
		j := r.job(t, id)
		e := evs[id]
		requeued := 0
		for _, h := range j.StatusHistory {
			if h.Status == jobs.StatusQueued && strings.HasPrefix(h.Reason, jobs.ReasonPreempted+": ") {
				requeued++
			}
		}
		p.evictions += j.Preemptions
		if j.Preemptions > 0 {
			p.jobs++
		}
		var lost, dup, wrong []string
		switch {
		case !j.Status.Terminal():
			lost = append(lost, "status "+string(j.Status))
		case j.Status != jobs.StatusSucceeded:
			wrong = append(wrong, fmt.Sprintf("ended %s: %v", j.Status, j.StatusHistory[len(j.StatusHistory)-1]))
		}
		if e[outbox.JobCompleted] == 0 && j.Status == jobs.StatusSucceeded {
			lost = append(lost, "no job.completed")
		}
		if e[outbox.JobCompleted] > 1 || e[outbox.JobQueued] != 1 {
			dup = append(dup, fmt.Sprintf("events %v", e))
		}
		if e[outbox.JobPreempted] != j.Preemptions || requeued != j.Preemptions || j.AttemptOf() != j.Preemptions+1 {
			dup = append(dup, fmt.Sprintf("%d evictions counted, %d job.preempted, %d requeued in its history, attempt %d", j.Preemptions, e[outbox.JobPreempted], requeued, j.AttemptOf()))
		}
		if e[outbox.JobDispatched] != j.AttemptOf() {
			dup = append(dup, fmt.Sprintf("%d job.dispatched for %d attempts", e[outbox.JobDispatched], j.AttemptOf()))
		}
		if kjobs[id] > 1 {
			dup = append(dup, fmt.Sprintf("%d Kubernetes Jobs", kjobs[id]))
		}
		if j.Preemptions > waves {
			wrong = append(wrong, fmt.Sprintf("evicted %d times in %d waves: a loop", j.Preemptions, waves))
		}
		p.most = max(p.most, j.Preemptions)
		terminal := slices.IndexFunc(j.StatusHistory, func(h jobs.Transition) bool { return h.Status.Terminal() })
		if terminal >= 0 && terminal != len(j.StatusHistory)-1 {
			dup = append(dup, fmt.Sprintf("moved after its end: %v", j.StatusHistory))
		}
		switch {
		case len(lost) > 0:
			v.lost = append(v.lost, id+": "+strings.Join(append(lost, dup...), "; "))
		case len(dup) > 0:
			v.duplicated = append(v.duplicated, id+": "+strings.Join(dup, "; "))
		case len(wrong) > 0:
			v.wrong = append(v.wrong, id+": "+strings.Join(wrong, "; "))
		}
	}
	return v, p
}

// borrowing says whether tenant holds at least jobs active jobs more than its half of the
// region's 20 two-GPU slots: room another tenant may take back.
func (r rig) borrowing(t *testing.T, tenant string, jobs int) bool {
	t.Helper()
	_, active := r.left(t)
	n := 0
	for _, j := range active {
		if j.Tenant == tenant && j.Status != "dispatching" {
			n++
		}
	}
	return n >= 10+jobs/2
}
