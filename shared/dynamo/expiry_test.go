package dynamo_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tidegate/tidegate/shared/deliveryplan"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/records"
)

// DynamoDB Local never deletes an item past its TTL attribute, and DynamoDB takes up to days to;
// reads must treat such an item as gone. A retention of seconds shows it on the stand-in.
func TestReadsLeaveOutRecordsPastTheirRetention(t *testing.T) {
	tables, db := testenv.Tables(t)
	const retention = 2 * time.Second
	s := dynamo.NewJobStore(db, tables).Retain(retention)
	ctx := context.Background()
	js := createJobs(t, s, 3) // namespaces a, b, c
	// Job 0 ends now and expires with the retention; job 1 (namespace b) stays queued; job 2 ends
	// under a store keeping records for good.
	end := time.Now()
	move(t, s, js[0], end, jobs.StatusCancelled)
	move(t, dynamo.NewJobStore(db, tables), js[2], end, jobs.StatusCancelled)
	all := jobs.Filter{Namespaces: []string{"a", "b", "c"}}

	if _, err := s.Job(ctx, js[0].ID); err != nil {
		t.Fatalf("Job(%s) within its retention: %v", js[0].ID, err)
	}
	if got := listAll(t, s, all); len(got) != 3 {
		t.Fatalf("List within the retention = %v, want all three jobs", got)
	}

	time.Sleep(time.Until(time.Unix(expiresAt(t, db, tables, js[0].ID), 0).Add(100 * time.Millisecond)))
	if _, err := s.Job(ctx, js[0].ID); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("Job(%s) past its expires_at = %v, want ErrNotFound", js[0].ID, err)
	}
	for _, f := range []jobs.Filter{all, {Namespaces: all.Namespaces, Ascending: true}, {Namespaces: all.Namespaces, ByPriority: true},
		{Namespaces: []string{"a"}, Status: jobs.StatusCancelled}} {
		if got := listAll(t, s, f); slices.Contains(got, js[0].ID) {
			t.Errorf("List(%+v) past job %s's expires_at = %v, want it left out", f, js[0].ID, got)
		}
	}
	if got := listAll(t, s, all); !slices.Equal(got, []string{js[2].ID, js[1].ID}) {
		t.Errorf("List past the retention = %v, want the unfinished job and the one kept for good, %s and %s", got, js[2].ID, js[1].ID)
	}
	if _, err := s.Job(ctx, js[2].ID); err != nil {
		t.Errorf("Job(%s), finished with no retention: %v", js[2].ID, err)
	}
	// The item itself is still stored: DynamoDB's TTL, not the store, deletes it.
	if expiresAt(t, db, tables, js[0].ID) == 0 {
		t.Errorf("job %s's item lost its expires_at", js[0].ID)
	}
}

// expire sets the item pk/sk's TTL attribute to a moment past, as if its retention had run out.
func expire(t *testing.T, db *dynamodb.Client, table, pk, sk string) {
	t.Helper()
	_, err := db.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName: &table,
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk},
		},
		UpdateExpression:          aws.String("SET expires_at = :past"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":past": &types.AttributeValueMemberN{Value: strconv.FormatInt(time.Now().Add(-time.Second).Unix(), 10)}},
		ConditionExpression:       aws.String("attribute_exists(pk)"),
	})
	if err != nil {
		t.Fatalf("expiring %s/%s: %v", pk, sk, err)
	}
}

// Events and the delivery log have their own retention; past it they are gone to reads too,
// and a page the filter empties does not end the listing early.
func TestEventsAndDeliveriesPastTheirRetention(t *testing.T) {
	tables, db := testenv.Tables(t)
	jobStore := dynamo.NewJobStore(db, tables)
	o := dynamo.NewOutboxStore(db, tables)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	var evs []outbox.Event
	for i, id := range []string{"job-0", "job-1", "job-2", "job-3"} {
		j := jobs.New(id, "ml", "team-a", "us-east-1", 50, nil, nil, now.Add(time.Duration(i)*time.Second))
		ev := jobs.Event(outbox.JobQueued, j, "", j.CreatedAt)
		if _, _, err := jobStore.Create(ctx, j, ev, nil, j.CreatedAt); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	// The two oldest are past their retention: a first page of two reads only them.
	expire(t, db, tables.Events, "event#"+evs[0].ID, "event")
	expire(t, db, tables.Events, "event#"+evs[1].ID, "event")
	var got []string
	cursor := ""
	for range 5 {
		page, next, err := o.Undelivered(ctx, 2, cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range page {
			got = append(got, ev.ID)
		}
		if cursor = next; cursor == "" {
			break
		}
	}
	if want := []string{evs[2].ID, evs[3].ID}; !slices.Equal(got, want) {
		t.Errorf("Undelivered in pages of 2 = %v, want the events within their retention, %v", got, want)
	}
	if has, err := o.HasUndelivered(ctx); err != nil || !has {
		t.Errorf("HasUndelivered with the oldest expired = %v, %v; want true", has, err)
	}

	s := dynamo.NewWebhookStore(db, tables, nil)
	w := newHook(t, "wh_a", "ml", now)
	var ds []deliveryplan.Delivery
	for _, ev := range evs[:3] {
		d := deliveryplan.NewDelivery(w, ev, []byte(`{}`), now)
		if _, err := s.CreateDelivery(ctx, d); err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	// Newest first, the newest two are past their retention.
	ids := []string{ds[0].ID, ds[1].ID, ds[2].ID}
	slices.Sort(ids)
	expire(t, db, tables.Events, "hook#wh_a", "msg#"+ids[2])
	expire(t, db, tables.Events, "hook#wh_a", "msg#"+ids[1])
	page, next, err := s.Deliveries(ctx, "wh_a", 1, "")
	if err != nil || len(page) != 1 || page[0].ID != ids[0] || next != "" {
		t.Errorf("Deliveries(limit 1) = %v, next %q, %v; want %s alone, the others past their retention", page, next, err, ids[0])
	}
	if _, err := s.Delivery(ctx, "wh_a", ids[2]); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("Delivery(%s) past its retention = %v, want ErrNotFound", ids[2], err)
	}
	if _, err := s.Delivery(ctx, "wh_a", ids[0]); err != nil {
		t.Errorf("Delivery(%s) within its retention: %v", ids[0], err)
	}
}
