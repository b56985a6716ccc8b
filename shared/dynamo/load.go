package dynamo

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tidegate/tidegate/shared/jobs"
)

// writesPerBatch is BatchWriteItem's limit of items a call.
const writesPerBatch = 25

// Load writes the records of js as they are, in their queues, without their events, idempotency
// keys or checks, BatchWriteItem a page at a time: for loading a table with many jobs at once, as
// the scale benchmark does. The API creates jobs with Create.
func (s *JobStore) Load(ctx context.Context, js []jobs.Job) error {
	for batch := range slices.Chunk(js, writesPerBatch) {
		reqs := make([]types.WriteRequest, len(batch))
		for i, j := range batch {
			it, err := toJobItem(j)
			if err != nil {
				return fmt.Errorf("encoding job %s: %w", j.ID, err)
			}
			item, err := attributevalue.MarshalMap(it)
			if err != nil {
				return fmt.Errorf("encoding job %s: %w", j.ID, err)
			}
			reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: item}}
		}
		if err := s.putBatch(ctx, reqs, 0); err != nil {
			return fmt.Errorf("loading %d jobs: %w", len(batch), err)
		}
	}
	return nil
}

// putBatch writes reqs (at most writesPerBatch) to the jobs table in one BatchWriteItem, and again
// what DynamoDB leaves unprocessed, waiting a little longer each time: at most tries calls, or as
// many as it takes when tries is 0.
func (s *JobStore) putBatch(ctx context.Context, reqs []types.WriteRequest, tries int) error {
	for try := 0; len(reqs) > 0; try++ {
		if tries > 0 && try == tries {
			return fmt.Errorf("%d writes left unprocessed after %d tries", len(reqs), tries)
		}
		if try > 0 {
			time.Sleep(time.Duration(try*try) * 20 * time.Millisecond)
		}
		out, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{s.tables.Jobs: reqs}})
		if err != nil {
			return err
		}
		reqs = out.UnprocessedItems[s.tables.Jobs]
	}
	return nil
}
