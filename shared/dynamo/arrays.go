package dynamo

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/records"
)

// An array job is its parent's record, its children's records (listed under the parent in gsi1,
// gsi3 and gsi4, not among their namespace's jobs) and a small item in the parent's partition that
// counts the children's ends (sk "array"): the parent's record, which holds the manifests, is
// never written for a child's end. A child is counted once: the count's transaction marks the
// child counted, and holds only while it is not.

const arraySK = "array"

type arrayItem struct {
	PK   string `dynamodbav:"pk"`
	SK   string `dynamodbav:"sk"`
	Size int    `dynamodbav:"size"`
	jobs.ArrayEnds
}

// arrayPut is the transaction's put of array parent j's count of ends, all zero.
func (s *JobStore) arrayPut(j jobs.Job) (types.TransactWriteItem, error) {
	pk, _ := jobKey(j.ID)
	item, err := attributevalue.MarshalMap(arrayItem{PK: pk, SK: arraySK, Size: j.GroupSize()})
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("encoding array %s's count: %w", j.ID, err)
	}
	return types.TransactWriteItem{Put: &types.Put{TableName: &s.tables.Jobs, Item: item, ConditionExpression: ptr("attribute_not_exists(pk)")}}, nil
}

// arrayExpiry is the write, in the transaction of group parent j's end at at, that gives its count
// of ends the parent's own retention, so DynamoDB's TTL takes both. Children that end after it
// still count on it until then. Unconditional: a parent stored before the count has none, and the
// item written then expires with it.
func (s *JobStore) arrayExpiry(j jobs.Job, at time.Time) types.TransactWriteItem {
	pk, _ := jobKey(j.ID)
	return types.TransactWriteItem{Update: &types.Update{
		TableName: &s.tables.Jobs, Key: keyOf(pk, arraySK),
		UpdateExpression:          aws.String("SET #exp = :exp"),
		ExpressionAttributeNames:  map[string]string{"#exp": attrExpires},
		ExpressionAttributeValues: map[string]types.AttributeValue{":exp": &types.AttributeValueMemberN{Value: strconv.FormatInt(at.Add(s.retention).Unix(), 10)}},
	}}
}

// groupAttrs are what a child's end reads of its array or workflow: all but the manifests, which
// may be a megabyte a child would otherwise read (256 read units) to pass its slot on; its event
// and its end's write need nothing else.
const groupAttrs = "id, tenant, #ns, #region, regions, priority, labels, #status, created_at, updated_at, attempt, " +
	"#array, workflow, parent, gsi5sk, expires_at"

// Group reads array or workflow parent id without its manifests (groupAttrs); records.ErrNotFound
// when it has no record, or it expired.
func (s *JobStore) Group(ctx context.Context, id string) (jobs.Job, error) {
	pk, sk := jobKey(id)
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &s.tables.Jobs, Key: keyOf(pk, sk), ConsistentRead: aws.Bool(true), ProjectionExpression: aws.String(groupAttrs),
		ExpressionAttributeNames: map[string]string{"#ns": "namespace", "#region": "region", "#status": "status", "#array": "array"},
	})
	if err != nil {
		return jobs.Job{}, fmt.Errorf("reading group %s: %w", id, err)
	}
	if out.Item == nil {
		return jobs.Job{}, records.ErrNotFound
	}
	var it jobItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return jobs.Job{}, fmt.Errorf("decoding group %s: %w", id, err)
	}
	if expired(it.Expires, s.now()) {
		return jobs.Job{}, records.ErrNotFound
	}
	return unpackJob(it)
}

// CreateChildren writes the records of an array's children, 25 to a BatchWriteItem, before the
// parent's (Create): a child whose parent was never stored waits on it for ever, listed nowhere.
// progress, when set, is told how many are written so far.
func (s *JobStore) CreateChildren(ctx context.Context, children []jobs.Job, progress func(done int)) error {
	done := 0
	for batch := range slices.Chunk(children, writesPerBatch) {
		reqs := make([]types.WriteRequest, 0, len(batch))
		for _, c := range batch {
			it, err := toJobItem(c)
			if err != nil {
				return fmt.Errorf("encoding child %s: %w", c.ID, err)
			}
			item, err := attributevalue.MarshalMap(it)
			if err != nil {
				return fmt.Errorf("encoding child %s: %w", c.ID, err)
			}
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
		}
		// Its edges on the children of arrays it waits on child by child, before it: an edge
		// whose dependent was never stored is dropped at its release.
		if err := s.keepEdgesOf(ctx, batch); err != nil {
			return err
		}
		if err := s.putBatch(ctx, reqs, 8); err != nil {
			return fmt.Errorf("storing an array's children: %w", err)
		}
		if done += len(batch); progress != nil {
			progress(done)
		}
	}
	return nil
}

// CountEnd counts ended child c's end on its parent, once however often it is asked, and
// answers the ends counted so far.
func (s *JobStore) CountEnd(ctx context.Context, c jobs.Job) (jobs.ArrayEnds, error) {
	if !c.Status.Terminal() || c.Parent == "" {
		return jobs.ArrayEnds{}, fmt.Errorf("job %s is not an ended child of an array", c.ID)
	}
	parentPK, _ := jobKey(c.Parent)
	_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{
			TableName: &s.tables.Jobs, Key: keyOf(jobKey(c.ID)),
			UpdateExpression:          aws.String("SET array_counted = :yes"),
			ConditionExpression:       aws.String("attribute_not_exists(array_counted) AND #status = :status"),
			ExpressionAttributeNames:  map[string]string{"#status": "status"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":yes": &types.AttributeValueMemberBOOL{Value: true}, ":status": &types.AttributeValueMemberS{Value: string(c.Status)}},
		}},
		{Update: &types.Update{
			TableName: &s.tables.Jobs, Key: keyOf(parentPK, arraySK),
			UpdateExpression:          aws.String("ADD #end :one"),
			ConditionExpression:       aws.String("attribute_exists(pk)"),
			ExpressionAttributeNames:  map[string]string{"#end": string(c.Status)},
			ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}},
		}},
	}})
	if err != nil && !anyConditionFailed(err) {
		return jobs.ArrayEnds{}, fmt.Errorf("counting child %s's end: %w", c.ID, err)
	}
	return s.ArrayEnds(ctx, c.Parent)
}

// ArrayEnds reads the ends counted of array parent's children.
func (s *JobStore) ArrayEnds(ctx context.Context, parent string) (jobs.ArrayEnds, error) {
	pk, _ := jobKey(parent)
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.tables.Jobs, Key: keyOf(pk, arraySK), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return jobs.ArrayEnds{}, fmt.Errorf("reading array %s's count: %w", parent, err)
	}
	if out.Item == nil {
		return jobs.ArrayEnds{}, records.ErrNotFound
	}
	var it arrayItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return jobs.ArrayEnds{}, fmt.Errorf("decoding array %s's count: %w", parent, err)
	}
	return it.ArrayEnds, nil
}

// childAttrs are what cancelling a child needs of it, and its event tells.
const childAttrs = "id, tenant, #ns, #region, #status, priority, labels, parent, array_index, step, claim, attempt, #array, status_history"

var childNames = map[string]string{"#ns": "namespace", "#region": "region", "#status": "status", "#array": "array"}

// ChildStates reads every child of array parent with childAttrs, in index order.
func (s *JobStore) ChildStates(ctx context.Context, parent string) ([]jobs.Job, error) {
	p := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName: &s.tables.Jobs, IndexName: aws.String(indexGSI1),
		KeyConditionExpression:    aws.String("gsi1pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "parent#" + parent}},
		ProjectionExpression:      aws.String(childAttrs),
		ExpressionAttributeNames:  childNames,
	})
	var out []jobs.Job
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading array %s's children: %w", parent, err)
		}
		var items []jobs.Job
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &items); err != nil {
			return nil, fmt.Errorf("decoding array %s's children: %w", parent, err)
		}
		out = append(out, items...)
	}
	return out, nil
}

// Started records array parent id started: out of the release index, where it waited to be,
// and still marked as having what to release at its end.
func (s *JobStore) Started(ctx context.Context, id string) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.tables.Jobs, Key: keyOf(jobKey(id)),
		UpdateExpression:          aws.String("REMOVE gsi5pk"),
		ConditionExpression:       aws.String("#status = :running"),
		ExpressionAttributeNames:  map[string]string{"#status": "status"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":running": &types.AttributeValueMemberS{Value: string(jobs.StatusRunning)}},
	})
	if err != nil && !conditionFailed(err) {
		return fmt.Errorf("marking array %s started: %w", id, err)
	}
	return nil
}
