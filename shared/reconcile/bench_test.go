package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/kube"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/reconcile"
)

// The issue asks a reconcile beat that changes nothing, over 5,000 running jobs, to take at most
// 1.3× one raw paginated LIST of the same Jobs with the same selector, and to make no API calls
// beyond the LIST pages (and the changes, none here). The setup stores 5,000 records in running and
// creates their Jobs, labelled and annotated as dispatch makes them, with a running status: one
// active, ready pod each. Then, untimed by b, it times beats and raw LISTs in alternation, through
// one client made from the production rest.Config (kube.Clusters' QPS, burst, timeout) with a
// meter on its transport, and reports the fastest of each (a neighbour's burst only ever slows
// one) and the ratio of their medians.
//
// The beats are an instance's second and later: each remembers what the last saw recorded, so a
// quiet beat reads no job record (follow.go). An instance's first beat reads every listed job's
// record; it is timed apart, as first-beat/raw.
//
// The Jobs carry spec.managedBy, so the job controller leaves them (and their status) alone: it
// would otherwise make their pods, kwok would complete them at once, and the beat would have
// changes to record. Their pods therefore do not exist; in production each running job has one,
// but the beat does not list pods a Job made (follow.go's unownedPods), so there too it reads one
// page of pods when every job is a Job.
//
//	go test -run '^$' -bench NoopBeatVsRawList -benchtime 1x ./shared/reconcile/

const (
	benchRegion = "us-east-1"
	// beatJobs is the size: ten pages at the beat's 500 a page.
	beatJobs = 5000
	// beatPairs is how many beats, and raw LISTs between them, one round times.
	beatPairs = 9
	// listPage is the beat's page size (follow.go): the same pages for the floor.
	listPage = 500
	// setupWorkers bounds the setup's concurrent creates: enough to keep DynamoDB Local and the
	// apiserver busy, few enough not to trip the apiserver's in-flight limits.
	setupWorkers = 16
)

func BenchmarkNoopBeatVsRawList(b *testing.B) {
	bb := newBeatBench(b)
	// newInstance is a reconcile process just started: it remembers no beat.
	newInstance := func() *reconcile.Handler {
		return &reconcile.Handler{
			Regions: []string{benchRegion}, Queues: bb.store, Ringer: bb.rings, Jobs: bb.store,
			Clusters: oneClient{kc: bb.kc}, Leases: dynamo.NewLeaseStore(bb.db, bb.tables.Control),
			Log: slog.New(slog.DiscardHandler), Now: time.Now,
		}
	}
	h := newInstance()

	// One of each untimed first: connections, DynamoDB Local's JIT, the apiserver's watch cache;
	// and the instance's first beat, which reads every listed job's record once.
	bb.beat(b, h, "warm")
	bb.rawList(b)

	var beats, raws []time.Duration
	var last beatCalls
	b.ResetTimer()
	for round := 0; b.Loop(); round++ {
		for i := range beatPairs {
			beatFirst := i%2 == 0
			if !beatFirst {
				raws = append(raws, bb.rawList(b))
			}
			t, calls := bb.beat(b, h, fmt.Sprintf("beat-%d-%d", round, i))
			beats = append(beats, t)
			last = calls
			if beatFirst {
				raws = append(raws, bb.rawList(b))
			}
		}
	}
	bestBeat, bestRaw := slices.Min(beats), slices.Min(raws)
	b.ReportMetric(float64(bestBeat.Microseconds())/1000, "beat-ms")
	b.ReportMetric(float64(bestRaw.Microseconds())/1000, "raw-list-ms")
	b.ReportMetric(float64(bestBeat)/float64(bestRaw), "beat/raw")
	b.ReportMetric(float64(median(beats))/float64(median(raws)), "median-beat/median-raw")
	b.ReportMetric(float64(last.kube), "api-calls/beat")
	b.ReportMetric(float64(last.jobPages+last.podPages), "list-pages/beat")
	b.ReportMetric(float64(last.writes), "writes/beat")
	b.ReportMetric(float64(last.dynamo), "dynamo-calls/beat")
	// A new instance's first beat, which reads all 5,000 records (by id, 100 a call).
	var bestCold time.Duration
	var cold beatCalls
	for i := range 3 {
		t, calls := bb.beat(b, newInstance(), fmt.Sprintf("cold-%d", i))
		bestCold, cold = fastest(bestCold, t), calls
	}
	b.ReportMetric(float64(bestCold)/float64(bestRaw), "first-beat/raw")
	b.Logf("a new instance's first beat: %s at best; DynamoDB %v", bestCold.Round(time.Millisecond), cold.dynamoOps)
	// What reading the region's active records costs alone, for scale: a beat reads none of them.
	var bestActive time.Duration
	var records int
	for range 3 {
		start := time.Now()
		active, err := bb.store.Active(context.Background(), benchRegion)
		if err != nil {
			b.Fatal(err)
		}
		records = len(active)
		bestActive = fastest(bestActive, time.Since(start))
	}
	b.Logf("one read of the region's %d active records (JobStore.Active): %s at best", records, bestActive.Round(time.Millisecond))
	b.Logf("last beat: %d Job pages + %d pod pages, %d writes, %s on the Kubernetes wire; DynamoDB %v, %s on its wire",
		last.jobPages, last.podPages, last.writes, last.kubeWire.Round(time.Millisecond), last.dynamoOps, last.dynamoWire.Round(time.Millisecond))
}

func median(ds []time.Duration) time.Duration {
	s := slices.Sorted(slices.Values(ds))
	return s[len(s)/2]
}

func fastest(best, t time.Duration) time.Duration {
	if best == 0 || t < best {
		return t
	}
	return best
}

// beatBench is the rig: tables holding 5,000 running records, a namespace holding their Jobs, and
// metered clients for both.
type beatBench struct {
	tables      dynamo.Tables
	db          *dynamodb.Client // metered
	store       *dynamo.JobStore // on db
	kc          kubernetes.Interface
	kube, dyndb *testenv.Meter
	rings       *ringCounter
	listed      int // labelled Jobs in the cluster: beatJobs, and any other tests'
}

func newBeatBench(b *testing.B) *beatBench {
	b.Helper()
	ctx := context.Background()
	tables, plain := testenv.Tables(b)
	ns, kst := testenv.Namespace(b)
	clusters, err := kube.New(config.Config{Regions: map[string]string{benchRegion: "sandbox"}, Kubeconfig: kst.Kubeconfig}, aws.Config{})
	if err != nil {
		b.Fatal(err)
	}
	rc, err := clusters.Config(ctx, benchRegion)
	if err != nil {
		b.Fatal(err)
	}
	// The setup's client: the same cluster, no rate limit, nothing metered.
	src := rest.CopyConfig(rc)
	src.QPS, src.Burst = -1, 0
	setup, err := kubernetes.NewForConfig(src)
	if err != nil {
		b.Fatal(err)
	}
	bb := &beatBench{tables: tables, kube: &testenv.Meter{}, dyndb: &testenv.Meter{}, rings: &ringCounter{}}
	wrap := rc.WrapTransport
	rc.WrapTransport = func(next http.RoundTripper) http.RoundTripper {
		if wrap != nil {
			next = wrap(next)
		}
		return bb.kube.Transport(next)
	}
	if bb.kc, err = kubernetes.NewForConfig(rc); err != nil {
		b.Fatal(err)
	}
	bb.db = dynamodb.New(plain.Options(), func(o *dynamodb.Options) {
		next := o.HTTPClient
		if next == nil {
			next = http.DefaultClient
		}
		o.HTTPClient = bb.dyndb.DynamoDB(next)
	})
	bb.store = dynamo.NewJobStore(bb.db, tables)

	// The beat LISTs every namespace: an earlier run's Jobs, whose namespace is deleted at its
	// end, must be gone first. Other labelled Jobs (a shared sandbox's tests leave some) are
	// counted in, on both sides.
	if err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		n, err := inDeletedNamespaces(ctx, setup)
		if n > 0 {
			b.Logf("waiting for %d labelled Jobs of another run to be deleted with their namespace", n)
		}
		return n == 0, err
	}); err != nil {
		b.Fatalf("the cluster still holds another run's labelled Jobs: %v", err)
	}
	others, err := listAll(ctx, setup)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	plainStore := dynamo.NewJobStore(plain, tables)
	parallel(b, beatJobs, func(i int) error { return setupJob(ctx, plainStore, setup, ns, i) })
	bb.listed = beatJobs + others
	listed, err := listAll(ctx, setup)
	if err != nil || listed != bb.listed {
		b.Fatalf("setup made %d labelled Jobs (%v), want %d (%d of other tests')", listed, err, bb.listed, others)
	}
	b.Logf("setup: %d running records and Jobs in %s", beatJobs, time.Since(start).Round(time.Second))
	return bb
}

// setupJob stores job i as running and creates its Job, running: one active, ready pod.
func setupJob(ctx context.Context, store *dynamo.JobStore, kc kubernetes.Interface, ns string, i int) error {
	return setupJobIn(ctx, store, kc, ns, benchRegion, i)
}

// setupJobIn is setupJob in region. The job's id is benchID(ns, i): the beat LISTs every
// namespace, and other tests' Jobs named alike may linger in theirs.
func setupJobIn(ctx context.Context, store *dynamo.JobStore, kc kubernetes.Interface, ns, region string, i int) error {
	name := fmt.Sprintf("bench-%04d", i)
	id := benchID(ns, i)
	m := map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": name}}
	now := time.Now()
	j := jobs.New(id, "ml", ns, region, jobs.DefaultPriority, nil, []map[string]any{m}, now)
	for _, s := range []jobs.Status{jobs.StatusDispatching, jobs.StatusPending, jobs.StatusRunning} {
		j.Status = s
		j.StatusHistory = append(j.StatusHistory, jobs.Transition{Status: s, At: now.UTC()})
	}
	if _, _, err := store.Create(ctx, j, jobs.Event(outbox.JobStarted, j, "", now), nil, now); err != nil {
		return err
	}
	kj, err := kc.BatchV1().Jobs(ns).Create(ctx, runningJob(ns, name, id), metav1.CreateOptions{FieldManager: "tidegate"})
	if err != nil {
		return fmt.Errorf("creating Job %s: %w", name, err)
	}
	one := int32(1)
	started := metav1.NewTime(now)
	kj.Status = batchv1.JobStatus{Active: 1, Ready: &one, StartTime: &started}
	if _, err := kc.BatchV1().Jobs(ns).UpdateStatus(ctx, kj, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("marking Job %s running: %w", name, err)
	}
	return nil
}

// benchID is the id of the job setupJob made as number i in namespace ns.
func benchID(ns string, i int) string { return fmt.Sprintf("job-%s-bench-%04d", ns, i) }

// runningJob is the Job dispatch would make of the dispatch tests' restricted busybox manifest,
// managed by a controller that does not exist (see above).
func runningJob(ns, name, id string) *batchv1.Job {
	managedBy := "tidegate.io/bench"
	no, uid := false, int64(1000)
	stamp := map[string]string{jobs.IDKey: id}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: stamp, Annotations: stamp},
		Spec: batchv1.JobSpec{
			ManagedBy: &managedBy,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: stamp, Annotations: stamp},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: aws.Bool(true), RunAsUser: &uid,
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					Containers: []corev1.Container{{Name: "main", Image: "busybox:1.36", SecurityContext: &corev1.SecurityContext{
						AllowPrivilegeEscalation: &no, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}},
				},
			},
		},
	}
}

// beatCalls is what one beat asked of the cluster and of DynamoDB.
type beatCalls struct {
	kube, jobPages, podPages, writes int
	dynamo                           int
	dynamoOps                        map[string]int
	kubeWire, dynamoWire             time.Duration
}

// beat runs one beat and checks it was a no-op: only GETs of LIST pages, no write to the cluster
// or to a job record, no ring.
func (bb *beatBench) beat(b *testing.B, h *reconcile.Handler, id string) (time.Duration, beatCalls) {
	bb.kube.Reset()
	bb.dyndb.Reset()
	rings := bb.rings.n()
	start := time.Now()
	if err := h.HandleBeat(context.Background(), events.EventBridgeEvent{ID: id}); err != nil {
		b.Fatalf("HandleBeat(%s): %v", id, err)
	}
	took := time.Since(start)

	c := beatCalls{dynamoOps: map[string]int{}}
	var other []string
	for _, k := range bb.kube.Snapshot() {
		c.kube++
		c.kubeWire += k.Took
		switch {
		case k.Method != http.MethodGet:
			c.writes++
			other = append(other, k.Method+" "+k.Path)
		case k.Path == "/apis/batch/v1/jobs":
			c.jobPages++
		case k.Path == "/api/v1/pods":
			c.podPages++
		default:
			other = append(other, k.Method+" "+k.Path)
		}
	}
	for _, d := range bb.dyndb.Snapshot() {
		c.dynamo++
		c.dynamoWire += d.Took
		c.dynamoOps[d.Method]++
	}
	// The beat's own lease (PutItem, DeleteItem on the control table) is its only DynamoDB write.
	for _, op := range []string{"TransactWriteItems", "UpdateItem", "BatchWriteItem"} {
		c.writes += c.dynamoOps[op]
	}
	wantPages := (bb.listed + listPage - 1) / listPage
	if c.jobPages != wantPages || c.podPages != 1 || c.writes != 0 || len(other) > 0 || bb.rings.n() != rings {
		b.Fatalf("beat %s: %d Job pages (want %d), %d pod pages (want 1), %d writes, other calls %v, %d rings; want a no-op beat",
			id, c.jobPages, wantPages, c.podPages, c.writes, other, bb.rings.n()-rings)
	}
	return took, c
}

// rawList is the floor: the beat's LIST of Jobs, the same selector and pages, decoded as typed
// objects as the beat decodes them, and nothing else.
func (bb *beatBench) rawList(b *testing.B) time.Duration {
	start := time.Now()
	n, err := listAll(context.Background(), bb.kc)
	took := time.Since(start)
	if err != nil || n != bb.listed {
		b.Fatalf("raw LIST found %d Jobs (%v), want %d", n, err, bb.listed)
	}
	return took
}

// listAll LISTs every Job carrying a job id, page by page, and counts them.
func listAll(ctx context.Context, kc kubernetes.Interface) (int, error) {
	n := 0
	opts := metav1.ListOptions{LabelSelector: jobs.IDKey, Limit: listPage}
	for {
		l, err := kc.BatchV1().Jobs("").List(ctx, opts)
		if err != nil {
			return n, err
		}
		n += len(l.Items)
		if opts.Continue = l.Continue; opts.Continue == "" {
			return n, nil
		}
	}
}

// inDeletedNamespaces counts the labelled Jobs in namespaces being deleted.
func inDeletedNamespaces(ctx context.Context, kc kubernetes.Interface) (int, error) {
	nss, err := kc.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, ns := range nss.Items {
		if ns.DeletionTimestamp == nil {
			continue
		}
		l, err := kc.BatchV1().Jobs(ns.Name).List(ctx, metav1.ListOptions{LabelSelector: jobs.IDKey})
		if err != nil {
			return 0, err
		}
		n += len(l.Items)
	}
	return n, nil
}

// parallel runs f(0) … f(n-1), setupWorkers at a time, and fails b on the first error.
func parallel(b *testing.B, n int, f func(i int) error) {
	b.Helper()
	next := make(chan int)
	errs := make(chan error, setupWorkers)
	var wg sync.WaitGroup
	for range setupWorkers {
		wg.Go(func() {
			for i := range next {
				if err := f(i); err != nil {
					errs <- err
					for range next {
					}
					return
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// oneClient serves every region with one client.
type oneClient struct {
	kc kubernetes.Interface
	dc dynamic.Interface
}

func (c oneClient) Client(context.Context, string) (kubernetes.Interface, error) { return c.kc, nil }

func (c oneClient) Dynamic(context.Context, string) (dynamic.Interface, error) {
	if c.dc == nil {
		return nil, errors.New("this test reaches the cluster with a typed client only")
	}
	return c.dc, nil
}

// ringCounter counts rings; a no-op beat makes none.
type ringCounter struct {
	mu    sync.Mutex
	count int
}

func (r *ringCounter) Ring(context.Context, string) error {
	r.mu.Lock()
	r.count++
	r.mu.Unlock()
	return nil
}

func (r *ringCounter) n() int { r.mu.Lock(); defer r.mu.Unlock(); return r.count }
