package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tidegate/tidegate/shared/jobs"
)

// Fence is an attempt of a job taken out of a region Tidegate could not reach (jobs.Displaced
// with FenceIn): the region's cluster may still run it, and nothing it reports is recorded (the
// job's record has moved on to another attempt, and every change to a dispatched job holds only
// for the region and attempt its writer read). Its objects are deleted once the region is
// reached again, before the region admits anything (RegionHealth.Fenced).
type Fence struct {
	Region    string    `dynamodbav:"region"`
	JobID     string    `dynamodbav:"job_id"`
	Attempt   int       `dynamodbav:"attempt"`
	Tenant    string    `dynamodbav:"tenant"`
	Namespace string    `dynamodbav:"namespace"`
	At        time.Time `dynamodbav:"at"`
}

func fenceKey(region, id string, attempt int) (string, string) {
	return "fence#" + region, "job#" + id + "#" + strconv.Itoa(attempt)
}

// fenceWrites are the writes that fence job j's attempt in c.FenceIn beside the change c that
// moves it on: the fence, once, and the region's count of fences.
func (s *JobStore) fenceWrites(j jobs.Job, c jobs.Change) ([]types.TransactWriteItem, error) {
	f := Fence{Region: c.FenceIn, JobID: j.ID, Attempt: j.AttemptOf(), Tenant: j.Tenant, Namespace: j.Namespace, At: c.At.UTC()}
	item, err := attributevalue.MarshalMap(f)
	if err != nil {
		return nil, fmt.Errorf("encoding the fence of job %s: %w", j.ID, err)
	}
	pk, sk := fenceKey(f.Region, f.JobID, f.Attempt)
	item["pk"], item["sk"] = &types.AttributeValueMemberS{Value: pk}, &types.AttributeValueMemberS{Value: sk}
	hpk, hsk := healthKey(f.Region)
	return []types.TransactWriteItem{
		{Put: &types.Put{TableName: &s.tables.Control, Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		{Update: &types.Update{
			TableName: &s.tables.Control, Key: keyOf(hpk, hsk),
			UpdateExpression:          aws.String("SET #region = :region, failures = if_not_exists(failures, :zero) ADD fenced :one"),
			ExpressionAttributeNames:  map[string]string{"#region": "region"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":region": &types.AttributeValueMemberS{Value: f.Region}, ":one": &types.AttributeValueMemberN{Value: "1"}, ":zero": &types.AttributeValueMemberN{Value: "0"}},
		}},
	}, nil
}

// fencesPerRead is how many fences Fences answers at most: a beat deletes as many, and the next
// beat the rest.
const fencesPerRead = 100

// Fences are region's fences still to clear, oldest job first, at most fencesPerRead.
func (s *JobStore) Fences(ctx context.Context, region string) ([]Fence, error) {
	pk, _ := fenceKey(region, "", 0)
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: &s.tables.Control, KeyConditionExpression: aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}},
		ConsistentRead:            aws.Bool(true), Limit: aws.Int32(fencesPerRead),
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s's fenced attempts: %w", region, err)
	}
	var fs []Fence
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &fs); err != nil {
		return nil, fmt.Errorf("decoding %s's fenced attempts: %w", region, err)
	}
	return fs, nil
}

// ClearFence records fence f cleared (its objects deleted): the fence goes, and its region's
// count with it. A fence cleared already is no error.
func (s *JobStore) ClearFence(ctx context.Context, f Fence) error {
	pk, sk := fenceKey(f.Region, f.JobID, f.Attempt)
	hpk, hsk := healthKey(f.Region)
	_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Delete: &types.Delete{TableName: &s.tables.Control, Key: keyOf(pk, sk), ConditionExpression: aws.String("attribute_exists(pk)")}},
		{Update: &types.Update{
			TableName: &s.tables.Control, Key: keyOf(hpk, hsk),
			UpdateExpression:          aws.String("ADD fenced :less"),
			ConditionExpression:       aws.String("fenced > :zero"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":less": &types.AttributeValueMemberN{Value: "-1"}, ":zero": &types.AttributeValueMemberN{Value: "0"}},
		}},
	}})
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		return nil // cleared by another beat meanwhile
	}
	if err != nil {
		return fmt.Errorf("clearing the fence of job %s's attempt %d in %s: %w", f.JobID, f.Attempt, f.Region, err)
	}
	return nil
}
