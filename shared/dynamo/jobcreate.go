package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
)

// Idempotency is a submission's Idempotency-Key: the key, per tenant, and a digest of the body it
// came with.
type Idempotency struct {
	Tenant, Key, BodyHash string
}

// IdempotencyTTL is how long a key is remembered: a day, as Stripe keeps theirs, long enough for
// any client's retries.
const IdempotencyTTL = 24 * time.Hour

// ErrIdempotencyConflict is what Create answers when a key is reused with another body.
var ErrIdempotencyConflict = errors.New("this Idempotency-Key was used with a different request body; use a new key for a new request")

type idemItem struct {
	PK       string `dynamodbav:"pk"`
	SK       string `dynamodbav:"sk"`
	BodyHash string `dynamodbav:"body_hash"`
	JobID    string `dynamodbav:"job_id"`
	Expires  int64  `dynamodbav:"expires_at"`
}

// Create stores a new queued job and its job.queued event in one transaction, with the
// idempotency key when there is one. A blocked job's transaction also marks each job it waits on
// as having a dependent, holding only while that job has not ended (else ErrDependencyEnded),
// and its edges (depends.go) are written just before. If the key was already used with the same body it answers the
// job that key made and replayed=true; with another body, ErrIdempotencyConflict.
func (s *JobStore) Create(ctx context.Context, j jobs.Job, ev outbox.Event, idem *Idempotency, now time.Time) (job jobs.Job, replayed bool, err error) {
	return s.CreateAudited(ctx, j, ev, idem, nil, now)
}

// CreateAudited is Create with the audit record of the request that makes the job, when audit is
// set, in the same transaction (in the control table): the job is never made unrecorded, and the
// record never says a job was made that was not.
func (s *JobStore) CreateAudited(ctx context.Context, j jobs.Job, ev outbox.Event, idem *Idempotency, audit *AuditEntry, now time.Time) (job jobs.Job, replayed bool, err error) {
	it, err := toJobItem(j)
	if err != nil {
		return j, false, err
	}
	item, err := attributevalue.MarshalMap(it)
	if err != nil {
		return j, false, fmt.Errorf("encoding job %s: %w", j.ID, err)
	}
	writes := []types.TransactWriteItem{
		{Put: &types.Put{TableName: &s.tables.Jobs, Item: item, ConditionExpression: ptr("attribute_not_exists(pk)")}},
	}
	if ev.ID != "" { // a workflow's parent tells of its end alone
		evPut, err := s.tables.eventPut(ev)
		if err != nil {
			return j, false, err
		}
		writes = append(writes, evPut)
	}
	idemAt := len(writes)
	if err := s.keepEdges(ctx, j); err != nil {
		return j, false, err
	}
	if idem != nil {
		pk, sk := idem.key()
		idemRow, err := attributevalue.MarshalMap(idemItem{
			PK: pk, SK: sk, BodyHash: idem.BodyHash, JobID: j.ID,
			Expires: now.Add(IdempotencyTTL).Unix(),
		})
		if err != nil {
			return j, false, err
		}
		// TTL deletes lazily, so an expired key is treated as free even while it is still stored.
		writes = append(writes, types.TransactWriteItem{Put: &types.Put{
			TableName: &s.tables.Control, Item: idemRow,
			ConditionExpression:                 ptr("attribute_not_exists(pk) OR expires_at < :now"),
			ExpressionAttributeValues:           map[string]types.AttributeValue{":now": &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Unix(), 10)}},
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}})
	}
	marks := len(writes)
	writes = append(writes, s.marks(j)...)
	if j.Group() {
		put, err := s.arrayPut(j)
		if err != nil {
			return j, false, err
		}
		writes = append(writes, put)
	}
	if audit != nil {
		put, err := audit.put(s.tables.Control)
		if err != nil {
			return j, false, err
		}
		writes = append(writes, types.TransactWriteItem{Put: put})
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: writes})
	if err == nil {
		return j, false, nil
	}
	if idem != nil {
		if old, failed := isConditionFailed(err, idemAt); failed {
			return s.replay(ctx, old, idem)
		}
	}
	for i := marks; i < marks+len(dependencies(j)); i++ {
		if _, failed := isConditionFailed(err, i); failed {
			return j, false, fmt.Errorf("storing job %s: %w", j.ID, ErrDependencyEnded)
		}
	}
	return j, false, fmt.Errorf("storing job %s: %w", j.ID, err)
}

// key is where the idempotency key is kept in the control table.
func (idem Idempotency) key() (string, string) { return "idem#" + idem.Tenant + "#" + idem.Key, "idem" }

// Replay answers what Create would for a request that reuses idem, without storing anything: the
// job the key made and true; ErrIdempotencyConflict where the key came with another body; false
// where the key made no job or has expired, and a new job would be made.
func (s *JobStore) Replay(ctx context.Context, idem Idempotency, now time.Time) (jobs.Job, bool, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.tables.Control, Key: keyOf(idem.key()), ConsistentRead: ptr(true)})
	if err != nil {
		return jobs.Job{}, false, fmt.Errorf("reading idempotency key %q: %w", idem.Key, err)
	}
	var prev idemItem
	if err := attributevalue.UnmarshalMap(out.Item, &prev); err != nil {
		return jobs.Job{}, false, fmt.Errorf("decoding idempotency key: %w", err)
	}
	if len(out.Item) == 0 || prev.Expires < now.Unix() {
		return jobs.Job{}, false, nil
	}
	return s.replay(ctx, out.Item, &idem)
}

// replay answers a reused idempotency key: the job it made, or a conflict.
func (s *JobStore) replay(ctx context.Context, old map[string]types.AttributeValue, idem *Idempotency) (jobs.Job, bool, error) {
	var prev idemItem
	if err := attributevalue.UnmarshalMap(old, &prev); err != nil {
		return jobs.Job{}, false, fmt.Errorf("decoding idempotency key: %w", err)
	}
	if prev.BodyHash != idem.BodyHash {
		return jobs.Job{}, false, ErrIdempotencyConflict
	}
	j, err := s.Job(ctx, prev.JobID)
	if err != nil {
		return jobs.Job{}, false, fmt.Errorf("reading the job idempotency key %q made: %w", idem.Key, err)
	}
	return j, true, nil
}
