package dynamo_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/records"
)

// expiresAt reads job id's TTL attribute straight from the table: 0 when it has none. DynamoDB
// Local never deletes on TTL, so the attribute is what can be checked.
func expiresAt(t *testing.T, db *dynamodb.Client, tables dynamo.Tables, id string) int64 {
	t.Helper()
	out, err := db.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: &tables.Jobs, ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "job#" + id}, "sk": &types.AttributeValueMemberS{Value: "job"}},
	})
	if err != nil {
		t.Fatalf("reading job %s: %v", id, err)
	}
	n, ok := out.Item["expires_at"].(*types.AttributeValueMemberN)
	if !ok {
		return 0
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		t.Fatalf("job %s's expires_at %q: %v", id, n.Value, err)
	}
	return v
}

// move makes the moves of job j through s, one after another, at the given times.
func move(t *testing.T, s *dynamo.JobStore, j jobs.Job, at time.Time, to ...jobs.Status) jobs.Job {
	t.Helper()
	for _, st := range to {
		moved, c, err := jobs.Move(j, st, "test", at)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Apply(context.Background(), j, c); err != nil {
			t.Fatalf("moving job %s %s → %s: %v", j.ID, j.Status, st, err)
		}
		j = moved
	}
	return j
}

func TestFinishedRecordsExpireAfterTheRetention(t *testing.T) {
	tables, db := testenv.Tables(t)
	s := dynamo.NewJobStore(db, tables).Retain(48 * time.Hour)
	js := createJobs(t, s, 3)
	end := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

	running := move(t, s, js[0], end, jobs.StatusDispatching, jobs.StatusPending, jobs.StatusRunning)
	if got := expiresAt(t, db, tables, running.ID); got != 0 {
		t.Errorf("running job's expires_at = %d, want none: an unfinished job never expires", got)
	}
	move(t, s, running, end, jobs.StatusSucceeded)
	if got, want := expiresAt(t, db, tables, running.ID), end.Add(48*time.Hour).Unix(); got != want {
		t.Errorf("succeeded job's expires_at = %d, want the end plus 48 h, %d", got, want)
	}
	move(t, s, js[1], end, jobs.StatusCancelled)
	if got, want := expiresAt(t, db, tables, js[1].ID), end.Add(48*time.Hour).Unix(); got != want {
		t.Errorf("cancelled job's expires_at = %d, want %d", got, want)
	}

	forever := dynamo.NewJobStore(db, tables)
	move(t, forever, js[2], end, jobs.StatusCancelled)
	if got := expiresAt(t, db, tables, js[2].ID); got != 0 {
		t.Errorf("with no retention, a cancelled job's expires_at = %d, want none", got)
	}
}

// TestArrayCountExpiresWithItsParent: an array parent's end gives its count of children's ends
// the parent's own retention, in the same write, so DynamoDB's TTL takes both.
func TestArrayCountExpiresWithItsParent(t *testing.T) {
	tables, db := testenv.Tables(t)
	s := dynamo.NewJobStore(db, tables).Retain(48 * time.Hour)
	at := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	p := jobs.New("job-parent", "ml", "a", "us-east-1", 50, nil, []map[string]any{{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "p"}}}, at)
	p.Array = &jobs.Array{Size: 2, Parallelism: 2}
	if _, _, err := s.Create(context.Background(), p, jobs.Event(outbox.JobQueued, p, "", at), nil, at); err != nil {
		t.Fatal(err)
	}
	count := func() int64 {
		out, err := db.GetItem(context.Background(), &dynamodb.GetItemInput{
			TableName: &tables.Jobs, ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "job#" + p.ID}, "sk": &types.AttributeValueMemberS{Value: "array"}},
		})
		if err != nil || out.Item == nil {
			t.Fatalf("reading the array's count: %v (item %v)", err, out.Item)
		}
		n, _ := out.Item["expires_at"].(*types.AttributeValueMemberN)
		if n == nil {
			return 0
		}
		v, _ := strconv.ParseInt(n.Value, 10, 64)
		return v
	}
	if got := count(); got != 0 {
		t.Errorf("a running array's count expires at %d, want never", got)
	}
	end := at.Add(time.Hour)
	move(t, s, p, end, jobs.StatusCancelled)
	if got, want := count(), end.Add(48*time.Hour).Unix(); got != want || expiresAt(t, db, tables, p.ID) != want {
		t.Errorf("the ended array's count expires at %d, its record at %d; want both %d", got, expiresAt(t, db, tables, p.ID), want)
	}
}

func TestPurge(t *testing.T) {
	tables, db := testenv.Tables(t)
	s := dynamo.NewJobStore(db, tables)
	ctx := context.Background()
	js := createJobs(t, s, 2)
	if err := s.Purge(ctx, js[0]); err == nil {
		t.Error("Purge of a queued job succeeded; only finished jobs' records may go")
	}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	done := move(t, s, js[0], at, jobs.StatusCancelled)

	// A record read as finished while it is in another status is not deleted.
	stale := js[1]
	stale.Status = jobs.StatusFailed
	if err := s.Purge(ctx, stale); !errors.Is(err, records.ErrStale) {
		t.Errorf("Purge of a job whose record is queued = %v, want ErrStale", err)
	}
	if _, err := s.Job(ctx, js[1].ID); err != nil {
		t.Errorf("the refused Purge disturbed job %s: %v", js[1].ID, err)
	}

	if err := s.Purge(ctx, done); err != nil {
		t.Fatalf("Purge(cancelled job): %v", err)
	}
	if _, err := s.Job(ctx, done.ID); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("Job after Purge = %v, want ErrNotFound", err)
	}
	if err := s.Purge(ctx, done); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("Purge again = %v, want ErrNotFound", err)
	}
}
