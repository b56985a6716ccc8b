package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobobjects"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/kube/typed"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/reconcile"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// The suite's knobs. `make test` runs the default size; the bar is
//
//	TIDEGATE_FAULT_JOBS=1000 go test -count=1 -run TestFaults -timeout 30m -v ./shared/dispatch/
//
// and a failing run is replayed with TIDEGATE_FAULT_SEED set to the seed it printed (the faults
// are drawn from that seed; the interleaving of the concurrent workers is not). On a machine
// others share, TIDEGATE_FAULT_SECONDS_PER_JOB=3 waits longer before calling a job lost.
const (
	envFaultJobs = "TIDEGATE_FAULT_JOBS"
	envFaultSeed = "TIDEGATE_FAULT_SEED"
	// envFaultPatience is the seconds the suite waits for each job (one by default).
	envFaultPatience = "TIDEGATE_FAULT_SECONDS_PER_JOB"
	// 60 jobs finish in about half a minute on the stand-ins.
	defaultFaultJobs = 60
	// faultCapacity lets 50 jobs run at once. A lone Job completes about a second after it is
	// made, but under the suite's load the sandbox finishes some three Jobs a second, so the
	// region stays full of pending jobs and 1,000 take about five minutes (measured).
	faultCapacity = 50
	// dispatchDeadline and beatDeadline are the functions' timeouts in template.yaml.
	dispatchDeadline = 60 * time.Second
	beatDeadline     = 60 * time.Second
	// requestDeadline is the short per-request deadline the suite's clients run under, so a
	// request the API server never answers ends as a timeout in seconds, not at the Lambda's end.
	requestDeadline = 2 * time.Second
	// roundPause spaces the rounds; kwok needs about a second to run a Job anyway.
	roundPause = 200 * time.Millisecond
)

// Fault rates. A crash is drawn at each hook; an API fault at each HTTP request to the API server;
// a lease overrun at each invocation.
const (
	crashAfterClaim   = 0.03
	crashBeforeRecord = 0.03
	crashAfterEvict   = 0.1
	// leaseOverrun: the invocation runs as if its lease had run out under it, alongside whoever
	// holds it. The leases only save work; claims and conditional records are what must keep
	// dispatch exactly-once, so the suite lets drains and beats truly overlap.
	leaseOverrun = 0.2
	// coldStart: the beat runs on a new instance, which remembers nothing of earlier beats.
	coldStart = 0.1
	// poisoned: the job's manifest is one the API server refuses for good (a negative
	// backoffLimit), as a tenant's could be that the policy let through.
	poisoned = 0.05
	// roamingShare: the job may run in either of the suite's two regions, and both regions'
	// drains, racing each other, choose where.
	roamingShare = 0.3
	// retried: the job has retry {attempts: 2, on: [spot_interruption]} and a pod that runs for
	// retriedRun; the suite gives its first attempt's running pod a DisruptionTarget condition, as
	// a spot reclaim would, so it is retried under the same faults as everything else.
	retried    = 0.08
	retriedRun = "20s"
	// multiPod: the job's Job runs 2 to 4 pods at once, its demand that many pods of the region.
	multiPod = 0.15
	// gangTimeout: the job's 2 pods select a node no flavor has, so they are never scheduled: each
	// attempt times out after its 1 s ready_timeout, is deleted and queued again, and the last
	// fails the job pods_never_ready.
	gangTimeout  = 0.02
	gangReadyFor = "1s"
)

// apiFault is one way a request to the API server goes wrong.
type apiFault struct {
	name string
	rate float64
	// committed: the API server carried the request out; only its answer is lost or replaced.
	committed bool
	// code is the synthetic answer's status; 0 means no answer until the request's deadline.
	code       int
	retryAfter string
}

var apiFaults = []apiFault{
	{name: "429 Retry-After: 0 (client-go retries)", rate: 0.04, code: http.StatusTooManyRequests, retryAfter: "0"},
	{name: "429", rate: 0.02, code: http.StatusTooManyRequests},
	{name: "500", rate: 0.02, code: http.StatusInternalServerError},
	{name: "500 after the server did it", rate: 0.02, committed: true, code: http.StatusInternalServerError},
	{name: "500 Retry-After: 0 after the server did it (client-go sends it again)", rate: 0.01, committed: true, code: http.StatusInternalServerError, retryAfter: "0"},
	{name: "timeout", rate: 0.005},
	{name: "timeout after the server did it", rate: 0.005, committed: true},
}

// faults draws every fault from one seeded source and counts what it injected.
type faults struct {
	mu    sync.Mutex
	rnd   *rand.Rand
	tally map[string]int
}

// errStopped is what a fault hook panics with to stop a drain where a crash would.
var errStopped = errors.New("stopped by a fault hook")

func newFaults(seed uint64) *faults {
	return &faults{rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), tally: map[string]int{}}
}

func (f *faults) chance(p float64, what string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	hit := f.rnd.Float64() < p
	if hit && what != "" {
		f.tally[what]++
	}
	return hit
}

func (f *faults) count(what string) {
	f.mu.Lock()
	f.tally[what]++
	f.mu.Unlock()
}

// api draws the fault of a request with method, nil for none.
func (f *faults) api(method string) *apiFault {
	f.mu.Lock()
	defer f.mu.Unlock()
	x := f.rnd.Float64()
	for i := range apiFaults {
		if x < apiFaults[i].rate {
			f.tally["api "+method+" "+apiFaults[i].name]++
			return &apiFaults[i]
		}
		x -= apiFaults[i].rate
	}
	return nil
}

func (f *faults) intn(n int) int { f.mu.Lock(); defer f.mu.Unlock(); return f.rnd.IntN(n) }

func (f *faults) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var lines []string
	for k, n := range f.tally {
		lines = append(lines, fmt.Sprintf("%6d  %s", n, k))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// faultTransport sits under client-go's retries and answers for the API server at random.
type faultTransport struct {
	next   http.RoundTripper
	faults *faults
}

func (t *faultTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	f := t.faults.api(req.Method)
	if f == nil {
		return t.next.RoundTrip(req)
	}
	if f.committed {
		resp, err := t.next.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	} else if req.Body != nil {
		req.Body.Close()
	}
	if f.code == 0 {
		<-req.Context().Done()
		return nil, req.Context().Err()
	}
	return synthetic(req, f.code, f.retryAfter), nil
}

// CancelRequest passes a cancel on, so the client-go wrappers above do not warn that they cannot.
func (t *faultTransport) CancelRequest(req *http.Request) {
	if c, ok := t.next.(interface{ CancelRequest(*http.Request) }); ok {
		c.CancelRequest(req)
	}
}

// synthetic is the Status an API server answers code with.
func synthetic(req *http.Request, code int, retryAfter string) *http.Response {
	reason := metav1.StatusReasonInternalError
	if code == http.StatusTooManyRequests {
		reason = metav1.StatusReasonTooManyRequests
	}
	body, _ := json.Marshal(metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Message: "injected by the fault suite", Reason: reason, Code: int32(code),
	})
	h := http.Header{"Content-Type": {"application/json"}}
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	return &http.Response{
		Status: fmt.Sprintf("%d %s", code, http.StatusText(code)), StatusCode: code,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: h, Request: req,
		Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)),
	}
}

// faultClusters is one process's clients to the sandbox cluster, through a faultTransport: the
// Clusters of both dispatch and reconcile.
type faultClusters struct {
	client  kubernetes.Interface
	dynamic dynamic.Interface
}

var (
	_ Clusters           = (*faultClusters)(nil)
	_ reconcile.Clusters = (*faultClusters)(nil)
)

func newFaultClusters(t *testing.T, base *typed.Clusters, f *faults) *faultClusters {
	t.Helper()
	rc, err := base.Config(context.Background(), region)
	if err != nil {
		t.Fatal(err)
	}
	rc.Timeout = requestDeadline
	rc.WrapTransport = func(next http.RoundTripper) http.RoundTripper {
		return &watchFaultTransport{next: &faultTransport{next: next, faults: f}, faults: f}
	}
	c := &faultClusters{}
	if c.client, err = kubernetes.NewForConfig(rc); err != nil {
		t.Fatal(err)
	}
	if c.dynamic, err = dynamic.NewForConfig(rc); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *faultClusters) Client(context.Context, string) (kubernetes.Interface, error) {
	return c.client, nil
}

func (c *faultClusters) Dynamic(context.Context, string) (dynamic.Interface, error) {
	return c.dynamic, nil
}

// process is one Lambda instance: one invocation at a time, and a lease store seen through what
// happens to the process. A crashed process never releases its lease (it runs out instead); an
// overrunning one neither respects nor releases it.
type process struct {
	leases            Leases
	crashing, overrun atomic.Bool
}

func (p *process) Acquire(ctx context.Context, name, owner string, now, until time.Time) (bool, error) {
	if p.overrun.Load() {
		return true, nil
	}
	return p.leases.Acquire(ctx, name, owner, now, until)
}

func (p *process) Release(ctx context.Context, name, owner string) error {
	if p.crashing.Load() || p.overrun.Load() {
		return nil
	}
	return p.leases.Release(ctx, name, owner)
}

func (p *process) Knock(ctx context.Context, name string, now time.Time) (bool, error) {
	if p.overrun.Load() {
		return true, nil // it takes the lease regardless; knocking leaves nothing to do
	}
	return p.leases.Knock(ctx, name, now)
}

func (p *process) ReleaseUnlessKnocked(ctx context.Context, name, owner string, idle bool) (bool, error) {
	if p.crashing.Load() || p.overrun.Load() {
		return false, nil
	}
	return p.leases.ReleaseUnlessKnocked(ctx, name, owner, idle)
}

// Idle is the lease store's: what a beat reads before ringing, which no fault of this process
// changes.
func (p *process) Idle(ctx context.Context, name string) (bool, error) {
	return p.leases.(interface {
		Idle(context.Context, string) (bool, error)
	}).Idle(ctx, name)
}

// dispatcher is one dispatch Lambda instance.
type dispatcher struct {
	process
	h      Handler
	faults *faults
}

func newDispatcher(t *testing.T, r rig, f *faults) *dispatcher {
	// A fresh instance: the rig's settings, none of its process's state (its quota cache).
	b := r.dispatch
	d := &dispatcher{faults: f, h: Handler{
		Regions: b.Regions, Flavors: b.Flavors, Capacity: b.Capacity, GPUs: b.GPUs, Store: b.Store, Leases: b.Leases, Prices: b.Prices,
		Clusters: b.Clusters, Log: b.Log, Now: b.Now, Tenants: b.Tenants, DefaultQuota: b.DefaultQuota, Webhooks: b.Webhooks,
		JobTTL: b.JobTTL, CapacityLabel: b.CapacityLabel, LongRunningHoldsSlot: b.LongRunningHoldsSlot, LongRunningPerTenant: b.LongRunningPerTenant,
		Ringer: b.Ringer, PriceStep: b.PriceStep,
		PreemptionsPerMinute: b.PreemptionsPerMinute, PreemptionCooldown: b.PreemptionCooldown, PreemptionGraceMax: b.PreemptionGraceMax,
	}}
	d.leases = r.dispatch.Leases
	d.h.Leases, d.h.Clusters, d.h.Health = &d.process, r.outages(newFaultClusters(t, r.clusters, f)), b.Health
	d.h.afterClaim = func(jobs.Job) { d.maybeCrash(crashAfterClaim, "crash after claim") }
	d.h.afterApply = func(jobs.Job) { d.maybeCrash(crashBeforeRecord, "crash after apply, before record") }
	d.h.afterEvict = func(jobs.Job) {
		d.maybeCrash(crashAfterEvict, "crash after an eviction's record, before its pods are stopped")
	}
	return d
}

func (d *dispatcher) maybeCrash(p float64, what string) {
	if d.faults.chance(p, what) {
		d.crashing.Store(true)
		panic(errStopped)
	}
}

// invoke is one invocation of the function on ev; a crash ends it as the process's death would.
func (d *dispatcher) invoke(ev events.SQSEvent) {
	d.overrun.Store(d.faults.chance(leaseOverrun, "dispatch lease overrun"))
	defer func() {
		if p := recover(); p != nil && p != errStopped {
			panic(p)
		}
		d.crashing.Store(false)
		d.overrun.Store(false)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), dispatchDeadline)
	defer cancel()
	resp, _ := d.h.HandleSQS(ctx, ev)
	if len(resp.BatchItemFailures) > 0 {
		d.faults.count("dispatch batch item failures (SQS redelivers)")
	}
}

// beater is one reconcile Lambda instance.
type beater struct {
	process
	h      *reconcile.Handler
	fresh  func() *reconcile.Handler
	faults *faults
}

func newBeater(t *testing.T, r rig, f *faults) *beater {
	b := &beater{faults: f}
	b.leases = r.reconcile.Leases.(Leases) // the rig's one store, a dynamo.LeaseStore
	clusters := r.outages(newFaultClusters(t, r.clusters, f))
	b.fresh = func() *reconcile.Handler {
		rc := r.reconcile
		return &reconcile.Handler{
			Regions: rc.Regions, Queues: rc.Queues, Ringer: rc.Ringer, Jobs: rc.Jobs, Log: rc.Log, Now: rc.Now,
			Leases: &b.process, Clusters: clusters, Health: rc.Health, Fences: rc.Fences, LostAfter: rc.LostAfter,
			// Each beat watches a moment after its pass, under the watch faults (watchfault_test.go).
			Watch: watchWindow,
		}
	}
	b.h = b.fresh()
	return b
}

func (b *beater) invoke(ev events.EventBridgeEvent) {
	if b.faults.chance(coldStart, "beat on a new instance (remembers nothing)") {
		b.h = b.fresh()
	}
	b.overrun.Store(b.faults.chance(leaseOverrun, "beat lease overrun"))
	defer b.overrun.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), beatDeadline)
	defer cancel()
	if err := b.h.HandleBeat(ctx, ev); err != nil {
		b.faults.count("beat errors (the next beat retries)")
	}
}

// TestFaults is issue 4's fault suite: N jobs through two dispatch workers and two reconcile
// workers at once, each wake delivered twice in each of two concurrent batches, each beat
// delivered twice, under random crashes after a claim and between apply and record, API-server
// 429s, 500s and timeouts, leases overrun, and manifests the API server refuses for good; each beat
// watches after its pass, its watches cut off or expired (410) at random. Leases
// and backoffs run out by moving the shared clock, not by sleeping. Every job must end in exactly
// one Kubernetes Job, one terminal status (succeeded: every injected fault is transient, so none
// may fail a job), a history without repeats, and exactly one queued, dispatched, started and
// completed event; a poisoned job, in no Kubernetes Job, failed with rejected_by_cluster straight
// from dispatching, with one queued and one failed event. None is left dispatching. The jobs are
// split between two regions on the one sandbox cluster, and a share may run in either (roaming):
// both regions' drains race for those, and each must run once, in one of its regions, with the
// region chosen on its record.
func TestFaults(t *testing.T) {
	n, seed := faultJobs(t), faultSeed(t)
	t.Logf("fault suite seed %d (replay with %s=%d), %d jobs", seed, envFaultSeed, seed, n)
	r := newRigIn(t, func(string) int { return faultCapacity }, region, west)
	r.down = &downSet{}
	r.dispatch.Health = r.store
	r.reconcile.Health, r.reconcile.Fences, r.reconcile.LostAfter = r.store, r.store, faultLostAfter
	f := newFaults(seed)
	start := time.Now()
	ids := submitMany(t, r, f, n)
	t.Logf("submitted %d jobs in %s", n, time.Since(start).Round(time.Millisecond))

	// A second a job is three times what the sandbox needs (above); only a failing run waits it out.
	// On a machine others share, TIDEGATE_FAULT_SECONDS_PER_JOB gives it longer.
	interrupted := map[string]int{}
	out := newOutages(f)
	rs := runRounds(t, r, f, []string{region, west}, n, func() bool {
		interruptRetried(t, r, interrupted)
		return out.step(r)
	})
	elapsed := time.Since(start)
	// An end's deletes that met an injected fault are the sweep's, once a minute: a beat past it,
	// without faults, takes what they left.
	tenants := dynamo.NewTenantStore(r.db, r.tables.Control)
	if err := tenants.PutTenant(context.Background(), tenancy.Tenant{Name: "ml", Org: "acme", Namespaces: []string{r.ns}, Role: tenancy.RoleMember, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	r.reconcile.Tenants, r.reconcile.SweptKinds = tenants, jobobjects.Kinds()
	r.clock.skip(time.Minute + time.Second)
	if err := r.reconcile.HandleBeat(context.Background(), events.EventBridgeEvent{ID: "beat-after"}); err != nil {
		t.Errorf("the beat after the suite: %v", err)
	}

	v := verify(t, r, ids, interrupted)
	nothingLeft(t, r)
	hit := 0
	for _, n := range interrupted {
		hit += n
	}
	t.Logf("%d retried jobs had their first attempt interrupted", hit)
	t.Logf("fault suite: %d jobs, %d lost, %d duplicated, seed %d", n, len(v.lost), len(v.duplicated), seed)
	t.Logf("%s in %d rounds (a dispatch invocation took %s on average, a beat %s); the clock moved on %d times; injected:\n%s",
		elapsed.Round(time.Second), rs.rounds, rs.perInvocation(&rs.drainTime), rs.perInvocation(&rs.beatTime), rs.skips, f)
	v.report(t, seed)
}

// report fails t for each job v found broken, seed to replay the run with.
func (v verdict) report(t *testing.T, seed uint64) {
	t.Helper()
	for _, what := range []struct {
		name string
		ids  []string
	}{{"lost", v.lost}, {"duplicated", v.duplicated}, {"wrong", v.wrong}} {
		if len(what.ids) > 0 {
			t.Errorf("%d jobs %s (seed %d), for example:\n%s", len(what.ids), what.name, seed, strings.Join(what.ids[:min(len(what.ids), 10)], "\n"))
		}
	}
}

// rounds is what runRounds did.
type rounds struct {
	rounds, skips       int
	drainTime, beatTime atomic.Int64
}

// perInvocation is sum (drainTime or beatTime) over one worker's invocations, two workers a round.
func (rs *rounds) perInvocation(sum *atomic.Int64) time.Duration {
	return (time.Duration(sum.Load()) / time.Duration(max(rs.rounds*2, 1))).Round(time.Millisecond)
}

// runRounds runs two dispatch workers and two reconcile workers under f's faults, round after
// round, until no job of the rig is queued or active, or the n jobs' patience runs out. In a round
// each region's message goes twice in a batch, and the batch to both workers at once, one draining
// the regions in each order, so two regions' drains race for the roaming jobs while two drains of
// one region overlap; the same beat goes to both reconcile workers at once. each runs after every
// round, and says whether more jobs are still to come (the rounds go on while it does).
func runRounds(t *testing.T, r rig, f *faults, regions []string, n int, each func() bool) *rounds {
	dispatchers := []*dispatcher{newDispatcher(t, r, f), newDispatcher(t, r, f)}
	beaters := []*beater{newBeater(t, r, f), newBeater(t, r, f)}
	deadline := time.Now().Add(time.Minute + time.Duration(n)*faultPatience(t))
	if d, ok := t.Deadline(); ok && d.Add(-time.Minute).Before(deadline) {
		deadline = d.Add(-time.Minute)
	}
	rs := &rounds{}
	last, idle := -1, 0
	for time.Now().Before(deadline) {
		rs.rounds++
		var there, back []events.SQSMessage
		for _, reg := range regions {
			m := events.SQSMessage{MessageId: fmt.Sprintf("wake-%s-%d", reg, rs.rounds), Body: `{"region":"` + reg + `"}`}
			there = append(there, m)
			back = append([]events.SQSMessage{m}, back...)
		}
		batches := []events.SQSEvent{{Records: slices.Concat(there, there)}, {Records: slices.Concat(back, back)}}
		beat := events.EventBridgeEvent{ID: fmt.Sprintf("beat-%d", rs.rounds)}
		var wg sync.WaitGroup
		for i, d := range dispatchers {
			wg.Go(func() { took(&rs.drainTime, func() { d.invoke(batches[i]) }) })
		}
		for _, b := range beaters {
			wg.Go(func() { took(&rs.beatTime, func() { b.invoke(beat) }) })
		}
		wg.Wait()
		more := each()

		queued, active := r.left(t)
		left := len(queued) + len(active)
		if left == 0 && !more {
			t.Logf("round %d: no job queued or active, and no fault still to come", rs.rounds)
			break
		}
		if left == last {
			idle++
		} else {
			last, idle = left, 0
		}
		// With every worker finished, a job still dispatching was left by a crash or a failed
		// apply: run its claim (and any lease a crash kept) out so the next drain adopts it. Ten
		// rounds without progress run out whatever else a lease might hold up.
		stranded := slices.ContainsFunc(active, func(j jobs.Job) bool { return j.Status == jobs.StatusDispatching })
		if stranded || idle >= 10 {
			r.clock.skip(claimLease + time.Second)
			rs.skips++
		}
		time.Sleep(roundPause)
	}
	return rs
}

// took adds how long do takes to sum.
func took(sum *atomic.Int64, do func()) {
	start := time.Now()
	do()
	sum.Add(int64(time.Since(start)))
}

// faultPatience is how long the suite waits for each job, a second unless envFaultPatience says.
func faultPatience(t *testing.T) time.Duration {
	s := os.Getenv(envFaultPatience)
	if s == "" {
		return time.Second
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q, want a positive number of seconds", envFaultPatience, s)
	}
	return time.Duration(n) * time.Second
}

func faultJobs(t *testing.T) int {
	s := os.Getenv(envFaultJobs)
	if s == "" {
		return defaultFaultJobs
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q, want a positive number of jobs", envFaultJobs, s)
	}
	return n
}

func faultSeed(t *testing.T) uint64 {
	s := os.Getenv(envFaultSeed)
	if s == "" {
		return uint64(time.Now().UnixNano())
	}
	seed, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q, want an unsigned integer", envFaultSeed, s)
	}
	return seed
}

// submitMany stores n queued jobs of random priorities, eight at a time.
func submitMany(t *testing.T, r rig, f *faults, n int) []string {
	t.Helper()
	ids := make([]string, n)
	errs := make([]error, n)
	next := atomic.Int64{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				ids[i] = fmt.Sprintf("fault-%05d", i)
				var poison func(map[string]any)
				switch {
				case f.chance(poisoned, "poisoned manifest (the API server refuses it)"):
					poison = func(m map[string]any) { m["spec"].(map[string]any)["backoffLimit"] = -1 }
				case f.chance(retried, "retried on spot interruption"):
					_, errs[i] = r.createRetried(ids[i], fmt.Sprintf("f%05d", i), &jobs.Retry{Attempts: 2, On: []string{jobs.RetrySpotInterruption}},
						podAnnotated("pod-complete.stage.kwok.x-k8s.io/delay", retriedRun))
					continue
				case f.chance(gangTimeout, "gang never scheduled (times out, fails pods_never_ready)"):
					_, errs[i] = r.createPods(ids[i], fmt.Sprintf("f%05d", i), 2, gangReadyFor, map[string]any{"node.kubernetes.io/instance-type": "none-such"})
					continue
				case f.chance(multiPod, "multi-pod job"):
					_, errs[i] = r.createPods(ids[i], fmt.Sprintf("f%05d", i), 2+f.intn(3), "", nil)
					continue
				}
				name, prio := fmt.Sprintf("f%05d", i), f.intn(jobs.MaxPriority+1)
				// The rest are split between the regions, so each is sometimes full and sometimes
				// not, and two regions' drains that each see room of their own race for a job.
				switch {
				case f.chance(roamingShare, "roaming job (either region)"):
					lost := ""
					if f.chance(requeueOnLost, "roaming job with on_region_lost requeue") {
						lost = jobs.OnRegionLostRequeue
					}
					_, errs[i] = r.roamingJob(ids[i], name, prio, nil, poison, lost, []string{region, west})
				case f.chance(0.5, ""):
					_, errs[i] = r.createIn(ids[i], name, prio, poison, west)
				default:
					_, errs[i] = r.createWith(ids[i], name, prio, nil, poison)
				}
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("submitting job %d: %v", i, err)
		}
	}
	return ids
}

// verdict sorts the jobs that broke a promise: lost (not finished, or something of it missing),
// duplicated (something of it twice), wrong (finished, once, but not as it should have).
type verdict struct{ lost, duplicated, wrong []string }

// journey is the one history a job has on the stand-ins, whatever faults it met; refused, that
// of a poisoned job, which the cluster refuses.
var (
	journey = []jobs.Status{jobs.StatusQueued, jobs.StatusDispatching, jobs.StatusPending, jobs.StatusRunning, jobs.StatusSucceeded}
	refused = []jobs.Status{jobs.StatusQueued, jobs.StatusDispatching, jobs.StatusFailed}
)

var (
	wantEvents    = []outbox.Type{outbox.JobQueued, outbox.JobDispatched, outbox.JobStarted, outbox.JobCompleted}
	refusedEvents = []outbox.Type{outbox.JobQueued, outbox.JobFailed}
)

func verify(t *testing.T, r rig, ids []string, interrupted map[string]int) verdict {
	t.Helper()
	kjobs := kubeJobsByID(t, r)
	evs := eventsByJob(t, r)
	var v verdict
	roamed := map[string]int{} // where the roaming jobs ran
	displacedJobs := 0         // jobs queued again for a lost region
	defer func() {
		t.Logf("roaming jobs by the region chosen: %v; %d jobs ran again elsewhere for a lost region", roamed, displacedJobs)
	}()
	for _, id := range ids {
		j := r.job(t, id)
		if len(j.Regions) > 1 {
			roamed[j.Region]++
		}
		if j.Retry != nil {
			lost, dup := verifyRetried(j, kjobs[id], evs[id], interrupted[id])
			v.add(id, lost, dup)
			continue
		}
		if j.ReadyTimeout == gangReadyFor {
			lost, dup := verifyGang(j, kjobs[id], evs[id])
			v.add(id, lost, dup)
			continue
		}
		hist := givenBack(j.StatusHistory)
		poison := j.Manifests[0]["spec"].(map[string]any)["backoffLimit"] != nil
		if displaced := countDisplaced(hist); displaced > 0 {
			lost, dup := verifyDisplaced(j, hist, displaced, poison, kjobs[id], evs[id])
			v.add(id, lost, dup)
			displacedJobs++
			continue
		}
		wantSeen, wantEvs, wantKube := journey, wantEvents, 1
		if poison {
			wantSeen, wantEvs, wantKube = refused, refusedEvents, 0
		}
		var seen []jobs.Status
		terminal := 0
		for _, h := range hist {
			seen = append(seen, h.Status)
			if h.Status.Terminal() {
				terminal++
			}
		}
		var lost, dup []string
		if !j.Status.Terminal() {
			lost = append(lost, fmt.Sprintf("status %s in %q (%s), history %+v", j.Status, j.Region, j.PendingReason, j.StatusHistory))
		}
		switch k := kjobs[id]; {
		case k < wantKube:
			lost = append(lost, "no Kubernetes Job")
		case k > wantKube:
			dup = append(dup, fmt.Sprintf("%d Kubernetes Jobs, want %d", k, wantKube))
		}
		if terminal > 1 || hasRepeat(seen) {
			dup = append(dup, fmt.Sprintf("history %v", seen))
		}
		for typ, k := range evs[id] {
			if k > 1 {
				dup = append(dup, fmt.Sprintf("%d %s events", k, typ))
			}
		}
		// A job that ended otherwise than succeeded is wrong, not lost: it is judged below.
		for _, typ := range wantEvs {
			if evs[id][typ] == 0 && j.Status == wantSeen[len(wantSeen)-1] {
				lost = append(lost, "no "+string(typ)+" event")
			}
		}
		last := j.StatusHistory[len(j.StatusHistory)-1].Reason
		if len(j.Regions) > 1 && j.Status.Terminal() && (j.RegionChoice == nil || j.RegionChoice.Region != j.Region || !slices.Contains(j.Regions, j.Region)) {
			v.wrong = append(v.wrong, fmt.Sprintf("%s: roaming job in %q, region_choice %+v", id, j.Region, j.RegionChoice))
			continue
		}
		switch {
		case len(lost) > 0:
			v.lost = append(v.lost, id+": "+strings.Join(append(lost, dup...), "; "))
		case len(dup) > 0:
			v.duplicated = append(v.duplicated, id+": "+strings.Join(dup, "; "))
		case !slices.Equal(seen, wantSeen) || len(evs[id]) != len(wantEvs) || poison != strings.HasPrefix(last, jobs.ReasonRejectedByCluster):
			v.wrong = append(v.wrong, fmt.Sprintf("%s: history %v (last reason %q), events %v", id, seen, last, evs[id]))
		}
	}
	return v
}

func hasRepeat(s []jobs.Status) bool {
	seen := map[jobs.Status]bool{}
	for _, st := range s {
		if seen[st] {
			return true
		}
		seen[st] = true
	}
	return false
}

// kubeJobsByID counts the batch/v1 Jobs in the rig's namespace by their job-id label, those being
// deleted left out.
func kubeJobsByID(t *testing.T, r rig) map[string]int {
	t.Helper()
	kc, err := r.clusters.Client(context.Background(), region)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	opts := metav1.ListOptions{LabelSelector: jobs.IDKey, Limit: 500}
	for {
		l, err := kc.BatchV1().Jobs(r.ns).List(context.Background(), opts)
		if err != nil {
			t.Fatalf("listing Jobs in %s: %v", r.ns, err)
		}
		for _, kj := range l.Items {
			if kj.DeletionTimestamp == nil { // one being deleted is gone as far as a job goes
				out[kj.Labels[jobs.IDKey]]++
			}
		}
		if opts.Continue = l.Continue; opts.Continue == "" {
			return out
		}
	}
}

// eventsByJob counts the outbox's events by job and type: the whole events table, since nothing
// in the suite delivers (and so removes from gsi1's "undelivered") any of them.
func eventsByJob(t *testing.T, r rig) map[string]map[outbox.Type]int {
	t.Helper()
	out := map[string]map[outbox.Type]int{}
	p := dynamodb.NewScanPaginator(r.db, &dynamodb.ScanInput{TableName: &r.tables.Events})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("scanning the outbox: %v", err)
		}
		var evs []outbox.Event
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &evs); err != nil {
			t.Fatalf("decoding the outbox: %v", err)
		}
		for _, ev := range evs {
			id, _ := ev.Data["job_id"].(string)
			if out[id] == nil {
				out[id] = map[outbox.Type]int{}
			}
			out[id][ev.Type]++
		}
	}
	return out
}

// createPods stores queued job id whose Job runs pods pods at once, each selecting selector, with
// ready_timeout readyFor ("" for the default), and its demand of that many pods.
func (r rig) createPods(id, name string, pods int, readyFor string, selector map[string]any) (jobs.Job, error) {
	m := r.manifest(name)
	spec := m["spec"].(map[string]any)
	spec["parallelism"], spec["completions"] = pods, pods
	if selector != nil {
		spec["template"].(map[string]any)["spec"].(map[string]any)["nodeSelector"] = selector
	}
	now := r.clock.now()
	j := jobs.New(id, "ml", r.ns, region, jobs.DefaultPriority, nil, []map[string]any{m}, now)
	j.Demand = map[string]string{"pods": strconv.Itoa(pods)}
	if readyFor != "" {
		j.ReadyTimeout = readyFor
	}
	_, _, err := r.store.Create(context.Background(), j, jobs.Event(outbox.JobQueued, j, "", now), nil, now)
	return j, err
}

// verifyGang judges a job whose pods are never scheduled: it ends failed pods_never_ready after
// at most jobs.MaxReadyTimeouts applies (pending; a claim that crashed, or an apply that found the
// last attempt's Job still going, is not one), each attempt's Kubernetes Job deleted, with one
// queued and one failed event.
func verifyGang(j jobs.Job, kube int, evs map[outbox.Type]int) (lost, dup []string) {
	dispatched := 0
	for _, h := range j.StatusHistory {
		if h.Status == jobs.StatusPending {
			dispatched++
		}
	}
	last := j.StatusHistory[len(j.StatusHistory)-1]
	switch {
	case !j.Status.Terminal():
		lost = append(lost, "status "+string(j.Status))
	case j.Status != jobs.StatusFailed || !strings.Contains(last.Reason, jobs.ReasonPodsNeverReady):
		lost = append(lost, fmt.Sprintf("ended %s (%q), want failed %s", j.Status, last.Reason, jobs.ReasonPodsNeverReady))
	}
	if dispatched > jobs.MaxReadyTimeouts {
		dup = append(dup, fmt.Sprintf("%d applies, want at most %d (history %+v)", dispatched, jobs.MaxReadyTimeouts, j.StatusHistory))
	}
	if kube > 0 {
		dup = append(dup, fmt.Sprintf("%d Kubernetes Jobs left, want its attempts' deleted", kube))
	}
	if evs[outbox.JobQueued] != 1 || evs[outbox.JobFailed] > 1 {
		dup = append(dup, fmt.Sprintf("events %v", evs))
	}
	return lost, dup
}

// nothingLeft fails t for each pod of the rig's namespace still running with every job ended:
// the ledger at the end, which nothing of theirs may still hold.
func nothingLeft(t *testing.T, r rig) {
	t.Helper()
	if left := podsLeft(t, r); len(left) > 0 {
		t.Errorf("%d pods have not ended with every job ended, for example %v", len(left), left[:min(len(left), 5)])
	}
}

// podsLeft lists the pods of the rig's namespace that have not ended, waiting up to 20 s for
// those being deleted to go.
func podsLeft(t *testing.T, r rig) []string {
	t.Helper()
	kc, err := r.clusters.Client(context.Background(), region)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		pods, err := kc.CoreV1().Pods(r.ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var left []string
		for _, p := range pods.Items {
			if p.Status.Phase != "Succeeded" && p.Status.Phase != "Failed" {
				left = append(left, p.Name+" ("+string(p.Status.Phase)+")")
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(time.Second)
	}
}
