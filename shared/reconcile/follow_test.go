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

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/kube"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/reconcile"
	"github.com/tidegate/tidegate/shared/testenv"
)

// TestFollowReadsOnlyWhatMoved: a beat reads the record of a listed job only when it does not
// know the job or the job's objects moved past what it knows, and still follows what no LIST
// shows (a podless job, a dead claim) and records kept under the old sort key. An instance's
// first beat reads the active records together and the rest by id. A second instance's beats,
// which leave the first's memory behind, cost a read and never a second event.
func TestFollowReadsOnlyWhatMoved(t *testing.T) {
	ctx := context.Background()
	tables, db := testenv.Tables(t)
	ns, kc := testCluster(t)
	store := dynamo.NewJobStore(db, tables)
	spy := &readSpy{JobStore: store}
	rings := &ringCounter{}
	newBeat := func() *reconcile.Handler {
		return &reconcile.Handler{
			Regions: []string{benchRegion}, Queues: store, Ringer: rings, Jobs: spy,
			Clusters: oneClient{kc}, Leases: dynamo.NewLeaseStore(db, tables.Control),
			Log: slog.New(slog.DiscardHandler), Now: time.Now,
		}
	}
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
	ended, err := store.Job(ctx, "job-bench-0003")
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Apply(ctx, ended, dynamo.Change{From: jobs.StatusRunning, To: jobs.StatusCancelled, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	legacy := "job-bench-0002"
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
	if read := spy.ours(); !slices.Equal(read, []string{"job-bench-0003", "job-bench-0004"}) {
		t.Errorf("a new instance's first beat read the states of %v by id, want only the ended job's and "+
			"the other region's (it reads its region's active ones together)", read)
	}

	beat(first, "quiet")
	if read := spy.ours(); len(read) != 0 {
		t.Errorf("a beat where nothing changed read the records of %v, want none", read)
	}

	// Job 0 completes: the next beat reads its record, and only its, and records the end.
	complete(t, kc, ns, "bench-0000")
	beat(first, "one-done")
	if read := spy.ours(); !slices.Equal(read, []string{"job-bench-0000"}) {
		t.Errorf("after one Job completed the beat read %v, want only job-bench-0000", read)
	}
	if got := status(t, store, "job-bench-0000"); got != jobs.StatusSucceeded {
		t.Errorf("job-bench-0000 is %s after its Job completed, want succeeded", got)
	}

	// Another instance records job 1's end; the first, which remembers it running, then reads it
	// once, writes nothing, and forgets nothing it should keep.
	complete(t, kc, ns, "bench-0001")
	beat(second, "other-instance")
	beat(first, "behind")
	if read := spy.ours(); !slices.Equal(read, []string{"job-bench-0001"}) {
		t.Errorf("an instance left behind read %v, want job-bench-0001 once", read)
	}
	beat(first, "caught-up")
	if read := spy.ours(); len(read) != 0 {
		t.Errorf("once caught up, a quiet beat read %v, want none", read)
	}
	if n := completedEvents(t, db, tables, "job-bench-0001"); n != 1 {
		t.Errorf("job-bench-0001 has %d job.completed events, want 1", n)
	}

	// The other region's job is left to its own region's beat, and followed there.
	complete(t, kc, ns, "bench-0004")
	beat(first, "other-region")
	if got := status(t, store, "job-bench-0004"); got != jobs.StatusRunning {
		t.Errorf("us-east-1's beat moved us-west-2's job-bench-0004 to %s; want it left running", got)
	}
	both := newBeat()
	both.Regions = []string{benchRegion, "us-west-2"}
	beat(both, "both-regions")
	if got := status(t, store, "job-bench-0004"); got != jobs.StatusSucceeded {
		t.Errorf("job-bench-0004 is %s after its own region's beat, want succeeded", got)
	}
	if n := completedEvents(t, db, tables, "job-bench-0004"); n != 1 {
		t.Errorf("job-bench-0004 has %d job.completed events, want 1", n)
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
	mu   sync.Mutex
	read []string
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
		if strings.HasPrefix(id, "job-bench-") {
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
	if _, _, err := store.Create(context.Background(), j, outbox.ForJob(outbox.JobQueued, j, "", now), nil, now); err != nil {
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
	t.Helper()
	evs, _, err := dynamo.NewOutboxStore(db, tables).Undelivered(context.Background(), 1000, "")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range evs {
		if ev.Type == outbox.JobCompleted && ev.Data["job_id"] == id {
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
