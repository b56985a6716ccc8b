package dynamo

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/records"
)

// JobStore keeps job records in the jobs table and their events in the outbox. Each job is one
// item (pk job#<id>). gsi1 lists a namespace's jobs newest first (gsi1pk ns#<namespace>, gsi1sk
// <inverted created_at>#<id>); gsi3 lists them by priority, highest first, then newest; gsi4 by
// name, a to z, then newest; gsi2 holds queued and active jobs, by region in dispatch order.
type JobStore struct {
	db     *dynamodb.Client
	tables Tables
	// retention is how long a finished job's record is kept after its end (0: for good).
	retention time.Duration
	// now is the clock reads judge expires_at by.
	now func() time.Time
	// listBudget is how many records a listing reads a namespace; 0 is listBudget.
	listBudget int
}

// NewJobStore returns a store on the jobs, events and control tables that keeps finished jobs'
// records for good; Retain sets a retention.
func NewJobStore(db *dynamodb.Client, t Tables) *JobStore {
	return &JobStore{db: db, tables: t, now: time.Now}
}

// Retain makes the store keep a job's record for d after it finishes: the move to a terminal
// status sets expires_at, and DynamoDB's TTL deletes the item some time after that (within days,
// as AWS documents it; DynamoDB Local never does). Until then the store's reads (Job, List) treat
// a record past its expires_at as gone, as AWS advises for items TTL has yet to delete, so a
// retention means the same on every table. 0 keeps records for good. It answers s.
func (s *JobStore) Retain(d time.Duration) *JobStore {
	s.retention = d
	return s
}

// ListBudget sets how many records a listing reads a namespace before it answers what it found
// with a cursor (0: listBudget's 1,000); tests set a small one to see the budget without storing
// thousands of jobs.
func (s *JobStore) ListBudget(n int) *JobStore {
	s.listBudget = n
	return s
}

// maxManifestBytes bounds a job's compressed manifests: DynamoDB's item limit is 400 KB, and the
// rest of the record needs a little of it.
const maxManifestBytes = 300 << 10

// ErrTooLarge is what Create answers for manifests that do not fit in a job record.
var ErrTooLarge = fmt.Errorf("the job's manifests are over %d KiB compressed; split them into several jobs", maxManifestBytes>>10)

type jobItem struct {
	PK     string `dynamodbav:"pk"`
	SK     string `dynamodbav:"sk"`
	GSI1PK string `dynamodbav:"gsi1pk"`
	GSI1SK string `dynamodbav:"gsi1sk"`
	GSI2PK string `dynamodbav:"gsi2pk,omitempty"`
	GSI2SK string `dynamodbav:"gsi2sk,omitempty"`
	GSI3PK string `dynamodbav:"gsi3pk"`
	GSI3SK string `dynamodbav:"gsi3sk"`
	GSI4PK string `dynamodbav:"gsi4pk"`
	GSI4SK string `dynamodbav:"gsi4sk"`
	// GSI5SK marks a job others depend on; with GSI5PK, which every end sets, it puts an ended
	// one in the release index (depends.go).
	GSI5PK    string `dynamodbav:"gsi5pk,omitempty"`
	GSI5SK    string `dynamodbav:"gsi5sk,omitempty"`
	Manifests []byte `dynamodbav:"manifests_gz,omitempty"`
	// Expires is the TTL attribute a finished job's record gets under a retention (Retain).
	Expires int64 `dynamodbav:"expires_at,omitempty"`
	jobs.Job
}

// expired reports whether an item whose TTL attribute is expires (epoch seconds; 0 for none)
// is past it at now: DynamoDB's TTL may delete it from then on, so reads no longer show it.
func expired(expires int64, now time.Time) bool {
	return expires != 0 && expires <= now.Unix()
}

// notExpired is the filter that keeps items not past their TTL attribute at :now, for queries.
const notExpired = "(attribute_not_exists(expires_at) OR expires_at > :now)"

// epoch is t as the TTL attribute's number.
func epoch(t time.Time) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(t.Unix(), 10)}
}

func jobKey(id string) (string, string) { return "job#" + id, "job" }

// newestFirst orders by creation time, newest first, in an ascending string index.
func newestFirst(t time.Time, id string) string {
	return fmt.Sprintf("%019d#%s", math.MaxInt64-t.UnixNano(), id)
}

// byName orders by name, a to z, then newest first. A job's name is a Kubernetes object name
// (lowercase letters, digits, '-' and '.'), all of which sort after '#', so a name sorts before
// every longer name it starts; a job with no name sorts first.
func byName(j jobs.Job) string {
	return j.Name + "#" + newestFirst(j.CreatedAt, j.ID)
}

func toJobItem(j jobs.Job) (jobItem, error) {
	pk, sk := jobKey(j.ID)
	it := jobItem{
		PK: pk, SK: sk, Job: j,
		GSI1PK: "ns#" + j.Namespace, GSI1SK: newestFirst(j.CreatedAt, j.ID),
		GSI3PK: "ns#" + j.Namespace, GSI3SK: fmt.Sprintf("%03d#%s", jobs.MaxPriority-j.Priority, newestFirst(j.CreatedAt, j.ID)),
		GSI4PK: "ns#" + j.Namespace, GSI4SK: byName(j),
	}
	it.GSI2PK, it.GSI2SK = queueKeys(j)
	if j.Parent != "" {
		// A child is listed under its parent, in index (or step) order, not among its
		// namespace's jobs; its end is counted by its parent (arrays.go), so it is marked as a
		// dependency is.
		under, at := "parent#"+j.Parent, j.Step
		if j.ArrayIndex != nil {
			at = fmt.Sprintf("%05d", *j.ArrayIndex)
		}
		it.GSI1PK, it.GSI1SK, it.GSI3PK, it.GSI3SK, it.GSI4PK, it.GSI4SK = under, at, under, at, under, at
		it.GSI5SK = j.ID
	}
	if j.Workflow != nil {
		// A workflow is listed among its namespace's workflows, not its jobs.
		it.GSI1PK, it.GSI3PK, it.GSI4PK = "workflow#"+j.Namespace, "workflow#"+j.Namespace, "workflow#"+j.Namespace
	}
	if j.Group() {
		// A parent has its children to settle at its end; one that waits on nothing is due to
		// the releaser at once, which starts it (one that waits is started by its release).
		it.GSI5SK = j.ID
		if j.Status == jobs.StatusBlocked && len(j.WaitingOn) == 0 {
			it.GSI5PK = releaseDue
		}
	}
	var err error
	if it.Manifests, err = packManifests(j.Manifests); err != nil {
		return it, err
	}
	return it, nil
}

// queueKeys place a job in gsi2: queued jobs under queue#<region> in dispatch order (highest
// priority first, then oldest), long-running ones apart under queue#<region>#lr (a record
// without its kind, from before kinds, under queue#<region>), queued jobs that have yet to be given a region among several
// under roamingQueue in the same order, active ones under one of active#<region>#<shard>, finished ones
// nowhere.
//
// A job held by its spot cap (Held) waits apart, under held#<region>, by instance type and cap,
// out of every drain's read path: a drain reads of it only the jobs whose cap the price it
// observes now meets (JobStore.HeldPage).
func queueKeys(j jobs.Job) (pk, sk string) {
	switch {
	case j.Group():
		return "", "" // an array's or a workflow's parent runs nothing; its children are queued
	case j.Status == jobs.StatusQueued && j.Roaming():
		return roamingQueue, dispatchSort(j)
	case j.Status == jobs.StatusQueued && Held(j):
		return string(HeldQueue(j.Region)), heldSort(j)
	case j.Status == jobs.StatusQueued && BackingOff(j):
		return string(BackoffQueue(j.Region)), backoffSort(j)
	case j.Status == jobs.StatusQueued && LongHeld(j):
		return string(LongHeldQueue(j.Region)), j.Tenant + "#" + dispatchSort(j)
	case j.Status == jobs.StatusQueued && j.LongRunning():
		return string(LongRunningQueue(j.Region)), dispatchSort(j)
	case j.Status == jobs.StatusQueued:
		return string(RegionQueue(j.Region)), dispatchSort(j)
	case j.Status.Active():
		return activeKey(j.Region, j.ID), activeSort(j)
	}
	return "", ""
}

// Within an active partition, the sort key sets apart the jobs a beat cannot follow by LISTing
// its cluster: claims (dispatching; the sweep looks for dead ones) and podless jobs (nothing to
// list) sort before runSort, so the beat reads them alone (JobStore.Unlisted).
const (
	claimSort   = "claim#"
	podlessSort = "podless#"
	runSort     = "run#"
)

func activeSort(j jobs.Job) string {
	switch {
	case j.Status == jobs.StatusDispatching:
		return claimSort + j.ID
	case j.Podless:
		return podlessSort + j.ID
	}
	return runSort + j.ID
}

func packManifests(m []map[string]any) ([]byte, error) {
	if m == nil {
		return nil, nil
	}
	return packJSON(m)
}

func unpackManifests(b []byte) ([]map[string]any, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var m []map[string]any
	return m, unpackJSON(b, &m)
}

// gzipWriters are reused: a new gzip.Writer allocates about 800 KB of compressor state, more than
// the rest of a submission's own work costs.
var gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

// packJSON is v as gzipped JSON: manifests compress several times over, and DynamoDB bills and
// limits items by size. Anything over maxManifestBytes is ErrTooLarge.
func packJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(zw)
	zw.Reset(&buf)
	if err := json.NewEncoder(zw).Encode(v); err != nil {
		return nil, fmt.Errorf("encoding for storage: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if buf.Len() > maxManifestBytes {
		return nil, ErrTooLarge
	}
	return buf.Bytes(), nil
}

// unpackJSON reads what packJSON wrote, numbers kept exact.
func unpackJSON(b []byte, v any) error {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("reading stored JSON: %w", err)
	}
	dec := json.NewDecoder(zr)
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decoding stored JSON: %w", err)
	}
	return nil
}

// Job reads one job with its manifests; records.ErrNotFound if there is none, or if its record
// is past its retention (expires_at) and only waits for DynamoDB's TTL to delete it.
func (s *JobStore) Job(ctx context.Context, id string) (jobs.Job, error) {
	pk, sk := jobKey(id)
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.tables.Jobs, Key: keyOf(pk, sk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return jobs.Job{}, fmt.Errorf("reading job %s: %w", id, err)
	}
	if out.Item == nil {
		return jobs.Job{}, records.ErrNotFound
	}
	var it jobItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return jobs.Job{}, fmt.Errorf("decoding job: %w", err)
	}
	if expired(it.Expires, s.now()) {
		return jobs.Job{}, records.ErrNotFound
	}
	return unpackJob(it)
}

func decodeJob(item map[string]types.AttributeValue) (jobs.Job, error) {
	var it jobItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return jobs.Job{}, fmt.Errorf("decoding job: %w", err)
	}
	return unpackJob(it)
}

// unpackJob is the job of a decoded item, its manifests unpacked.
func unpackJob(it jobItem) (jobs.Job, error) {
	m, err := unpackManifests(it.Manifests)
	if err != nil {
		return jobs.Job{}, fmt.Errorf("job %s: %w", it.ID, err)
	}
	it.Job.Manifests = m
	it.Job.HasDependents = it.GSI5SK != ""
	return it.Job, nil
}

// isConditionFailed tells a failed condition among a cancelled transaction's reasons.
// anyConditionFailed tells a transaction cancelled because some item's condition failed.
func anyConditionFailed(err error) bool {
	var tc *types.TransactionCanceledException
	return errors.As(err, &tc) && slices.ContainsFunc(tc.CancellationReasons, func(r types.CancellationReason) bool {
		return aws.ToString(r.Code) == "ConditionalCheckFailed"
	})
}

// deleteExisting deletes the item under pk/sk; records.ErrNotFound if there was none.
func deleteExisting(ctx context.Context, db *dynamodb.Client, table, pk, sk string) error {
	_, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &table, Key: keyOf(pk, sk), ConditionExpression: aws.String("attribute_exists(pk)")})
	if conditionFailed(err) {
		return records.ErrNotFound
	}
	return err
}

func isConditionFailed(err error, index int) (map[string]types.AttributeValue, bool) {
	var tc *types.TransactionCanceledException
	if !errors.As(err, &tc) || index >= len(tc.CancellationReasons) {
		return nil, false
	}
	r := tc.CancellationReasons[index]
	return r.Item, aws.ToString(r.Code) == "ConditionalCheckFailed"
}

// Purge deletes finished job j's record, if it is still finished as j has it; its events stay
// until they expire. records.ErrStale when the record is in another status, records.ErrNotFound
// when it is gone already. An unfinished job is refused before any write.
func (s *JobStore) Purge(ctx context.Context, j jobs.Job) error {
	if !j.Status.Terminal() {
		return fmt.Errorf("job %s is %s: only a finished job's record can be deleted", j.ID, j.Status)
	}
	pk, sk := jobKey(j.ID)
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: &s.tables.Jobs, Key: keyOf(pk, sk),
		ConditionExpression:                 aws.String("#status = :status"),
		ExpressionAttributeNames:            map[string]string{"#status": "status"},
		ExpressionAttributeValues:           map[string]types.AttributeValue{":status": &types.AttributeValueMemberS{Value: string(j.Status)}},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var failed *types.ConditionalCheckFailedException
	if errors.As(err, &failed) {
		if len(failed.Item) == 0 {
			return records.ErrNotFound
		}
		return records.ErrStale
	}
	if err != nil {
		return fmt.Errorf("deleting job %s's record: %w", j.ID, err)
	}
	if j.Group() {
		// Its count of its children's ends goes with it (arrays.go).
		if _, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.tables.Jobs, Key: keyOf(pk, arraySK)}); err != nil {
			return fmt.Errorf("deleting job %s's count of its children: %w", j.ID, err)
		}
	}
	return nil
}

// dispatchSort is a queued job's place in dispatch order: highest priority first, then oldest.
// DispatchSort is job j's place in its queue, as its queue index sorts it: what a drain judges a
// job not stored yet by (dispatch.Handler.WhatIf).
func DispatchSort(j jobs.Job) string { return dispatchSort(j) }

func dispatchSort(j jobs.Job) string {
	return fmt.Sprintf("%03d#%019d#%s", jobs.MaxPriority-j.Priority, j.CreatedAt.UnixNano(), j.ID)
}

// Held says whether queued job j waits apart (HeldQueue): the last spot price observed for its
// instance type was above its cap. A job with a spot deadline is not, since a drain must judge it
// at its deadline whatever the price, nor one that may run in several regions (the roaming
// queue), nor one whose price was not known (spot_price_unknown).
func Held(j jobs.Job) bool {
	return j.Spot != nil && j.Spot.Deadline == nil && !j.Roaming() && j.PendingReason == reasonAboveCap
}

// reasonAboveCap is admission.ReasonSpotPriceAboveCap, which this package does not link.
const reasonAboveCap = "spot_price_above_cap"

// heldSort places a held job by its instance type, then its cap, highest first, then dispatch
// order: the jobs a price allows (a cap at or above it) are a prefix of their type's run.
func heldSort(j jobs.Job) string {
	return j.Spot.InstanceType + "#" + capSort(j.Spot.MaxPrice) + "#" + dispatchSort(j)
}

// maxCapMicros bounds a cap in millionths of a dollar (the API refuses a cap over $1,000 an hour),
// so that capSort's twelve digits hold every cap.
const maxCapMicros = 999_999_999_999

// capSort is a cap in millionths of a dollar, counted down from maxCapMicros: ascending strings,
// descending caps. A cap between two millionths rounds down, so a price a millionth above it
// does not release it.
func capSort(price float64) string {
	micros := int64(math.Floor(price * 1e6))
	return fmt.Sprintf("%012d", maxCapMicros-min(max(micros, 0), maxCapMicros))
}

// BackingOff says whether queued job j waits apart (BackoffQueue) for its retry's backoff to end:
// a drain found it backing off (pending reason retry_backoff). One that may run in several
// regions stays in the roaming queue.
func BackingOff(j jobs.Job) bool {
	return j.NotBefore != nil && !j.Roaming() && j.PendingReason == reasonBackoff
}

// reasonBackoff is dispatch's pending reason of a job waiting out its retry's backoff.
const reasonBackoff = "retry_backoff"

// backoffSort places a job backing off by when its backoff ends, then dispatch order: those whose
// backoff is over at a moment are a prefix.
func backoffSort(j jobs.Job) string {
	return fmt.Sprintf("%019d#%s", j.NotBefore.UnixNano(), dispatchSort(j))
}

// LongHeld says whether queued job j waits apart (LongHeldQueue) for one of its tenant's
// long-running jobs in its region to end: a drain found its tenant at its limit (pending reason
// tenant_long_running_limit). One that may run in several regions stays in the roaming queue.
func LongHeld(j jobs.Job) bool {
	return j.LongRunning() && !j.Roaming() && j.PendingReason == reasonLongRunningLimit
}

// reasonLongRunningLimit is admission.ReasonSlotlessLimit.
const reasonLongRunningLimit = "tenant_long_running_limit"
