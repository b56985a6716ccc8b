package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/jobobjects"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/kube/typed"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/policy"
	"github.com/tidegate/tidegate/shared/records"
)

// cleanupEnv is an API on the stand-ins with two tenants, ml (namespace ns) and other, and the
// sandbox cluster.
type cleanupEnv struct {
	t                 *testing.T
	api               http.Handler
	store             *dynamo.JobStore
	dc                dynamic.Interface
	ns, key, otherKey string
}

func newCleanupEnv(t *testing.T) *cleanupEnv {
	ctx := context.Background()
	tables, db := testenv.Tables(t)
	ns, kst := testenv.Namespace(t)
	tenants := dynamo.NewTenantStore(db, tables.Control)
	e := &cleanupEnv{t: t, store: dynamo.NewJobStore(db, tables), ns: ns}
	e.key = memberKey(t, tenants, "ml", "ml", ns)
	e.otherKey = memberKey(t, tenants, "other", "other", "elsewhere")
	kc := regionCluster(t, kst.Kubeconfig)
	var err error
	if e.dc, err = kc.Dynamic(ctx, "us-east-1"); err != nil {
		t.Fatal(err)
	}
	checker, err := policy.NewChecker(policy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	e.api = served(t, httpapi.Deps{Principals: tenants, Jobs: e.store, Policy: checker, Clusters: typed.New(kc), Regions: []string{"us-east-1"}})
	return e
}

// job makes job name, created at created, its ConfigMap applied to the cluster, and moves it
// through to each status of path in turn.
func (e *cleanupEnv) job(name string, created time.Time, path ...jobs.Status) jobs.Job {
	e.t.Helper()
	ctx := context.Background()
	j := jobs.New("job-"+name, "ml", e.ns, "us-east-1", 50, nil, []map[string]any{
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}},
	}, created)
	if _, _, err := e.store.Create(ctx, j, jobs.Event(outbox.JobQueued, j, "", created), nil, created); err != nil {
		e.t.Fatal(err)
	}
	j, err := e.store.Claim(ctx, j.ID, "us-east-1", "drainer", time.Now(), time.Now().Add(time.Minute))
	if err != nil {
		e.t.Fatal(err)
	}
	if err := jobobjects.Apply(ctx, e.dc, j, "", func(context.Context, string) (bool, error) { return false, nil }); err != nil {
		e.t.Fatal(err)
	}
	for _, to := range path {
		moved, c, err := jobs.Move(j, to, "test", time.Now())
		if err != nil {
			e.t.Fatal(err)
		}
		if err := e.store.Apply(ctx, j, c); err != nil {
			e.t.Fatal(err)
		}
		j = moved
	}
	return j
}

// hasObject reports whether job name's ConfigMap is still in the cluster and not being deleted
// (a foreground delete leaves it, marked, until the garbage collector has removed what it owns).
func (e *cleanupEnv) hasObject(name string) bool {
	e.t.Helper()
	obj, err := e.dc.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(e.ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return obj.GetDeletionTimestamp() == nil
}

// hasRecord reports whether job id's record is still stored.
func (e *cleanupEnv) hasRecord(id string) bool {
	e.t.Helper()
	_, err := e.store.Job(context.Background(), id)
	if errors.Is(err, records.ErrNotFound) {
		return false
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return true
}

func (e *cleanupEnv) do(key, method, path string, body any) (int, map[string]any) {
	e.t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req := httptest.NewRequest(method, path, rd)
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	e.api.ServeHTTP(rec, req)
	var out map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	return rec.Code, out
}

// TestDeleteFinishedJob: DELETE on a finished job removes what is left of its objects and keeps
// its record; with ?purge=true the record goes too. Another tenant cannot do either.
func TestDeleteFinishedJob(t *testing.T) {
	e := newCleanupEnv(t)
	done := e.job("done", time.Now(), jobs.StatusPending, jobs.StatusRunning, jobs.StatusSucceeded)
	if !e.hasObject("done") {
		t.Fatal("the finished job's ConfigMap is not in the cluster to begin with")
	}
	if code, _ := e.do(e.otherKey, "DELETE", "/api/v1/jobs/"+done.ID+"?purge=true", nil); code != http.StatusNotFound {
		t.Errorf("another tenant's DELETE ?purge=true = %d, want 404", code)
	}
	if !e.hasObject("done") || !e.hasRecord(done.ID) {
		t.Fatal("another tenant's DELETE removed the job's object or record")
	}
	if code, out := e.do(e.key, "DELETE", "/api/v1/jobs/"+done.ID+"?purge=maybe", nil); code != http.StatusBadRequest || !strings.Contains(mustJSON(out), `"purge"`) {
		t.Errorf("DELETE ?purge=maybe = %d %v, want 400 naming purge", code, out)
	}
	code, out := e.do(e.key, "DELETE", "/api/v1/jobs/"+done.ID, nil)
	if job, _ := out["job"].(map[string]any); code != http.StatusOK || job["status"] != "succeeded" {
		t.Errorf("DELETE of a succeeded job = %d %v, want 200 and the job, still succeeded", code, out)
	}
	if e.hasObject("done") {
		t.Error("DELETE of a succeeded job left its ConfigMap")
	}
	if !e.hasRecord(done.ID) {
		t.Error("DELETE without purge deleted the record")
	}
	if code, _ := e.do(e.key, "DELETE", "/api/v1/jobs/"+done.ID+"?purge=true", nil); code != http.StatusNoContent {
		t.Errorf("DELETE ?purge=true = %d, want 204", code)
	}
	if e.hasRecord(done.ID) {
		t.Error("DELETE ?purge=true left the record")
	}
	if code, _ := e.do(e.key, "GET", "/api/v1/jobs/"+done.ID, nil); code != http.StatusNotFound {
		t.Errorf("GET of a purged job = %d, want 404", code)
	}

	// A running job with purge: cancelled, its objects deleted, then its record.
	running := e.job("running", time.Now(), jobs.StatusPending, jobs.StatusRunning)
	if code, _ := e.do(e.key, "DELETE", "/api/v1/jobs/"+running.ID+"?purge=true", nil); code != http.StatusNoContent {
		t.Errorf("DELETE ?purge=true of a running job = %d, want 204", code)
	}
	if e.hasObject("running") || e.hasRecord(running.ID) {
		t.Error("DELETE ?purge=true of a running job left its object or record")
	}
}

// TestBulkDeleteFinished is the seed's clean-up request: succeeded (as "completed") jobs older than
// seven days, looked at with a dry run first, then deleted with their records.
func TestBulkDeleteFinished(t *testing.T) {
	e := newCleanupEnv(t)
	old := time.Now().Add(-10 * 24 * time.Hour)
	var oldDone []jobs.Job
	for _, name := range []string{"old-a", "old-b", "old-c"} {
		oldDone = append(oldDone, e.job(name, old, jobs.StatusPending, jobs.StatusSucceeded))
	}
	recent := e.job("recent", time.Now(), jobs.StatusPending, jobs.StatusSucceeded)
	oldFailed := e.job("old-failed", old, jobs.StatusPending, jobs.StatusFailed)
	oldRunning := e.job("old-running", old, jobs.StatusPending, jobs.StatusRunning)
	req := map[string]any{"namespace": e.ns, "status": "completed", "older_than_days": 7, "dry_run": true}

	// Another tenant may not name ml's namespace, and without one matches none of ml's jobs.
	if code, _ := e.do(e.otherKey, "POST", "/api/v1/jobs/bulk-delete", req); code != http.StatusForbidden {
		t.Errorf("another tenant's bulk delete in ml's namespace = %d, want 403", code)
	}
	if code, out := e.do(e.otherKey, "POST", "/api/v1/jobs/bulk-delete", map[string]any{"status": "completed", "purge": true}); code != http.StatusOK || out["matched"] != 0.0 {
		t.Errorf("another tenant's bulk delete = %d %v, want 200 and nothing matched", code, out)
	}

	code, out := e.do(e.key, "POST", "/api/v1/jobs/bulk-delete", req)
	if code != http.StatusOK || out["matched"] != 3.0 || out["deleted"] != 0.0 || out["more"] != false {
		t.Fatalf("dry run = %d %v, want 3 matched, 0 deleted, no more", code, out)
	}
	for _, j := range oldDone {
		if !e.hasObject(j.ID[len("job-"):]) {
			t.Errorf("the dry run deleted job %s's object", j.ID)
		}
	}

	req["dry_run"], req["purge"] = false, true
	code, out = e.do(e.key, "POST", "/api/v1/jobs/bulk-delete", req)
	if code != http.StatusOK || out["matched"] != 3.0 || out["deleted"] != 3.0 || out["failed"] != nil {
		t.Fatalf("bulk delete = %d %v, want 3 matched and deleted", code, out)
	}
	for _, j := range oldDone {
		if e.hasRecord(j.ID) || e.hasObject(j.ID[len("job-"):]) {
			t.Errorf("bulk delete with purge left job %s's record or object", j.ID)
		}
	}
	for _, j := range []jobs.Job{recent, oldFailed, oldRunning} {
		if !e.hasRecord(j.ID) || !e.hasObject(j.ID[len("job-"):]) {
			t.Errorf("bulk delete of old succeeded jobs touched job %s (%s)", j.ID, j.Status)
		}
	}

	// Without a status only unfinished jobs match, as before: the old running one is cancelled.
	code, out = e.do(e.key, "POST", "/api/v1/jobs/bulk-delete", map[string]any{"older_than_days": 7})
	if code != http.StatusOK || out["matched"] != 1.0 || out["deleted"] != 1.0 {
		t.Errorf("bulk delete without a status = %d %v, want the one old unfinished job", code, out)
	}
	if j, _ := e.store.Job(context.Background(), oldRunning.ID); j.Status != jobs.StatusCancelled || e.hasObject("old-running") {
		t.Errorf("the old running job is %s, object kept %v; want cancelled and its object gone", j.Status, e.hasObject("old-running"))
	}
	if code, out := e.do(e.key, "POST", "/api/v1/jobs/bulk-delete", map[string]any{"status": "done"}); code != http.StatusBadRequest {
		t.Errorf("bulk delete with status done = %d %v, want 400", code, out)
	}
}
