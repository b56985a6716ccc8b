package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/kube/typed"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/policy"
	"github.com/tidegate/tidegate/shared/records"
)

// TestCancelWhileDispatching: a job being dispatched can be cancelled. A claim no dispatcher
// holds (parked after a failed apply, or run out) is taken over at once, and no drain applies the
// job after; a held one is waited for, and the job cancelled as the dispatcher left it; one held
// past the wait answers 409, never longer than that.
func TestCancelWhileDispatching(t *testing.T) {
	ctx := context.Background()
	tables, db := testenv.Tables(t)
	ns, kst := testenv.Namespace(t)
	tenants := dynamo.NewTenantStore(db, tables.Control)
	store := dynamo.NewJobStore(db, tables)
	key := memberKey(t, tenants, "ml", "acme", ns)
	kc := regionCluster(t, kst.Kubeconfig)
	checker, err := policy.NewChecker(policy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	api := served(t, httpapi.Deps{Principals: tenants, Jobs: store, Policy: checker, Clusters: typed.New(kc), Regions: []string{"us-east-1"}})
	otherKey := memberKey(t, tenants, "other", "rival", "elsewhere")
	cancelAs := func(key, id string) (int, jobs.Job) {
		req := httptest.NewRequest("DELETE", "/api/v1/jobs/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		var out struct {
			Job jobs.Job `json:"job"`
		}
		_ = json.NewDecoder(rec.Body).Decode(&out)
		return rec.Code, out.Job
	}
	cancel := func(id string) (int, jobs.Job) { return cancelAs(key, id) }
	claimed := func(name string, until time.Time) jobs.Job {
		t.Helper()
		j := jobs.New("job-"+name, "ml", ns, "us-east-1", 50, nil, []map[string]any{
			{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}},
		}, time.Now())
		if _, _, err := store.Create(ctx, j, jobs.Event(outbox.JobQueued, j, "", j.CreatedAt), nil, j.CreatedAt); err != nil {
			t.Fatal(err)
		}
		j, err := store.Claim(ctx, j.ID, "us-east-1", "drainer-"+name, time.Now(), until)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	isCancelled := func(what string, code int, j jobs.Job) {
		t.Helper()
		last := j.StatusHistory[len(j.StatusHistory)-1]
		if code != http.StatusOK || j.Status != jobs.StatusCancelled || !strings.HasPrefix(last.Reason, "cancelled by") {
			t.Errorf("DELETE of a %s job = %d, %s (%v), want 200 and cancelled", what, code, j.Status, j.StatusHistory)
		}
	}

	// Parked after a failed apply: taken over, and no drain takes it up again.
	parked := claimed("parked", time.Now().Add(2*time.Minute))
	_, c, err := jobs.Park(parked, "the server is busy", time.Now().Add(time.Minute), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Apply(ctx, parked, c); err != nil {
		t.Fatal(err)
	}
	// Another tenant can neither cancel it nor take its claim over.
	if code, _ := cancelAs(otherKey, parked.ID); code != http.StatusNotFound {
		t.Errorf("another tenant's DELETE of the parked job = %d, want 404", code)
	}
	if j, _ := store.Job(ctx, parked.ID); j.Status != jobs.StatusDispatching || j.Claim == nil || j.Claim.Token != "drainer-parked" || !j.Claim.Parked {
		t.Errorf("after another tenant's DELETE the parked job is %s with claim %+v, want its own claim, parked", j.Status, j.Claim)
	}
	code, got := cancel(parked.ID)
	isCancelled("parked", code, got)
	if _, err := store.Claim(ctx, parked.ID, "us-east-1", "later", time.Now().Add(2*time.Minute), time.Now().Add(4*time.Minute)); !errors.Is(err, records.ErrStale) {
		t.Errorf("a drain's claim of the cancelled job = %v, want ErrStale", err)
	}

	// A claim that ran out: its drainer died.
	dead := claimed("dead", time.Now().Add(-time.Second))
	code, got = cancel(dead.ID)
	isCancelled("dead claim's", code, got)

	// A held claim whose drainer finishes a second later: cancelled from where it left the job.
	live := claimed("live", time.Now().Add(2*time.Minute))
	go func() {
		time.Sleep(time.Second)
		_, c, err := jobs.Move(live, jobs.StatusPending, "", time.Now())
		if err == nil {
			c.Claim = live.Claim.Token
			err = store.Apply(ctx, live, c)
		}
		if err != nil {
			t.Errorf("the drainer's record: %v", err)
		}
	}()
	start := time.Now()
	code, got = cancel(live.ID)
	isCancelled("dispatching, then pending,", code, got)
	if waited := time.Since(start); waited < time.Second {
		t.Errorf("cancel answered after %s, before the drainer let go", waited)
	}
	if h := got.StatusHistory; len(h) < 2 || h[len(h)-2].Status != jobs.StatusPending {
		t.Errorf("history = %v, want pending just before cancelled", h)
	}

	// A claim held throughout: 409 after the wait, the job left to its drainer.
	stuck := claimed("stuck", time.Now().Add(2*time.Minute))
	start = time.Now()
	if code, _ := cancel(stuck.ID); code != http.StatusConflict {
		t.Errorf("DELETE of a job held by a live drainer = %d, want 409", code)
	}
	if waited := time.Since(start); waited > 15*time.Second {
		t.Errorf("cancel took %s to answer, want about 10 s at most", waited)
	}
	if j, _ := store.Job(ctx, stuck.ID); j.Status != jobs.StatusDispatching || j.Claim.Token != "drainer-stuck" {
		t.Errorf("the held job after a refused cancel = %s, claim %+v; want its drainer's still", j.Status, j.Claim)
	}
}
