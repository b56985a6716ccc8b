package dynamo

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tidegate/tidegate/shared/admission"
)

// RegionHealth is whether Tidegate reaches a region's cluster: when the beat last reached it,
// when it last failed and with what, and how many times in a row it failed since it last
// reached it (0 while it is reached).
type RegionHealth struct {
	Region      string     `json:"region" dynamodbav:"region"`
	LastSuccess *time.Time `json:"last_success,omitempty" dynamodbav:"last_success,omitempty"`
	LastFailure *time.Time `json:"last_failure,omitempty" dynamodbav:"last_failure,omitempty"`
	LastError   string     `json:"last_error,omitempty" dynamodbav:"last_error,omitempty"`
	Failures    int        `json:"consecutive_failures" dynamodbav:"failures"`
	// FailingSince is the first failure of the run that Failures counts.
	FailingSince *time.Time `json:"failing_since,omitempty" dynamodbav:"failing_since,omitempty"`
	// Cordon is what an operator set on the region: "" (admitting), Cordoned or Draining, when
	// and by whom.
	Cordon     string     `json:"cordon,omitempty" dynamodbav:"cordon,omitempty"`
	CordonedAt *time.Time `json:"cordoned_at,omitempty" dynamodbav:"cordoned_at,omitempty"`
	CordonedBy string     `json:"cordoned_by,omitempty" dynamodbav:"cordoned_by,omitempty"`
	// Fenced counts the attempts fenced in the region while it was lost whose objects are still
	// to be deleted there (Fence): the region admits nothing until it is 0.
	Fenced int `json:"fenced_attempts,omitempty" dynamodbav:"fenced,omitempty"`
}

// What an operator may set on a region (RegionHealth.Cordon).
const (
	// Cordoned: the region admits nothing; what runs there goes on.
	Cordoned = "cordoned"
	// Draining: as Cordoned, and its running jobs are stopped (with their grace period) and
	// queued again, for another region where they allow one.
	Draining = "draining"
)

// Lost says whether the region has gone unreached for lostAfter at now: its running jobs that
// ask for it are queued again elsewhere (jobs.Displaced).
func (h RegionHealth) Lost(now time.Time, lostAfter time.Duration) bool {
	return lostAfter > 0 && h.Failures > 0 && h.Unreachable(now) >= lostAfter
}

// Closed is why the region admits nothing now, "" while it admits: an operator's cordon or
// drain, the beat's last calls failing to reach it, or attempts fenced there still to delete.
func (h RegionHealth) Closed() admission.Reason {
	switch {
	case h.Cordon == Draining:
		return admission.ReasonRegionDraining
	case h.Cordon == Cordoned:
		return admission.ReasonRegionCordoned
	case h.Failures > 0:
		return admission.ReasonRegionUnreachable
	case h.Fenced > 0:
		return admission.ReasonRegionClearing
	}
	return ""
}

// Unreachable is how long region has gone unreached at now: 0 while the last call reached it,
// else since the first failure of the current run of failures. Not since the last success: a
// region that stays reached has its success written once a minute at most (healthQuiet), so that
// would count up to a minute of reached time as unreached, and one failed call after a quiet
// minute could make a region lost set to two.
func (h RegionHealth) Unreachable(now time.Time) time.Duration {
	switch {
	case h.Failures == 0:
		return 0
	case h.FailingSince != nil:
		return now.Sub(*h.FailingSince)
	case h.LastSuccess != nil:
		return now.Sub(*h.LastSuccess)
	case h.LastFailure != nil:
		return now.Sub(*h.LastFailure)
	}
	return 0
}

// healthTime writes times at one width, so that they compare as strings in a condition.
const healthTime = "2006-01-02T15:04:05.000000000Z"

func healthKey(region string) (string, string) { return "health#" + region, "health" }

// healthQuiet is how often a region that stays reached has its success written: a beat a minute
// in AWS reaches each region every minute, and a write a minute says as much as a write a call.
const healthQuiet = time.Minute

// Reached records that a call reached region's cluster at at; a region reached within
// healthQuiet, and failing since, costs no write.
func (s *JobStore) Reached(ctx context.Context, region string, at time.Time) error {
	pk, sk := healthKey(region)
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.tables.Control, Key: keyOf(pk, sk),
		UpdateExpression:         aws.String("SET #region = :region, last_success = :at, failures = :zero REMOVE last_error, failing_since"),
		ConditionExpression:      aws.String("attribute_not_exists(pk) OR failures > :zero OR last_success < :quiet"),
		ExpressionAttributeNames: map[string]string{"#region": "region"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":region": &types.AttributeValueMemberS{Value: region},
			":at":     &types.AttributeValueMemberS{Value: at.UTC().Format(healthTime)},
			":quiet":  &types.AttributeValueMemberS{Value: at.Add(-healthQuiet).UTC().Format(healthTime)},
			":zero":   &types.AttributeValueMemberN{Value: "0"},
		},
	})
	if err != nil && !conditionFailed(err) {
		return fmt.Errorf("recording %s reached: %w", region, err)
	}
	return nil
}

// Missed records that a call failed to reach region's cluster at at, and why.
func (s *JobStore) Missed(ctx context.Context, region string, at time.Time, why error) error {
	pk, sk := healthKey(region)
	msg := why.Error()
	if len(msg) > 500 {
		msg = msg[:500]
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.tables.Control, Key: keyOf(pk, sk),
		UpdateExpression:         aws.String("SET #region = :region, last_failure = :at, last_error = :why, failing_since = if_not_exists(failing_since, :at) ADD failures :one"),
		ExpressionAttributeNames: map[string]string{"#region": "region"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":region": &types.AttributeValueMemberS{Value: region},
			":at":     &types.AttributeValueMemberS{Value: at.UTC().Format(healthTime)},
			":why":    &types.AttributeValueMemberS{Value: msg},
			":one":    &types.AttributeValueMemberN{Value: strconv.Itoa(1)},
		},
	})
	if err != nil {
		return fmt.Errorf("recording %s missed: %w", region, err)
	}
	return nil
}

// Health reads regions' health (at most statesPerRead regions); a region never recorded is
// left out.
func (s *JobStore) Health(ctx context.Context, regions []string) (map[string]RegionHealth, error) {
	items, err := controlItems[RegionHealth](ctx, s, regions, healthKey, "health")
	if err != nil {
		return nil, err
	}
	out := make(map[string]RegionHealth, len(items))
	for _, h := range items {
		out[h.Region] = h
	}
	return out, nil
}

// SetCordon sets what an operator asks of region (Cordoned, Draining, or "" to admit again), at
// at, by who.
func (s *JobStore) SetCordon(ctx context.Context, region, cordon, who string, at time.Time) error {
	pk, sk := healthKey(region)
	in := &dynamodb.UpdateItemInput{
		TableName: &s.tables.Control, Key: keyOf(pk, sk),
		UpdateExpression:         aws.String("SET #region = :region, cordoned_by = :who, cordoned_at = :at, failures = if_not_exists(failures, :zero), cordon = :cordon"),
		ExpressionAttributeNames: map[string]string{"#region": "region"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":region": &types.AttributeValueMemberS{Value: region},
			":who":    &types.AttributeValueMemberS{Value: who},
			":at":     &types.AttributeValueMemberS{Value: at.UTC().Format(healthTime)},
			":zero":   &types.AttributeValueMemberN{Value: "0"},
			":cordon": &types.AttributeValueMemberS{Value: cordon},
		},
	}
	if cordon == "" {
		in.UpdateExpression = aws.String("SET #region = :region, cordoned_by = :who, cordoned_at = :at, failures = if_not_exists(failures, :zero) REMOVE cordon")
		delete(in.ExpressionAttributeValues, ":cordon")
	}
	if _, err := s.db.UpdateItem(ctx, in); err != nil {
		return fmt.Errorf("setting %s's cordon: %w", region, err)
	}
	return nil
}
