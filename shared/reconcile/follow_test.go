package reconcile_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/kube"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/reconcile"
)

// TestFollowReadsOnlyWhatMoved: a beat reads the record of a listed job only when it does not
// know the job or the job's objects moved past what it knows, and still follows what no LIST
// shows (a podless job, a dead claim) and records kept under the old sort key. An instance's
// first beat reads the active records together and the rest by id. A second instance's beats,
// which leave the first's memory behind, cost a read and never a second event.
func TestFollowReadsOnlyWhatMoved(t *testing.T) {
	ctx := context.Background()
	r := newFollowRig(t)
	tables, db, ns, kc, store, id := r.tables, r.db, r.ns, r.kc, r.store, r.id
	spy := &readSpy{JobStore: store, prefix: "job-" + ns + "-"}
	rings := &ringCounter{}
	newBeat := func() *reconcile.Handler { return r.instance(spy, rings, time.Now) }
	first, second := newBeat(), newBeat()
	beat := func(h *reconcile.Handler, id string) {
		t.Helper()
		spy.reset()
		if err := h.HandleBeat(ctx, events.EventBridgeEvent{ID: id}); err != nil {
			t.Fatalf("beat %s: %v", id, err)
		}
	}

	// Four running jobs with running Jobs, one of them stored under the old sort key (its id), and
	// one whose record has already ended (cancelled, say) while its Job lingers.
	for i := range 4 {
		if err := setupJob(ctx, store, kc, ns, i); err != nil {
			t.Fatal(err)
		}
	}
	// Job 4 belongs to another region whose cluster is this one too (as in dev).
	if err := setupJobIn(ctx, store, kc, ns, "us-west-2", 4); err != nil {
		t.Fatal(err)
	}
	ended, err := store.Job(ctx, id(3))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Apply(ctx, ended, jobs.Change{From: jobs.StatusRunning, To: jobs.StatusCancelled, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	legacy := id(2)
	if _, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &tables.Jobs, Key: jobKey(legacy), UpdateExpression: aws.String("SET gsi2sk = :id"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":id": &types.AttributeValueMemberS{Value: legacy}},
	}); err != nil {
		t.Fatal(err)
	}
	// A podless job, pending: nothing of it is ever listed.
	podless := storeJob(t, store, "job-podless", func(j *jobs.Job) { j.Podless = true }, jobs.StatusDispatching, jobs.StatusPending)
	// A claim whose dispatcher died a minute ago.
	storeJob(t, store, "job-dead-claim", func(j *jobs.Job) {
		j.Claim = &jobs.Claim{Token: "gone", Until: time.Now().Add(-time.Minute).UTC()}
	}, jobs.StatusDispatching)

	beat(first, "cold")
	if got := status(t, store, podless); got != jobs.StatusSucceeded {
		t.Errorf("after the first beat the podless job is %s, want succeeded", got)
	}
	if rings.n() != 1 {
		t.Errorf("the first beat rang dispatch %d times, want once for the dead claim", rings.n())
	}
	// The active ones are read together from the index, which does not hold what judging a job
	// all or nothing needs (its ready_timeout, whether its pods were seen ready), so a new
	// instance's first beat reads its region's running ones by id once, besides the ended job and
	// the other region's; later beats remember which are settled (ready.go).
	if read := spy.ours(); !slices.Equal(read, []string{id(0), id(1), id(2), id(3), id(4)}) {
		t.Errorf("a new instance's first beat read the states of %v by id, want its region's running jobs' "+
			"once, the ended job's and the other region's", read)
	}

	beat(first, "quiet")
	if read := spy.ours(); len(read) != 0 {
		t.Errorf("a beat where nothing changed read the records of %v, want none", read)
	}

	// Job 0 completes: the next beat reads its record, and only its, and records the end.
	complete(t, kc, ns, "bench-0000")
	beat(first, "one-done")
	if read := spy.ours(); !slices.Equal(read, []string{id(0)}) {
		t.Errorf("after one Job completed the beat read %v, want only %s", read, id(0))
	}
	if got := status(t, store, id(0)); got != jobs.StatusSucceeded {
		t.Errorf("%s is %s after its Job completed, want succeeded", id(0), got)
	}

	// Another instance records job 1's end; the first, which remembers it running, then reads it
	// once, writes nothing, and forgets nothing it should keep.
	complete(t, kc, ns, "bench-0001")
	beat(second, "other-instance")
	beat(first, "behind")
	if read := spy.ours(); !slices.Equal(read, []string{id(1)}) {
		t.Errorf("an instance left behind read %v, want %s once", read, id(1))
	}
	beat(first, "caught-up")
	if read := spy.ours(); len(read) != 0 {
		t.Errorf("once caught up, a quiet beat read %v, want none", read)
	}
	if n := completedEvents(t, db, tables, id(1)); n != 1 {
		t.Errorf("%s has %d job.completed events, want 1", id(1), n)
	}

	// The other region's job is left to its own region's beat, and followed there.
	complete(t, kc, ns, "bench-0004")
	beat(first, "other-region")
	if got := status(t, store, id(4)); got != jobs.StatusRunning {
		t.Errorf("us-east-1's beat moved us-west-2's %s to %s; want it left running", id(4), got)
	}
	both := newBeat()
	both.Regions = []string{benchRegion, "us-west-2"}
	beat(both, "both-regions")
	if got := status(t, store, id(4)); got != jobs.StatusSucceeded {
		t.Errorf("%s is %s after its own region's beat, want succeeded", id(4), got)
	}
	if n := completedEvents(t, db, tables, id(4)); n != 1 {
		t.Errorf("%s has %d job.completed events, want 1", id(4), n)
	}

	// The old-key record is followed too.
	complete(t, kc, ns, "bench-0002")
	beat(first, "legacy-done")
	if got := status(t, store, legacy); got != jobs.StatusSucceeded {
		t.Errorf("%s (old sort key) is %s after its Job completed, want succeeded", legacy, got)
	}
}

// readSpy is the real job store, noting which records following reads one by one or by id.
type readSpy struct {
	*dynamo.JobStore
	prefix string // of the ids of this test's jobs
	mu     sync.Mutex
	read   []string
}

func (s *readSpy) States(ctx context.Context, ids []string) ([]jobs.Job, error) {
	s.mu.Lock()
	s.read = append(s.read, ids...)
	s.mu.Unlock()
	return s.JobStore.States(ctx, ids)
}

func (s *readSpy) reset() { s.mu.Lock(); s.read = nil; s.mu.Unlock() }

// ours is the ids read since reset that this test made, sorted: the cluster is shared with other
// tests, whose labelled Jobs a beat lists and reads too.
func (s *readSpy) ours() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, id := range s.read {
		if strings.HasPrefix(id, s.prefix) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// storeJob stores job id in benchRegion, passed through the statuses given, with no objects.
func storeJob(t *testing.T, store *dynamo.JobStore, id string, edit func(*jobs.Job), through ...jobs.Status) string {
	t.Helper()
	now := time.Now()
	m := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": id}}
	j := jobs.New(id, "ml", "team-a", benchRegion, jobs.DefaultPriority, nil, []map[string]any{m}, now)
	for _, s := range through {
		j.Status = s
		j.StatusHistory = append(j.StatusHistory, jobs.Transition{Status: s, At: now.UTC()})
	}
	edit(&j)
	if _, _, err := store.Create(context.Background(), j, jobs.Event(outbox.JobQueued, j, "", now), nil, now); err != nil {
		t.Fatal(err)
	}
	return id
}

func status(t *testing.T, store *dynamo.JobStore, id string) jobs.Status {
	t.Helper()
	j, err := store.Job(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j.Status
}

// complete marks the Job done as the job controller would: Complete, no longer active.
func complete(t *testing.T, kc kubernetes.Interface, ns, name string) {
	t.Helper()
	ctx := context.Background()
	kj, err := kc.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	kj.Status.Active, kj.Status.Ready, kj.Status.Succeeded, kj.Status.CompletionTime = 0, aws.Int32(0), 1, &now
	kj.Status.Conditions = []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
	}
	if _, err := kc.BatchV1().Jobs(ns).UpdateStatus(ctx, kj, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("marking Job %s complete: %v", name, err)
	}
}

// completedEvents counts the job.completed events of job id in the outbox.
func completedEvents(t *testing.T, db *dynamodb.Client, tables dynamo.Tables, id string) int {
	return countEvents(t, db, tables, outbox.JobCompleted, id)
}

// countEvents counts the events of type typ about job id in the outbox.
func countEvents(t *testing.T, db *dynamodb.Client, tables dynamo.Tables, typ outbox.Type, id string) int {
	t.Helper()
	evs, _, err := dynamo.NewOutboxStore(db, tables).Undelivered(context.Background(), 1000, "")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range evs {
		if ev.Type == typ && ev.Data["job_id"] == id {
			n++
		}
	}
	return n
}

func jobKey(id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "job#" + id}, "sk": &types.AttributeValueMemberS{Value: "job"},
	}
}

// followRig is a test's own tables and namespace, and what a reconcile instance over them is
// made of.
type followRig struct {
	tables dynamo.Tables
	db     *dynamodb.Client
	ns     string
	kc     kubernetes.Interface
	store  *dynamo.JobStore
}

func newFollowRig(t *testing.T) followRig {
	tables, db := testenv.Tables(t)
	ns, kc := testCluster(t)
	return followRig{tables: tables, db: db, ns: ns, kc: kc, store: dynamo.NewJobStore(db, tables)}
}

// id is the id of the rig's job setupJob makes as number i.
func (r followRig) id(i int) string { return benchID(r.ns, i) }

// instance is a reconcile process just started, following benchRegion through records.
func (r followRig) instance(records reconcile.Jobs, rings reconcile.Ringer, now func() time.Time) *reconcile.Handler {
	return &reconcile.Handler{
		Regions: []string{benchRegion}, Queues: r.store, Ringer: rings, Jobs: records,
		Clusters: oneClient{kc: r.kc}, Leases: dynamo.NewLeaseStore(r.db, r.tables.Control),
		Log: slog.New(slog.DiscardHandler), Now: now,
	}
}

// testCluster is a namespace of its own and a client made from the production rest.Config.
func testCluster(t *testing.T) (string, kubernetes.Interface) {
	t.Helper()
	ns, kst := testenv.Namespace(t)
	clusters, err := kube.New(config.Config{Regions: map[string]string{benchRegion: "sandbox"}, Kubeconfig: kst.Kubeconfig}, aws.Config{})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := clusters.Config(context.Background(), benchRegion)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return ns, kc
}

// TestGoneJobsEnd: a followed job whose objects vanish from the cluster before any beat saw it
// end is recorded failed once they have been gone for a few minutes, by the instance that saw
// them go and by one started after they went. A cancelled job and one never listed are left be.
func TestGoneJobsEnd(t *testing.T) {
	ctx := context.Background()
	r := newFollowRig(t)
	tables, db, ns, kc, store, id := r.tables, r.db, r.ns, r.kc, r.store, r.id
	var later time.Duration // how far the beats' clock is ahead of the wall's
	newBeat := func() *reconcile.Handler {
		return r.instance(store, &ringCounter{}, func() time.Time { return time.Now().Add(later) })
	}
	beat := func(h *reconcile.Handler, at time.Duration) {
		t.Helper()
		later = at
		if err := h.HandleBeat(ctx, events.EventBridgeEvent{ID: at.String()}); err != nil {
			t.Fatalf("beat at +%s: %v", at, err)
		}
	}
	for i := range 3 {
		if err := setupJob(ctx, store, kc, ns, i); err != nil {
			t.Fatal(err)
		}
	}
	deleted, cancelled, seenLate := id(0), id(1), id(2)
	// Dispatched, but nothing of it listed yet (a CronJob before its first run).
	unlisted := storeJob(t, store, "job-never-listed", func(*jobs.Job) {}, jobs.StatusDispatching, jobs.StatusPending)

	first := newBeat()
	beat(first, 0)
	removeJob(t, kc, ns, "bench-0000")
	removeJob(t, kc, ns, "bench-0001")
	j, err := store.Job(ctx, cancelled)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Apply(ctx, j, jobs.Change{From: jobs.StatusRunning, To: jobs.StatusCancelled, At: time.Now()}); err != nil {
		t.Fatal(err)
	}

	beat(first, time.Minute)
	if got := status(t, store, deleted); got != jobs.StatusRunning {
		t.Errorf("a minute after its Job went, %s is %s; want running still (a cancel may be under way)", deleted, got)
	}
	beat(first, 5*time.Minute)
	got, err := store.Job(ctx, deleted)
	if err != nil {
		t.Fatal(err)
	}
	if last := got.StatusHistory[len(got.StatusHistory)-1]; got.Status != jobs.StatusFailed || !strings.Contains(last.Reason, "deleted outside Tidegate") {
		t.Errorf("five minutes after its Job went, %s is %s (%q); want failed, saying it was deleted outside Tidegate", deleted, got.Status, last.Reason)
	}
	if n := countEvents(t, db, tables, outbox.JobFailed, deleted); n != 1 {
		t.Errorf("%s has %d job.failed events, want 1", deleted, n)
	}
	if got := status(t, store, cancelled); got != jobs.StatusCancelled {
		t.Errorf("the cancelled job is %s, want cancelled still", got)
	}
	if got := status(t, store, unlisted); got != jobs.StatusPending {
		t.Errorf("the job never listed is %s, want pending still", got)
	}

	// An instance started after a Job went: it finds the job running and unlisted.
	removeJob(t, kc, ns, "bench-0002")
	second := newBeat()
	beat(second, 6*time.Minute)
	beat(second, 10*time.Minute)
	if got := status(t, store, seenLate); got != jobs.StatusFailed {
		t.Errorf("%s, whose Job went before the instance started, is %s; want failed", seenLate, got)
	}
	if got := status(t, store, unlisted); got != jobs.StatusPending {
		t.Errorf("the job never listed is %s after a new instance's beats, want pending still", got)
	}
}

func removeJob(t *testing.T, kc kubernetes.Interface, ns, name string) {
	t.Helper()
	background := metav1.DeletePropagationBackground
	if err := kc.BatchV1().Jobs(ns).Delete(context.Background(), name, metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
		t.Fatal(err)
	}
}

// TestBarePodsAreFollowedAndJobPodsLeftToTheirJob: a job of bare pods is followed by its pods;
// the beat does not list a pod a Job made (its Job's status says what it does), so such a pod
// alone moves nothing.
func TestBarePodsAreFollowedAndJobPodsLeftToTheirJob(t *testing.T) {
	ctx := context.Background()
	r := newFollowRig(t)
	bare := storeJob(t, r.store, "job-"+r.ns+"-bare", func(*jobs.Job) {}, jobs.StatusDispatching, jobs.StatusPending)
	owned := storeJob(t, r.store, "job-"+r.ns+"-owned", func(*jobs.Job) {}, jobs.StatusDispatching, jobs.StatusPending)
	runningPod(t, r.kc, r.ns, "bare", map[string]string{jobs.IDKey: bare})
	runningPod(t, r.kc, r.ns, "owned", map[string]string{jobs.IDKey: owned, batchv1.JobNameLabel: "owned"})

	if err := r.instance(r.store, &ringCounter{}, time.Now).HandleBeat(ctx, events.EventBridgeEvent{ID: "beat"}); err != nil {
		t.Fatal(err)
	}
	if got := status(t, r.store, bare); got != jobs.StatusRunning {
		t.Errorf("a job whose bare pod runs is %s, want running", got)
	}
	if got := status(t, r.store, owned); got != jobs.StatusPending {
		t.Errorf("a job with only a Job-made pod and no Job is %s, want pending: the beat follows Jobs by their status", got)
	}
}

// runningPod creates a pod no node will take (so nothing runs it) and marks it running.
func runningPod(t *testing.T, kc kubernetes.Interface, ns, name string, labels map[string]string) {
	t.Helper()
	ctx := context.Background()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: corev1.PodSpec{
			NodeSelector:  map[string]string{"tidegate.io/no-such-node": "true"},
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "main", Image: "busybox:1.36"}},
		},
	}
	if _, err := kc.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The scheduler writes its verdict on the pod meanwhile: read it again on a conflict.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := kc.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		p.Status.Phase = corev1.PodRunning
		_, err = kc.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("marking pod %s running: %v", name, err)
	}
}
