package dispatch

import (
	"context"
	"log/slog"
	"math"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/tidegate/tidegate/shared/admission"
	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dev/spotprices"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/ec2spot"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/kube"
	"github.com/tidegate/tidegate/shared/kube/typed"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/reconcile"
	"github.com/tidegate/tidegate/shared/wake"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// clock is a test's settable now, shared by dispatch and reconcile.
type clock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *clock) now() time.Time       { c.mu.Lock(); defer c.mu.Unlock(); return time.Now().Add(c.off) }
func (c *clock) skip(d time.Duration) { c.mu.Lock(); c.off += d; c.mu.Unlock() }

// rig is one region on the real stand-ins: tables, a namespace in the sandbox cluster, a price
// endpoint, and a dispatch and a reconcile handler sharing one clock.
type rig struct {
	store     *dynamo.JobStore
	db        *dynamodb.Client
	tables    dynamo.Tables
	clusters  *typed.Clusters
	ns        string
	book      *spotprices.Book
	dispatch  *Handler
	reconcile *reconcile.Handler
	clock     *clock
	// down, when set, are the regions the fault suite's workers find out of reach.
	down *downSet
}

const region = "us-east-1"

func newRig(t *testing.T, capacity int) rig {
	return newRigIn(t, func(string) int { return capacity }, region)
}

// newRigIn is newRig with regions (the first the rig's own), each on the sandbox cluster, each
// with the capacity given.
func newRigIn(t *testing.T, capacity func(string) int, regions ...string) rig {
	tables, db := testenv.Tables(t)
	ns, kst := testenv.Namespace(t)
	queueURL, q := testenv.Queue(t, "dispatch")
	clusterOf := map[string]string{}
	for _, r := range regions {
		clusterOf[r] = "sandbox"
	}
	kc, err := kube.New(config.Config{Regions: clusterOf, Kubeconfig: kst.Kubeconfig}, aws.Config{})
	if err != nil {
		t.Fatal(err)
	}
	clusters := typed.New(kc)
	book := &spotprices.Book{}
	srv := httptest.NewServer(book.Handler())
	t.Cleanup(srv.Close)
	prices := ec2spot.NewReader(func(r string) ec2spot.Describer {
		return ec2.New(ec2.Options{Region: r, BaseEndpoint: aws.String(srv.URL), Credentials: credentials.NewStaticCredentialsProvider("a", "b", "")})
	})
	store := dynamo.NewJobStore(db, tables)
	leases := dynamo.NewLeaseStore(db, tables.Control)
	c := &clock{}
	log := slog.New(slog.DiscardHandler)
	return rig{
		store: store, db: db, tables: tables, clusters: clusters, ns: ns, book: book, clock: c,
		dispatch: &Handler{
			Regions: clusterOf, Capacity: capacity,
			Store: store, Leases: leases, Prices: prices, Clusters: clusters, Log: log, Now: c.now,
		},
		reconcile: &reconcile.Handler{
			Regions: regions, Queues: store, Ringer: wake.New(q, queueURL), Jobs: store,
			Clusters: clusters, Leases: leases, Log: log, Now: c.now, Prices: prices,
		},
	}
}

// submit stores a queued job job-<name> running a restricted busybox Job named name.
func (r rig) submit(t *testing.T, name string, priority int, spot *jobs.Spot) jobs.Job {
	return r.submitAs(t, "job-"+name, name, priority, spot)
}

func (r rig) submitAs(t *testing.T, id, name string, priority int, spot *jobs.Spot) jobs.Job {
	t.Helper()
	j, err := r.create(id, name, priority, spot)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// manifest is a restricted busybox Job named name, in the rig's namespace.
func (r rig) manifest(name string) map[string]any {
	return map[string]any{
		"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": name, "namespace": r.ns},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"restartPolicy":   "Never",
			"securityContext": map[string]any{"runAsNonRoot": true, "runAsUser": 1000, "seccompProfile": map[string]any{"type": "RuntimeDefault"}},
			"containers": []any{map[string]any{"name": "main", "image": "busybox:1.36", "securityContext": map[string]any{
				"allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []any{"ALL"}}}}},
		}}},
	}
}

// create stores queued job id, running a restricted busybox Job named name, with its job.queued
// event; it is submitAs for callers off the test's goroutine.
func (r rig) create(id, name string, priority int, spot *jobs.Spot) (jobs.Job, error) {
	return r.createWith(id, name, priority, spot, nil)
}

// createWith is create with the Job's manifest edited first.
func (r rig) createWith(id, name string, priority int, spot *jobs.Spot, edit func(map[string]any)) (jobs.Job, error) {
	m := r.manifest(name)
	if edit != nil {
		edit(m)
	}
	now := r.clock.now()
	j := jobs.New(id, "ml", r.ns, region, priority, nil, []map[string]any{m}, now)
	j.Spot = spot
	_, _, err := r.store.Create(context.Background(), j, jobs.Event(outbox.JobQueued, j, "", now), nil, now)
	return j, err
}

func (r rig) job(t *testing.T, id string) jobs.Job {
	t.Helper()
	j, err := r.store.Job(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// run drains and beats until done says stop, recording the order jobs left the queue.
func (r rig) run(t *testing.T, ids []string, done func(map[string]jobs.Job) bool) []string {
	t.Helper()
	var order []string
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		if err := r.dispatch.Drain(context.Background(), region); err != nil {
			t.Fatalf("Drain: %v", err)
		}
		if err := r.reconcile.HandleBeat(context.Background(), events.EventBridgeEvent{ID: "beat"}); err != nil {
			t.Fatalf("HandleBeat: %v", err)
		}
		now := map[string]jobs.Job{}
		for _, id := range ids {
			j := r.job(t, id)
			now[id] = j
			if j.Status != jobs.StatusQueued && !slices.Contains(order, id) {
				order = append(order, id)
			}
		}
		if done(now) {
			return order
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("not done within 90 s; order so far %v", order)
	return nil
}

func allEnded(ids ...string) func(map[string]jobs.Job) bool {
	return func(js map[string]jobs.Job) bool {
		for _, id := range ids {
			if !js[id].Status.Terminal() {
				return false
			}
		}
		return true
	}
}

// checkCost checks that job j's cost was estimated on its kwok node (a spot g5.xlarge in
// us-east-1a) at the spot price read when it ended.
func checkCost(t *testing.T, j jobs.Job, price float64) {
	t.Helper()
	c := j.Cost
	if c == nil || !c.Complete || c.Currency != "USD" || len(c.Nodes) != 1 {
		t.Fatalf("job %s cost = %+v, want a complete estimate in USD on one node", j.ID, c)
	}
	n := c.Nodes[0]
	if n.Name != "kwok-node-0" || n.InstanceType != "g5.xlarge" || n.CapacityType != "spot" || n.Zone != "us-east-1a" ||
		n.PricePerHour == nil || *n.PricePerHour != price || n.PriceSource != "spot_price_history" {
		t.Errorf("job %s cost node = %+v, want kwok-node-0, a spot g5.xlarge in us-east-1a at %v from the price history", j.ID, n, price)
	}
	if want := math.Round(price*n.Seconds/3600*10000) / 10000; c.Total != want || n.Seconds < 0 || n.Seconds > 120 {
		t.Errorf("job %s cost total = %v for %v s, want %v", j.ID, c.Total, n.Seconds, want)
	}
}

// TestPriorityOrderAndSpotGate is the scenario: capacity 1, jobs of priorities 10, 90
// and 50 run in the order 90, 50, 10, while a priority-100 job capped under the spot price waits
// without holding them up; once the price drops it runs too.
func TestPriorityOrderAndSpotGate(t *testing.T) {
	r := newRig(t, 1)
	if err := r.book.Set(region, "g5.xlarge", 0.55, r.clock.now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	low, high, mid := r.submit(t, "p10", 10, nil), r.submit(t, "p90", 90, nil), r.submit(t, "p50", 50, nil)
	gated := r.submit(t, "p100", 100, &jobs.Spot{InstanceType: "g5.xlarge", MaxPrice: 0.40})

	ids := []string{low.ID, high.ID, mid.ID, gated.ID}
	order := r.run(t, ids, allEnded(low.ID, high.ID, mid.ID))
	if want := []string{high.ID, mid.ID, low.ID}; !slices.Equal(order, want) {
		t.Errorf("dispatch order = %v, want %v", order, want)
	}
	for _, id := range []string{low.ID, high.ID, mid.ID} {
		j := r.job(t, id)
		var seen []jobs.Status
		for _, h := range j.StatusHistory {
			seen = append(seen, h.Status)
		}
		if want := []jobs.Status{jobs.StatusQueued, jobs.StatusDispatching, jobs.StatusPending, jobs.StatusRunning, jobs.StatusSucceeded}; !slices.Equal(seen, want) {
			t.Errorf("job %s went %v, want %v", id, seen, want)
		}
		if j.Placement["node_name"] != "kwok-node-0" || j.Placement["node_instance_type"] != "g5.xlarge" {
			t.Errorf("job %s placement = %v, want kwok-node-0, a g5.xlarge", id, j.Placement)
		}
		checkCost(t, j, 0.55)
	}
	g := r.job(t, gated.ID)
	if g.Status != jobs.StatusQueued || g.PendingReason != "spot_price_above_cap" || g.SpotGate == nil || g.SpotGate.ObservedPrice == nil || *g.SpotGate.ObservedPrice != 0.55 {
		t.Fatalf("gated job = %s, reason %q, gate %+v; want queued, spot_price_above_cap, observed 0.55", g.Status, g.PendingReason, g.SpotGate)
	}

	if err := r.book.Set(region, "g5.xlarge", 0.35, r.clock.now()); err != nil {
		t.Fatal(err)
	}
	r.clock.skip(2 * time.Minute) // past the spot gate's cache
	r.run(t, ids, allEnded(gated.ID))
	if g := r.job(t, gated.ID); g.Status != jobs.StatusSucceeded {
		t.Errorf("gated job after the price dropped = %s, want succeeded", g.Status)
	} else {
		checkCost(t, g, 0.35) // the price when it ended, not the one it was held at
	}
}

// TestNames: a rerun under the name of a finished job's object replaces it; a name held by an
// object Tidegate did not make fails the job clearly.
func TestNames(t *testing.T) {
	r := newRig(t, 5)
	first := r.submit(t, "same", 50, nil)
	r.run(t, []string{first.ID}, allEnded(first.ID))
	rerun := r.submitAs(t, "job-rerun", "same", 50, nil)
	r.run(t, []string{rerun.ID}, allEnded(rerun.ID))
	if got := r.job(t, rerun.ID); got.Status != jobs.StatusSucceeded {
		t.Errorf("a rerun under a finished job's name = %s (%v), want succeeded", got.Status, got.StatusHistory)
	}

	kc, err := r.clusters.Client(context.Background(), region)
	if err != nil {
		t.Fatal(err)
	}
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "taken", Namespace: r.ns}}
	if _, err := kc.CoreV1().ConfigMaps(r.ns).Create(context.Background(), foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	now := r.clock.now()
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "taken"}, "data": map[string]any{"k": "v"}}
	clash := jobs.New("job-clash", "ml", r.ns, region, 50, nil, []map[string]any{cm}, now)
	if _, _, err := r.store.Create(context.Background(), clash, jobs.Event(outbox.JobQueued, clash, "", now), nil, now); err != nil {
		t.Fatal(err)
	}
	r.run(t, []string{clash.ID}, allEnded(clash.ID))
	got := r.job(t, clash.ID)
	if got.Status != jobs.StatusFailed || !containsAll(got.StatusHistory[len(got.StatusHistory)-1].Reason, "name collision", "did not create") {
		t.Errorf("a job whose name a foreign object holds = %s (%v), want failed naming the collision", got.Status, got.StatusHistory)
	}
}

// TestRerunWaitsForTheEndToBeRecorded: a rerun under the name of a Job that has finished but
// whose end no beat has recorded yet waits in the queue, rather than replacing the objects that
// end is read from; once a beat records it, the rerun replaces it. Neither job is lost.
func TestRerunWaitsForTheEndToBeRecorded(t *testing.T) {
	r := newRig(t, 5)
	ctx := context.Background()
	first := r.submit(t, "early", 50, nil)
	if err := r.dispatch.Drain(ctx, region); err != nil {
		t.Fatal(err)
	}
	kc, err := r.clusters.Client(ctx, region)
	if err != nil {
		t.Fatal(err)
	}
	// kwok runs the Job to its end in about a second; no beat runs meanwhile.
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		kj, err := kc.BatchV1().Jobs(r.ns).Get(ctx, "early", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return slices.ContainsFunc(kj.Status.Conditions, func(c batchv1.JobCondition) bool {
			return c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue
		}), nil
	})
	if err != nil {
		t.Fatalf("waiting for the first Job to complete: %v", err)
	}

	rerun := r.submitAs(t, "job-early-rerun", "early", 50, nil)
	if err := r.dispatch.Drain(ctx, region); err != nil {
		t.Fatal(err)
	}
	if got := r.job(t, rerun.ID); got.Status != jobs.StatusQueued || got.PendingReason != string(admission.ReasonNameInUse) {
		t.Errorf("a rerun under a name whose Job's end is not recorded = %s, reason %q; want queued, %s",
			got.Status, got.PendingReason, admission.ReasonNameInUse)
	}
	kj, err := kc.BatchV1().Jobs(r.ns).Get(ctx, "early", metav1.GetOptions{})
	if err != nil || kj.Annotations[jobs.IDKey] != first.ID {
		t.Fatalf("after the rerun's drain the Job early is %v (%v); want the first job's, untouched", kj.Annotations, err)
	}

	r.run(t, []string{first.ID, rerun.ID}, allEnded(first.ID, rerun.ID))
	for _, id := range []string{first.ID, rerun.ID} {
		if got := r.job(t, id); got.Status != jobs.StatusSucceeded {
			t.Errorf("job %s = %s (%v), want succeeded", id, got.Status, got.StatusHistory)
		}
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
