package dispatch

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobobjects"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/kube"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/spotgate"
)

// The issue asks dispatch to reach 0.8× the throughput of raw client-go Creates of the same Jobs
// through the same rest.Config, with exactly one create per job. Each round queues benchJobs jobs
// in a region of its own, then times Handler.Drain dispatching all of them (capacity is ample) and,
// as the floor, a loop of typed Creates of the very objects dispatch sends, renamed into another
// namespace. The two swap places every round so neither always follows the other.
//
// Both sides get clients made afresh from one rest.Config, the production one (kube.Clusters'
// QPS, burst, timeout), so each starts with a full rate-limiter bucket. Counting happens at the
// wire: a WrapTransport on that config sees every Kubernetes request, and an HTTP client under
// the DynamoDB SDK sees every DynamoDB call.
//
// The manifests are suspended Jobs: the job controller and kwok would otherwise spend the
// 2-core machine running the first side's 200 Jobs while the second side is being timed.
//
//	go test -run '^$' -bench DispatchVsRaw -benchtime 1x ./shared/dispatch/

// benchJobs is one drain's batch: a busy region's burst of submissions, and twice the client's
// burst of 100, so the rate limiter's steady 50 QPS shows in the floor as it would in production.
const benchJobs = 200

func BenchmarkDispatchVsRawCreate(b *testing.B) {
	bench := newDispatchBench(b)

	// One small untimed round first: TLS handshakes, DynamoDB Local's JIT, the apiserver's caches.
	bench.round(b, "warm", 20, true)

	var dispatchTime, rawTime time.Duration
	var jobsDone, creates, otherKube int
	dynCalls, dynTook := map[string]int{}, map[string]time.Duration{}
	var createTook time.Duration
	for i := 0; b.Loop(); i++ {
		r := bench.round(b, fmt.Sprint(i), benchJobs, i%2 == 0)
		dispatchTime += r.dispatch
		rawTime += r.raw
		jobsDone += benchJobs
		creates += r.creates
		otherKube += r.otherKube
		for op, n := range r.dynCalls {
			dynCalls[op] += n
			dynTook[op] += r.dynTook[op]
		}
		createTook += r.createTook
	}
	perJob := func(n int) float64 { return float64(n) / float64(jobsDone) }
	dispatchRate := float64(jobsDone) / dispatchTime.Seconds()
	rawRate := float64(jobsDone) / rawTime.Seconds()
	b.ReportMetric(dispatchRate, "dispatch-jobs/s")
	b.ReportMetric(rawRate, "raw-jobs/s")
	b.ReportMetric(dispatchRate/rawRate, "dispatch/raw")
	b.ReportMetric(perJob(creates), "creates/job")
	var dynTotal int
	var ops []string
	for op, n := range dynCalls {
		dynTotal += n
		ops = append(ops, fmt.Sprintf("%s %.2f (%s each)", op, perJob(n), mean(dynTook[op], n)))
	}
	slices.Sort(ops)
	b.ReportMetric(perJob(dynTotal), "dynamo-calls/job")
	b.Logf("per dispatched job, over %d: DynamoDB %v; the create %s; other Kubernetes requests %d",
		jobsDone, ops, mean(createTook, creates), otherKube)
	if creates != jobsDone || otherKube != 0 {
		b.Errorf("dispatch made %d creates and %d other Kubernetes requests for %d jobs, want exactly one create each and nothing else",
			creates, otherKube, jobsDone)
	}
}

// mean is the average of n calls that took total, to a tenth of a millisecond.
func mean(total time.Duration, n int) time.Duration {
	if n == 0 {
		return 0
	}
	return (total / time.Duration(n)).Round(100 * time.Microsecond)
}

// dispatchBench is the rig of one benchmark: tables, two namespaces, the production rest.Config
// with a meter on its transport, and a store whose DynamoDB client is metered too.
type dispatchBench struct {
	store       *dynamo.JobStore
	leases      *dynamo.LeaseStore
	ns, rawNS   string
	rc          *rest.Config
	kube, dyndb *testenv.Meter
}

func newDispatchBench(b *testing.B) *dispatchBench {
	b.Helper()
	tables, db := testenv.Tables(b)
	ns, kst := testenv.Namespace(b)
	rawNS, _ := testenv.Namespace(b)
	clusters, err := kube.New(config.Config{Regions: map[string]string{region: "sandbox"}, Kubeconfig: kst.Kubeconfig}, aws.Config{})
	if err != nil {
		b.Fatal(err)
	}
	rc, err := clusters.Config(context.Background(), region)
	if err != nil {
		b.Fatal(err)
	}
	km, dm := &testenv.Meter{}, &testenv.Meter{}
	wrap := rc.WrapTransport
	rc.WrapTransport = func(next http.RoundTripper) http.RoundTripper {
		if wrap != nil {
			next = wrap(next)
		}
		return km.Transport(next)
	}
	metered := dynamodb.New(db.Options(), func(o *dynamodb.Options) {
		next := o.HTTPClient
		if next == nil {
			next = http.DefaultClient
		}
		o.HTTPClient = dm.DynamoDB(next)
	})
	return &dispatchBench{
		store: dynamo.NewJobStore(metered, tables), leases: dynamo.NewLeaseStore(metered, tables.Control),
		ns: ns, rawNS: rawNS, rc: rc, kube: km, dyndb: dm,
	}
}

// roundResult is what one round measured.
type roundResult struct {
	dispatch, raw      time.Duration
	creates, otherKube int                      // dispatch's Kubernetes requests
	dynCalls           map[string]int           // dispatch's DynamoDB calls by operation
	dynTook            map[string]time.Duration // and their time on the wire
	createTook         time.Duration            // dispatch's creates' time on the wire
}

// round queues n jobs in a region of their own, then times their drain and the raw Creates of the
// same objects, in the order dispatchFirst says. The benchmark's timer runs only around those two.
func (d *dispatchBench) round(b *testing.B, name string, n int, dispatchFirst bool) roundResult {
	b.StopTimer()
	ctx := context.Background()
	reg := "bench-" + name
	queued := d.queue(b, reg, name, n)
	raws := make([]*batchv1.Job, n)
	for i, j := range queued {
		obj := jobobjects.Stamped(j.Manifests[0], j)
		obj.SetName("raw-" + obj.GetName())
		obj.SetNamespace(d.rawNS)
		raws[i] = &batchv1.Job{}
		if err := kruntime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, raws[i]); err != nil {
			b.Fatal(err)
		}
	}
	// Fresh clients from the one config: each side starts with a full rate-limiter bucket.
	dc, err := dynamic.NewForConfig(d.rc)
	if err != nil {
		b.Fatal(err)
	}
	kc, err := kubernetes.NewForConfig(d.rc)
	if err != nil {
		b.Fatal(err)
	}
	h := &Handler{
		Regions:  map[string]string{reg: "sandbox"},
		Capacity: func(string) int { return math.MaxInt32 },
		Store:    d.store, Leases: d.leases, Prices: noPrices{}, Clusters: oneCluster{dc},
		Log: slog.New(slog.DiscardHandler), Now: time.Now,
	}

	var r roundResult
	drain := func() {
		d.kube.Reset()
		d.dyndb.Reset()
		start := time.Now()
		if err := h.Drain(ctx, reg); err != nil {
			b.Fatalf("Drain(%s): %v", reg, err)
		}
		r.dispatch = time.Since(start)
		for _, c := range d.kube.Snapshot() {
			if c.Method == http.MethodPost && strings.HasSuffix(c.Path, "/namespaces/"+d.ns+"/jobs") && c.Code == http.StatusCreated {
				r.creates++
				r.createTook += c.Took
			} else {
				r.otherKube++
			}
		}
		r.dynCalls, r.dynTook = map[string]int{}, map[string]time.Duration{}
		for _, c := range d.dyndb.Snapshot() {
			r.dynCalls[c.Method]++
			r.dynTook[c.Method] += c.Took
		}
	}
	raw := func() {
		start := time.Now()
		for _, j := range raws {
			if _, err := kc.BatchV1().Jobs(d.rawNS).Create(ctx, j, metav1.CreateOptions{FieldManager: "tidegate"}); err != nil {
				b.Fatalf("raw Create %s: %v", j.Name, err)
			}
		}
		r.raw = time.Since(start)
	}
	runtime.GC()
	b.StartTimer()
	if dispatchFirst {
		drain()
		raw()
	} else {
		raw()
		drain()
	}
	b.StopTimer()

	active, err := d.store.Active(ctx, reg)
	if err != nil {
		b.Fatal(err)
	}
	pending := 0
	for _, j := range active {
		if j.Status == jobs.StatusPending {
			pending++
		}
	}
	if pending != n || len(active) != n {
		b.Fatalf("after the drain of %s, %d of %d jobs are active and %d pending; want all %d pending", reg, len(active), n, pending, n)
	}
	b.StartTimer()
	return r
}

// queue stores n queued jobs in region reg, eight at a time, and answers them in order.
func (d *dispatchBench) queue(b *testing.B, reg, name string, n int) []jobs.Job {
	out := make([]jobs.Job, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := range out {
		jobName := fmt.Sprintf("r%s-%03d", name, i)
		now := time.Now()
		j := jobs.New("job-"+jobName, "ml", d.ns, reg, jobs.DefaultPriority, nil, []map[string]any{suspendedJob(jobName)}, now)
		out[i] = j
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if _, _, err := d.store.Create(context.Background(), j, jobs.Event(outbox.JobQueued, j, "", now), nil, now); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return out
}

// suspendedJob is the restricted busybox Job the dispatch tests run, suspended (see above).
func suspendedJob(name string) map[string]any {
	return map[string]any{
		"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"suspend": true, "template": map[string]any{"spec": map[string]any{
			"restartPolicy":   "Never",
			"securityContext": map[string]any{"runAsNonRoot": true, "runAsUser": int64(1000), "seccompProfile": map[string]any{"type": "RuntimeDefault"}},
			"containers": []any{map[string]any{"name": "main", "image": "busybox:1.36", "securityContext": map[string]any{
				"allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []any{"ALL"}}}}},
		}}},
	}
}

// oneCluster serves every region with one dynamic client.
type oneCluster struct{ dc dynamic.Interface }

func (c oneCluster) Dynamic(context.Context, string) (dynamic.Interface, error) { return c.dc, nil }

// noPrices knows no price; the benchmark's jobs cap none, so it is never asked.
type noPrices struct{}

func (noPrices) Observe(_ context.Context, _, instanceType string, now time.Time) spotgate.Observation {
	return spotgate.Observation{InstanceType: instanceType, CheckedAt: now}
}
