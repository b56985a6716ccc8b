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

// LeaseStore hands out named, expiring, exclusive leases from the control table: one reconcile
// beat at a time, one drain of a region at a time. A holder that dies loses its lease when it
// expires.
type LeaseStore struct {
	db    *dynamodb.Client
	table string
}

// NewLeaseStore returns a store on the control table.
func NewLeaseStore(db *dynamodb.Client, controlTable string) *LeaseStore {
	return &LeaseStore{db: db, table: controlTable}
}

// Acquire takes the lease name for owner until until, if it is free, expired, or already owner's.
// It answers false, with no error, when another holder has it.
func (s *LeaseStore) Acquire(ctx context.Context, name, owner string, now, until time.Time) (bool, error) {
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &s.table,
		Item: map[string]types.AttributeValue{
			attrPK:      &types.AttributeValueMemberS{Value: "lease#" + name},
			attrSK:      &types.AttributeValueMemberS{Value: "lease"},
			"owner":     &types.AttributeValueMemberS{Value: owner},
			"until_ms":  &types.AttributeValueMemberN{Value: strconv.FormatInt(until.UnixMilli(), 10)},
			attrExpires: &types.AttributeValueMemberN{Value: strconv.FormatInt(until.Add(time.Hour).Unix(), 10)},
		},
		ConditionExpression:      aws.String("attribute_not_exists(pk) OR until_ms < :now OR #owner = :owner"),
		ExpressionAttributeNames: map[string]string{"#owner": "owner"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":now":   &types.AttributeValueMemberN{Value: strconv.FormatInt(now.UnixMilli(), 10)},
			":owner": &types.AttributeValueMemberS{Value: owner},
		},
	})
	if conditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("taking lease %s: %w", name, err)
	}
	return true, nil
}

// Release gives the lease up, if owner still holds it.
func (s *LeaseStore) Release(ctx context.Context, name, owner string) error {
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                 &s.table,
		Key:                       keyOf("lease#"+name, "lease"),
		ConditionExpression:       aws.String("#owner = :owner"),
		ExpressionAttributeNames:  map[string]string{"#owner": "owner"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":owner": &types.AttributeValueMemberS{Value: owner}},
	})
	if err != nil && !conditionFailed(err) {
		return fmt.Errorf("releasing lease %s: %w", name, err)
	}
	return nil
}

// Knock asks the holder of lease name, if one holds it unexpired at now, to run once more before
// it lets go (ReleaseUnlessKnocked): what a drain that finds its region draining leaves for the
// one that is, whose reads may come from before what woke the second. It answers false when no
// one holds the lease, which the caller may then take.
func (s *LeaseStore) Knock(ctx context.Context, name string, now time.Time) (bool, error) {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:           &s.table,
		Key:                 keyOf("lease#"+name, "lease"),
		UpdateExpression:    aws.String("SET knocked = :yes"),
		ConditionExpression: aws.String("attribute_exists(pk) AND until_ms >= :now"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":yes": &types.AttributeValueMemberBOOL{Value: true},
			":now": &types.AttributeValueMemberN{Value: strconv.FormatInt(now.UnixMilli(), 10)},
		},
	})
	if conditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("knocking on lease %s: %w", name, err)
	}
	return true, nil
}

// ReleaseUnlessKnocked gives the lease up if owner still holds it and no one knocked since it
// last asked. A knock it takes instead, answering true and keeping the lease: the holder runs
// once more, then asks again. Released idle, the lease is left marked so (Idle) until someone
// takes it: what a drain that found nothing waiting says, so that an end need not ring for it.
func (s *LeaseStore) ReleaseUnlessKnocked(ctx context.Context, name, owner string, idle bool) (bool, error) {
	owned := map[string]types.AttributeValue{":owner": &types.AttributeValueMemberS{Value: owner}}
	key, names := keyOf("lease#"+name, "lease"), map[string]string{"#owner": "owner"}
	unknocked := aws.String("#owner = :owner AND attribute_not_exists(knocked)")
	var err error
	if idle {
		// The mark is the release: one conditional write, the owner's, so no later holder's
		// lease or release is ever overwritten by it.
		_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: &s.table, Key: key, ConditionExpression: unknocked, ExpressionAttributeNames: names,
			UpdateExpression: aws.String("SET until_ms = :zero, idle = :yes REMOVE #owner"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":owner": owned[":owner"],
				":zero": &types.AttributeValueMemberN{Value: "0"}, ":yes": &types.AttributeValueMemberBOOL{Value: true}},
		})
	} else {
		_, err = s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName: &s.table, Key: key, ConditionExpression: unknocked, ExpressionAttributeNames: names,
			ExpressionAttributeValues: owned,
		})
	}
	if err == nil {
		return false, nil
	}
	if !conditionFailed(err) {
		return false, fmt.Errorf("releasing lease %s: %w", name, err)
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &s.table,
		Key:                       keyOf("lease#"+name, "lease"),
		UpdateExpression:          aws.String("REMOVE knocked"),
		ConditionExpression:       aws.String("#owner = :owner AND attribute_exists(knocked)"),
		ExpressionAttributeNames:  map[string]string{"#owner": "owner"},
		ExpressionAttributeValues: owned,
	})
	if conditionFailed(err) {
		return false, nil // no longer owner's: it ran out, and another holder reads afresh
	}
	if err != nil {
		return false, fmt.Errorf("taking a knock on lease %s: %w", name, err)
	}
	return true, nil
}

// Idle says whether lease name was last released idle and no one has taken it since.
func (s *LeaseStore) Idle(ctx context.Context, name string) (bool, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: keyOf("lease#"+name, "lease"), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return false, fmt.Errorf("reading lease %s: %w", name, err)
	}
	idle, ok := out.Item["idle"].(*types.AttributeValueMemberBOOL)
	return ok && idle.Value, nil
}

// DrainLease is the name of the lease one drain of region holds at a time.
func DrainLease(region string) string { return "dispatch#" + region }
