package dynamo

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A region's evictions are counted a minute at a time in one control item, which only the drain
// holding the region's lease writes: the bound on evictions a minute holds across processes.

func evictionsKey(region string) map[string]types.AttributeValue {
	return keyOf("evictions#"+region, "minute")
}

// minuteOf names the minute of at.
func minuteOf(at time.Time) string { return at.UTC().Truncate(time.Minute).Format(time.RFC3339) }

// Evictions answers how many jobs region's drains evicted in the minute of at.
func (s *JobStore) Evictions(ctx context.Context, region string, at time.Time) (int, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.tables.Control, Key: evictionsKey(region), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return 0, fmt.Errorf("reading %s's evictions: %w", region, err)
	}
	m, ok := out.Item["minute"].(*types.AttributeValueMemberS)
	if !ok || m.Value != minuteOf(at) {
		return 0, nil
	}
	n, _ := out.Item["count"].(*types.AttributeValueMemberN)
	if n == nil {
		return 0, nil
	}
	return strconv.Atoi(n.Value)
}

// CountEvictions adds n to region's evictions in the minute of at, starting the minute's count
// when the item holds an earlier one's.
func (s *JobStore) CountEvictions(ctx context.Context, region string, at time.Time, n int) error {
	minute := &types.AttributeValueMemberS{Value: minuteOf(at)}
	count := &types.AttributeValueMemberN{Value: strconv.Itoa(n)}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.tables.Control, Key: evictionsKey(region),
		UpdateExpression:          aws.String("ADD #count :n"),
		ConditionExpression:       aws.String("#minute = :m"),
		ExpressionAttributeNames:  map[string]string{"#count": "count", "#minute": "minute"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":n": count, ":m": minute},
	})
	if conditionFailed(err) {
		item := evictionsKey(region)
		item["minute"], item["count"] = minute, count
		_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.tables.Control, Item: item})
	}
	if err != nil {
		return fmt.Errorf("counting %s's evictions: %w", region, err)
	}
	return nil
}
