package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/policy"
	"github.com/tidegate/tidegate/shared/tenancy"
	"github.com/tidegate/tidegate/shared/wake"
)

// TestQueueStatsReadNoQueuedJob: tenant a has 10,000 jobs queued in us-east-1, as its census
// counted them (with caps on a type b never uses). Tenant b's GET /api/v1/queue/stats shows b's own
// queued jobs, from the census, and nothing of a's; and the API reads no queued job for it: no
// DynamoDB query of a queue answers an item (each only counts one), and the calls are the same
// few whatever a queues.
func TestQueueStatsReadNoQueuedJob(t *testing.T) {
	tables, db := testenv.Tables(t)
	queueURL, q := testenv.Queue(t, "dispatch")
	ctx := context.Background()
	tenants := dynamo.NewTenantStore(db, tables.Control)
	keys := map[string]string{}
	for _, tn := range []tenancy.Tenant{{Name: "a", Namespaces: []string{"team-a"}}, {Name: "b", Namespaces: []string{"team-b"}}} {
		tn.Org, tn.Role, tn.CreatedAt = "acme", tenancy.RoleMember, time.Now()
		if err := tenants.PutTenant(ctx, tn); err != nil {
			t.Fatal(err)
		}
		keys[tn.Name], _ = tenancy.NewKey()
		if err := tenants.AddKey(ctx, tn.Name, keys[tn.Name], time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	rec := &queryRecorder{}
	metered := dynamodb.New(db.Options(), func(o *dynamodb.Options) {
		next := o.HTTPClient
		if next == nil {
			next = http.DefaultClient
		}
		rec.next, o.HTTPClient = next, rec
	})
	js := dynamo.NewJobStore(metered, tables)
	checker, err := policy.NewChecker(policy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	api := served(t, httpapi.Deps{Principals: tenants, Jobs: js, Templates: dynamo.NewTemplateStore(db, tables.Control),
		Policy: checker, Ringer: wake.New(q, queueURL), Regions: []string{"us-east-1"}, Capacity: func(string) int { return 4 }})
	st := stack{apis: [2]http.Handler{api, api}, queueURL: queueURL, sqs: q}

	// A few of a's jobs are really queued, and one of b's; the census counts a's flood.
	var real []jobs.Job
	for i, tenant := range []string{"a", "a", "a", "b"} {
		j := jobs.New("job-"+tenant+string(rune('0'+i)), tenant, "team-"+tenant, "us-east-1", 50, nil,
			[]map[string]any{{"kind": "Job", "metadata": map[string]any{"name": "n"}}}, time.Now())
		if tenant == "a" {
			j.Spot = &jobs.Spot{InstanceType: "p4d.24xlarge", MaxPrice: 31}
		}
		real = append(real, j)
	}
	if err := js.Load(ctx, real); err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC().Truncate(time.Second)
	if err := js.PutCensus(ctx, dynamo.RegionCensus{Region: "us-east-1", At: at, Queued: map[string]dynamo.Queued{
		"a": {Batch: 9_990, LongRunning: 10, Gated: 10_000, Caps: map[string][]jobs.PriceCap{"p4d.24xlarge": {{MaxPrice: 31, Jobs: 10_000}}}},
		"b": {Batch: 1},
	}}); err != nil {
		t.Fatal(err)
	}

	rec.reset()
	status, out := st.do(t, 0, "GET", "/api/v1/queue/stats", keys["b"], "", "", nil)
	regions, _ := out["regions"].([]any)
	if status != 200 || len(regions) != 1 {
		t.Fatalf("GET /api/v1/queue/stats as b = %d %v", status, out)
	}
	r := regions[0].(map[string]any)
	for field, want := range map[string]string{
		"counts": `{"queued":1}`, "gated": `0`, "spot_prices": `[]`, "counted_at": `"` + at.Format(time.RFC3339) + `"`,
		"long_running": `{"counts":{},"holds_slot":false,"per_tenant_limit":0}`,
	} {
		if got := mustJSON(r[field]); got != want {
			t.Errorf("GET /api/v1/queue/stats as b: %s = %s, want %s", field, got, want)
		}
	}
	if body := mustJSON(out); strings.Contains(body, "p4d") || strings.Contains(body, "9990") || strings.Contains(body, `"a"`) {
		t.Errorf("GET /api/v1/queue/stats as b shows a's figures: %s", body)
	}
	calls := rec.snapshot()
	for _, c := range calls {
		if c.queued && c.items > 0 {
			t.Errorf("GET /api/v1/queue/stats as b: a query of %s answered %d items; want each queue only counted", c.partition, c.items)
		}
	}
	// One BatchGetItem of the censuses and one of the regions' reach, a count of each of the
	// region's partitions of waiting jobs (dynamo.WaitingQueues) and of the roaming queue, and one
	// query of each of its four active shards, whatever a queues.
	if want := 2 + len(dynamo.WaitingQueues("us-east-1")) + 1 + 4; len(calls) != want {
		t.Errorf("GET /api/v1/queue/stats as b made %d DynamoDB calls, want %d: %+v", len(calls), want, calls)
	}
}

// queryRecorder records, of each DynamoDB call through it, its operation, the gsi2 partition a
// query names, and how many items it answered.
type queryRecorder struct {
	next  dynamodb.HTTPClient
	mu    sync.Mutex
	calls []recorded
}

type recorded struct {
	op, partition string
	queued        bool // the partition holds queued jobs: queue#REGION…, queue#* (roaming), held#, backoff#
	items         int
}

func (r *queryRecorder) Do(req *http.Request) (*http.Response, error) {
	var in struct {
		ExpressionAttributeValues map[string]struct{ S string }
	}
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		_ = json.Unmarshal(b, &in)
	}
	resp, err := r.next.Do(req)
	if err != nil {
		return resp, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	var answer struct{ Items []json.RawMessage }
	_ = json.Unmarshal(b, &answer)
	_, op, _ := strings.Cut(req.Header.Get("X-Amz-Target"), ".")
	pk := in.ExpressionAttributeValues[":pk"].S
	r.mu.Lock()
	r.calls = append(r.calls, recorded{op: op, partition: pk, queued: strings.HasPrefix(pk, "queue#") || strings.HasPrefix(pk, "held#") || strings.HasPrefix(pk, "backoff#"), items: len(answer.Items)})
	r.mu.Unlock()
	return resp, nil
}

func (r *queryRecorder) reset() { r.mu.Lock(); r.calls = nil; r.mu.Unlock() }

func (r *queryRecorder) snapshot() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.calls...)
}
