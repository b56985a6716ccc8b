package dynamo

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/records"
)

// A job's dependents are kept on it: one edge item each in its own partition (pk job#<id>, sk
// dependent#<dependent's id>), so that releasing them reads them in one query however long the
// queue, and no record grows with them. A dependency's record is marked, in the transaction
// that stores the dependent, with gsi5sk, and every move to an end sets gsi5pk: an ended job
// with dependents not yet released is then in gsi5's one partition (the release index), and in
// no other case is it, whatever the writer of its end read of it. Releasing them takes it out.

// releaseDue is gsi5's one partition: the ended jobs whose dependents are still to be released.
const releaseDue = "release"

// Edge is one dependent of a job: its id and the end it waits for.
type Edge struct {
	Dependent string         `dynamodbav:"dependent"`
	On        jobs.Condition `dynamodbav:"on"`
}

type edgeItem struct {
	PK string `dynamodbav:"pk"`
	SK string `dynamodbav:"sk"`
	Edge
}

const edgePrefix = "dependent#"

// ErrDependencyEnded is what Create answers when a job its new job was to wait for has ended (or
// gone) since the caller read it: read the dependencies again and settle the job anew.
var ErrDependencyEnded = errors.New("a job it depends on has ended since it was read")

// keepEdges writes the edges of new job j's dependencies, before the transaction that stores j
// and marks them: an edge whose dependent was never stored is dropped when it is released.
func (s *JobStore) keepEdges(ctx context.Context, j jobs.Job) error {
	return s.keepEdgesOf(ctx, []jobs.Job{j})
}

// keepEdgesOf writes the edges of new jobs js' dependencies, 25 to a BatchWriteItem.
func (s *JobStore) keepEdgesOf(ctx context.Context, js []jobs.Job) error {
	var reqs []types.WriteRequest
	for _, j := range js {
		for _, id := range dependencies(j) {
			d, _ := j.DependencyOn(id)
			pk, _ := jobKey(id)
			item, err := attributevalue.MarshalMap(edgeItem{PK: pk, SK: edgePrefix + j.ID, Edge: Edge{Dependent: j.ID, On: d.On}})
			if err != nil {
				return fmt.Errorf("encoding job %s's dependency on %s: %w", j.ID, id, err)
			}
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
		}
	}
	for batch := range slices.Chunk(reqs, writesPerBatch) {
		if err := s.putBatch(ctx, batch, 5); err != nil {
			return fmt.Errorf("keeping %d jobs' dependencies: %w", len(js), err)
		}
	}
	return nil
}

// dependencies are the jobs new job j waits on but its parent, which releases its children itself.
func dependencies(j jobs.Job) []string {
	return slices.DeleteFunc(slices.Clone(j.WaitingOn), func(id string) bool { return id == j.Parent })
}

// marks are the transaction's updates that mark each job new job j waits on as having a
// dependent, each only while that job is the tenant's and has not ended.
func (s *JobStore) marks(j jobs.Job) []types.TransactWriteItem {
	out := make([]types.TransactWriteItem, 0, len(j.WaitingOn))
	for _, id := range dependencies(j) {
		out = append(out, types.TransactWriteItem{Update: &types.Update{
			TableName: &s.tables.Jobs, Key: keyOf(jobKey(id)),
			UpdateExpression:         aws.String("SET gsi5sk = :id"),
			ConditionExpression:      aws.String("attribute_exists(pk) AND tenant = :tenant AND NOT (#status IN (:succeeded, :failed, :cancelled))"),
			ExpressionAttributeNames: map[string]string{"#status": "status"},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":id": &types.AttributeValueMemberS{Value: id}, ":tenant": &types.AttributeValueMemberS{Value: j.Tenant},
				":succeeded": &types.AttributeValueMemberS{Value: string(jobs.StatusSucceeded)},
				":failed":    &types.AttributeValueMemberS{Value: string(jobs.StatusFailed)},
				":cancelled": &types.AttributeValueMemberS{Value: string(jobs.StatusCancelled)},
			},
		}})
	}
	return out
}

// Dependencies reads the jobs ids names as a dependent's submission needs them: id, tenant,
// namespace and status, with consistent reads. An id without a record is left out.
func (s *JobStore) Dependencies(ctx context.Context, ids []string) ([]jobs.Job, error) {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	return inChunks(ids, statesPerRead, func(chunk []string) ([]jobs.Job, error) {
		return s.readJobs(ctx, chunk, "id, tenant, #ns, #status", map[string]string{"#ns": "namespace", "#status": "status"})
	})
}

// Dependents reads the edges of job id's dependents.
func (s *JobStore) Dependents(ctx context.Context, id string) ([]Edge, error) {
	pk, _ := jobKey(id)
	p := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName:              &s.tables.Jobs,
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :e)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: pk}, ":e": &types.AttributeValueMemberS{Value: edgePrefix},
		},
	})
	var out []Edge
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading job %s's dependents: %w", id, err)
		}
		var items []edgeItem
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &items); err != nil {
			return nil, fmt.Errorf("decoding job %s's dependents: %w", id, err)
		}
		for _, it := range items {
			out = append(out, it.Edge)
		}
	}
	return out, nil
}

// Unblock takes dependency off the jobs blocked dependent waits on, and answers dependent as it
// is after. records.ErrStale, with dependent as it is, where it is not blocked waiting on it (a
// release done already, or one that died between this write and the next); records.ErrNotFound
// where there is no such job (an edge whose dependent was never stored).
func (s *JobStore) Unblock(ctx context.Context, dependent, dependency string) (jobs.Job, error) {
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.tables.Jobs, Key: keyOf(jobKey(dependent)),
		UpdateExpression:         aws.String("DELETE waiting_on :dep"),
		ConditionExpression:      aws.String("#status = :blocked AND contains(waiting_on, :one)"),
		ExpressionAttributeNames: map[string]string{"#status": "status"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":dep": &types.AttributeValueMemberSS{Value: []string{dependency}}, ":one": &types.AttributeValueMemberS{Value: dependency},
			":blocked": &types.AttributeValueMemberS{Value: string(jobs.StatusBlocked)},
		},
		ReturnValues: types.ReturnValueAllNew,
	})
	if err == nil {
		return decodeJob(out.Attributes)
	}
	if !conditionFailed(err) {
		return jobs.Job{}, fmt.Errorf("releasing job %s from job %s: %w", dependent, dependency, err)
	}
	j, err := s.Job(ctx, dependent)
	if err != nil {
		return j, err
	}
	return j, records.ErrStale
}

// ReleaseDue reads the ids of at most limit ended jobs whose dependents are still to be released.
func (s *JobStore) ReleaseDue(ctx context.Context, limit int) ([]string, error) {
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: &s.tables.Jobs, IndexName: aws.String(indexGSI5),
		KeyConditionExpression:    aws.String("gsi5pk = :due"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":due": &types.AttributeValueMemberS{Value: releaseDue}},
		Limit:                     aws.Int32(int32(limit)),
	})
	if err != nil {
		return nil, fmt.Errorf("reading the jobs whose dependents are to be released: %w", err)
	}
	ids := make([]string, 0, len(out.Items))
	for _, it := range out.Items {
		var k struct {
			ID string `dynamodbav:"gsi5sk"`
		}
		if err := attributevalue.UnmarshalMap(it, &k); err != nil {
			return nil, fmt.Errorf("decoding a job whose dependents are to be released: %w", err)
		}
		ids = append(ids, k.ID)
	}
	return ids, nil
}

// Released records job id's dependents released: their edges deleted, then the job out of the
// release index.
func (s *JobStore) Released(ctx context.Context, id string, edges []Edge) error {
	pk, _ := jobKey(id)
	var reqs []types.WriteRequest
	for _, e := range edges {
		reqs = append(reqs, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: keyOf(pk, edgePrefix+e.Dependent)}})
	}
	for batch := range slices.Chunk(reqs, writesPerBatch) {
		if err := s.putBatch(ctx, batch, 5); err != nil {
			return fmt.Errorf("deleting job %s's released dependents: %w", id, err)
		}
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.tables.Jobs, Key: keyOf(jobKey(id)),
		UpdateExpression:    aws.String("REMOVE gsi5pk, gsi5sk"),
		ConditionExpression: aws.String("attribute_exists(pk)"),
	})
	if err != nil && !conditionFailed(err) {
		return fmt.Errorf("marking job %s's dependents released: %w", id, err)
	}
	return nil
}
