package dynamo

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tidegate/tidegate/shared/jobs"
)

// JobStore keeps job records in the jobs table. Each job is one item (pk job#<id>); gsi1 lists a
// namespace's jobs newest first (gsi1pk ns#<namespace>, gsi1sk <created_at>#<id>).
type JobStore struct {
	db    *dynamodb.Client
	table string
}

// NewJobStore returns a store on the jobs table.
func NewJobStore(db *dynamodb.Client, jobsTable string) *JobStore {
	return &JobStore{db: db, table: jobsTable}
}

// JobPage is one page of a listing; Next is empty on the last page.
type JobPage struct {
	Jobs []jobs.Job
	Next string
}

type jobItem struct {
	PK     string `dynamodbav:"pk"`
	SK     string `dynamodbav:"sk"`
	GSI1PK string `dynamodbav:"gsi1pk"`
	GSI1SK string `dynamodbav:"gsi1sk"`
	jobs.Job
}

// List answers the newest jobs in namespaces, limit at most, starting after the cursor a previous
// page returned. It runs one index query per namespace and merges them; the cursor is the last sort
// key returned, so every namespace resumes from the same point in time.
func (s *JobStore) List(ctx context.Context, namespaces []string, limit int, cursor string) (JobPage, error) {
	var all []jobItem
	for _, ns := range namespaces {
		items, err := s.queryNamespace(ctx, ns, limit, cursor)
		if err != nil {
			return JobPage{}, err
		}
		all = append(all, items...)
	}
	slices.SortFunc(all, func(a, b jobItem) int { return cmp.Compare(b.GSI1SK, a.GSI1SK) })
	var page JobPage
	if len(all) > limit {
		all = all[:limit]
		page.Next = all[limit-1].GSI1SK
	}
	page.Jobs = make([]jobs.Job, 0, len(all))
	for _, it := range all {
		page.Jobs = append(page.Jobs, it.Job)
	}
	return page, nil
}

func (s *JobStore) queryNamespace(ctx context.Context, ns string, limit int, cursor string) ([]jobItem, error) {
	cond := "gsi1pk = :pk"
	vals := map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "ns#" + ns}}
	if cursor != "" {
		cond += " AND gsi1sk < :after"
		vals[":after"] = &types.AttributeValueMemberS{Value: cursor}
	}
	// One more than the page holds tells whether another page follows.
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName:                 &s.table,
		IndexName:                 aws.String(indexGSI1),
		KeyConditionExpression:    &cond,
		ExpressionAttributeValues: vals,
		ScanIndexForward:          aws.Bool(false),
		Limit:                     aws.Int32(int32(limit + 1)),
	})
	if err != nil {
		return nil, fmt.Errorf("listing jobs in namespace %s: %w", ns, err)
	}
	var items []jobItem
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
		return nil, fmt.Errorf("decoding jobs in namespace %s: %w", ns, err)
	}
	return items, nil
}
