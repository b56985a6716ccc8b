package dynamo

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tidegate/tidegate/shared/jobs"
)

// A job's decisions are items of their own beside its record, under its partition key (sort key
// decision#<time>#<n>), in no index, each expiring DecisionsKept after it was made: the record
// stays its size however often a job waits, and its newest decisions read in one query.

// decisionSeq tells apart decisions of one job made in the same nanosecond by one process.
var decisionSeq atomic.Uint64

type decisionItem struct {
	PK      string `dynamodbav:"pk"`
	SK      string `dynamodbav:"sk"`
	Expires int64  `dynamodbav:"expires_at"`
	jobs.Decision
}

// KeepDecisions writes ds, 25 to a call (putBatch), retrying what DynamoDB leaves unprocessed a
// few times. They are a trail, not the record: a decision lost to a failed write leaves the job
// as it is.
func (s *JobStore) KeepDecisions(ctx context.Context, ds []jobs.JobDecision) error {
	for batch := range slices.Chunk(ds, writesPerBatch) {
		reqs := make([]types.WriteRequest, 0, len(batch))
		for _, d := range batch {
			pk, _ := jobKey(d.JobID)
			it := decisionItem{PK: pk, SK: "decision#" + d.At.UTC().Format("2006-01-02T15:04:05.000000000Z") + "#" + strconv.FormatUint(decisionSeq.Add(1), 36),
				Expires: d.At.Add(jobs.DecisionsKept).Unix(), Decision: d.Decision}
			item, err := attributevalue.MarshalMap(it)
			if err != nil {
				return fmt.Errorf("encoding a decision of job %s: %w", d.JobID, err)
			}
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
		}
		if err := s.putBatch(ctx, reqs, 3); err != nil {
			return fmt.Errorf("keeping decisions: %w", err)
		}
	}
	return nil
}

// Decisions reads job id's newest decisions, at most limit, newest first.
func (s *JobStore) Decisions(ctx context.Context, id string, limit int) ([]jobs.Decision, error) {
	pk, _ := jobKey(id)
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName:              &s.tables.Jobs,
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :d)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: pk}, ":d": &types.AttributeValueMemberS{Value: "decision#"}},
		ScanIndexForward: aws.Bool(false), Limit: aws.Int32(int32(limit)),
	})
	if err != nil {
		return nil, fmt.Errorf("reading job %s's decisions: %w", id, err)
	}
	var items []decisionItem
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
		return nil, fmt.Errorf("decoding job %s's decisions: %w", id, err)
	}
	ds := make([]jobs.Decision, len(items))
	for i, it := range items {
		ds[i] = it.Decision
	}
	return ds, nil
}
