package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/policy"
	"github.com/tidegate/tidegate/shared/tenancy"
	"github.com/tidegate/tidegate/shared/wake"
)

// BenchmarkSubmitVsRaw times POST /api/v1/jobs end to end over loopback HTTP against the floor of
// what it must do anyway: one TransactWriteItems of the job item and the event item it stored, and
// one SQS SendMessage of its ring. The two alternate, so load on the machine hits both alike; the
// reported ratio is submit/raw (goal ≤ 1.3). The API is wired as shared/handlers wires it, the
// tenant store behind a PrincipalCache, so the key is read by the first request only.
func BenchmarkSubmitVsRaw(b *testing.B) {
	tables, db := testenv.Tables(b)
	queueURL, q := testenv.Queue(b, "dispatch")
	ctx := context.Background()
	store := dynamo.NewTenantStore(db, tables.Control)
	if err := store.PutTenant(ctx, tenancy.Tenant{Name: "ml", Org: "acme", Namespaces: []string{"team-a"}, Role: tenancy.RoleMember}); err != nil {
		b.Fatal(err)
	}
	key, _ := tenancy.NewKey()
	if err := store.AddKey(ctx, "ml", key, time.Now()); err != nil {
		b.Fatal(err)
	}
	checker, err := policy.NewChecker(policy.Config{})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(httpapi.Deps{
		Principals: httpapi.NewPrincipalCache(store, nil), Jobs: dynamo.NewJobStore(db, tables), Templates: dynamo.NewTemplateStore(db, tables.Control),
		Policy: checker, Ringer: wake.New(q, queueURL), Regions: []string{"us-east-1"},
	}))
	defer srv.Close()
	body := mustJSON(map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": "team-a"})
	submit := func() string {
		req, _ := http.NewRequest("POST", srv.URL+"/api/v1/jobs", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatalf("POST /api/v1/jobs: %v", err)
		}
		defer resp.Body.Close()
		var out struct {
			Job struct {
				ID string `json:"id"`
			} `json:"job"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 202 {
			b.Fatalf("POST /api/v1/jobs = %d (%v)", resp.StatusCode, err)
		}
		return out.Job.ID
	}
	raw := newRawSubmit(b, db, q, tables, queueURL, submit())

	var submitTook, rawTook time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		raw.do(b, i)
		rawTook += time.Since(start)

		start = time.Now()
		submit()
		submitTook += time.Since(start)
	}
	b.ReportMetric(float64(submitTook.Microseconds())/float64(b.N), "µs/submit")
	b.ReportMetric(float64(rawTook.Microseconds())/float64(b.N), "µs/raw")
	b.ReportMetric(float64(submitTook)/float64(rawTook), "submit/raw")
}

// rawSubmit is the floor: the items one submission stored, written again under new keys in one
// transaction with the same conditions, and the same ring, straight through the SDK.
type rawSubmit struct {
	db              *dynamodb.Client
	q               *sqs.Client
	tables          dynamo.Tables
	queueURL, ring  string
	jobItem, evItem map[string]types.AttributeValue
}

// newRawSubmit reads back the job item of job id and its one event, as stored.
func newRawSubmit(b *testing.B, db *dynamodb.Client, q *sqs.Client, t dynamo.Tables, queueURL, id string) *rawSubmit {
	ctx := context.Background()
	got, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &t.Jobs, Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "job#" + id}, "sk": &types.AttributeValueMemberS{Value: "job"},
	}})
	if err != nil || got.Item == nil {
		b.Fatalf("reading back job %s: %v", id, err)
	}
	events, err := db.Scan(ctx, &dynamodb.ScanInput{TableName: &t.Events})
	if err != nil || len(events.Items) != 1 {
		b.Fatalf("reading back job %s's event: %d items, %v", id, len(events.Items), err)
	}
	ring, err := json.Marshal(wake.Message{Region: "us-east-1"})
	if err != nil {
		b.Fatal(err)
	}
	return &rawSubmit{db: db, q: q, tables: t, queueURL: queueURL, ring: string(ring), jobItem: got.Item, evItem: events.Items[0]}
}

func (r *rawSubmit) do(b *testing.B, i int) {
	job, ev := maps.Clone(r.jobItem), maps.Clone(r.evItem)
	job["pk"] = &types.AttributeValueMemberS{Value: fmt.Sprintf("job#raw-%d", i)}
	ev["pk"] = &types.AttributeValueMemberS{Value: fmt.Sprintf("event#raw-%d", i)}
	_, err := r.db.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &r.tables.Jobs, Item: job, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		{Put: &types.Put{TableName: &r.tables.Events, Item: ev, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
	}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := r.q.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: &r.queueURL, MessageBody: &r.ring}); err != nil {
		b.Fatal(err)
	}
}
