package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/policy"
	"github.com/tidegate/tidegate/shared/tenancy"
	"github.com/tidegate/tidegate/shared/testenv"
	"github.com/tidegate/tidegate/shared/wake"
)

// BenchmarkSubmitVsRaw times POST /api/v1/jobs end to end over loopback HTTP against the floor of
// what it must do anyway: one TransactWriteItems of a job item and an event item of the same size,
// and one SQS SendMessage. The two alternate, so load on the machine hits both alike; the
// reported ratio is submit/raw (goal ≤ 1.3).
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
		Principals: store, Jobs: dynamo.NewJobStore(db, tables), Templates: dynamo.NewTemplateStore(db, tables.Control),
		Policy: checker, Ringer: wake.New(q, queueURL), Regions: []string{"us-east-1"},
	}))
	defer srv.Close()
	body := mustJSON(map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": "team-a"})

	var submit, raw time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		rawSubmit(b, db, q, tables, queueURL, i, len(body))
		raw += time.Since(start)

		start = time.Now()
		req, _ := http.NewRequest("POST", srv.URL+"/api/v1/jobs", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 202 {
			b.Fatalf("POST /api/v1/jobs = %v, %v", resp, err)
		}
		resp.Body.Close()
		submit += time.Since(start)
	}
	b.ReportMetric(float64(submit.Microseconds())/float64(b.N), "µs/submit")
	b.ReportMetric(float64(raw.Microseconds())/float64(b.N), "µs/raw")
	b.ReportMetric(float64(submit)/float64(raw), "submit/raw")
}

// rawSubmit is the floor: the same two items and the same ring, straight through the SDK.
func rawSubmit(b *testing.B, db *dynamodb.Client, q *sqs.Client, t dynamo.Tables, queueURL string, i, size int) {
	id := fmt.Sprintf("raw-%d", i)
	job, _ := attributevalue.MarshalMap(map[string]any{
		"pk": "job#" + id, "sk": "job", "gsi1pk": "ns#raw", "gsi1sk": id, "gsi3pk": "ns#raw", "gsi3sk": id,
		"gsi2pk": "queue#us-east-1", "gsi2sk": id, "status": "queued", "manifests_gz": make([]byte, size/3),
	})
	ev, _ := attributevalue.MarshalMap(map[string]any{"pk": "event#" + id, "sk": "event", "gsi1pk": "undelivered", "gsi1sk": id, "type": "job.queued"})
	_, err := db.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &t.Jobs, Item: job, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		{Put: &types.Put{TableName: &t.Events, Item: ev, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
	}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := q.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: &queueURL, MessageBody: aws.String(`{"region":"us-east-1"}`)}); err != nil {
		b.Fatal(err)
	}
}
