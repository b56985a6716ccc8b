package dynamo

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tidegate/tidegate/shared/outbox"
)

// eventRetention is how long an event is kept after it happened: past the webhook retry schedule's
// five days of attempts (issue-level design), with room to read the delivery log afterwards.
const eventRetention = 30 * 24 * time.Hour

// eventItem is an outbox entry. gsi1 holds events not yet fanned out to webhooks
// (gsi1pk "undelivered", gsi1sk <at>#<id>); the webhook worker removes them from it.
type eventItem struct {
	PK      string `dynamodbav:"pk"`
	SK      string `dynamodbav:"sk"`
	GSI1PK  string `dynamodbav:"gsi1pk,omitempty"`
	GSI1SK  string `dynamodbav:"gsi1sk,omitempty"`
	Expires int64  `dynamodbav:"expires_at"`
	outbox.Event
}

// eventPut is the transaction item that writes ev to the outbox, once.
func (t Tables) eventPut(ev outbox.Event) (types.TransactWriteItem, error) {
	item, err := attributevalue.MarshalMap(eventItem{
		PK: "event#" + ev.ID, SK: "event",
		GSI1PK: "undelivered", GSI1SK: ev.At.UTC().Format(outboxTime) + "#" + ev.ID,
		Expires: ev.At.Add(eventRetention).Unix(),
		Event:   ev,
	})
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("encoding event %s: %w", ev.ID, err)
	}
	return types.TransactWriteItem{Put: &types.Put{
		TableName: &t.Events, Item: item, ConditionExpression: ptr("attribute_not_exists(pk)"),
	}}, nil
}

func ptr[T any](v T) *T { return &v }

// OutboxStore reads the outbox for the webhook worker: the events not yet fanned out, oldest
// first, and marks each fanned out once its deliveries exist.
type OutboxStore struct {
	db     *dynamodb.Client
	tables Tables
}

// NewOutboxStore returns a store on the events table.
func NewOutboxStore(db *dynamodb.Client, t Tables) *OutboxStore {
	return &OutboxStore{db: db, tables: t}
}

// outboxTime orders the undelivered index: fixed width, so that text order is time order
// (RFC 3339's nanosecond form drops trailing zeros, and ".1Z" would sort after ".12Z").
const outboxTime = "2006-01-02T15:04:05.000000000Z"

// Undelivered reads up to limit events not yet fanned out, oldest first, after cursor (the last
// position returned); the next cursor is empty at the end. An event past its retention
// (expires_at) is gone to it, as to every read, though DynamoDB's TTL has yet to delete it: its
// deliveries would start after the retry schedule's end.
func (s *OutboxStore) Undelivered(ctx context.Context, limit int, cursor string) ([]outbox.Event, string, error) {
	in := &dynamodb.QueryInput{
		TableName: &s.tables.Events, IndexName: ptr(indexGSI1), KeyConditionExpression: ptr("gsi1pk = :u"),
		FilterExpression: ptr(notExpired),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":u": &types.AttributeValueMemberS{Value: "undelivered"}, ":now": epoch(time.Now()),
		},
		Limit: ptr(int32(limit)),
	}
	if cursor != "" {
		in.ExclusiveStartKey = undeliveredKey(cursor)
	}
	// The filter drops expired events after the read, so a page may hold fewer than limit, even
	// none, with more after it: read on until limit or the end.
	var evs []outbox.Event
	next := ""
	for {
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, "", fmt.Errorf("reading undelivered events: %w", err)
		}
		var items []eventItem
		if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
			return nil, "", fmt.Errorf("decoding undelivered events: %w", err)
		}
		for _, it := range items {
			evs = append(evs, it.Event)
		}
		next = ""
		if sk, ok := out.LastEvaluatedKey[attrGSI1SK].(*types.AttributeValueMemberS); ok {
			next = sk.Value
		}
		if next == "" || len(evs) >= limit {
			return evs, next, nil
		}
		in.ExclusiveStartKey, in.Limit = out.LastEvaluatedKey, ptr(int32(limit-len(evs)))
	}
}

// undeliveredKey is the undelivered index's position of cursor (<at>#<id>).
func undeliveredKey(cursor string) map[string]types.AttributeValue {
	at, id, _ := strings.Cut(cursor, "#")
	return map[string]types.AttributeValue{
		attrPK: &types.AttributeValueMemberS{Value: "event#" + id}, attrSK: &types.AttributeValueMemberS{Value: "event"},
		attrGSI1PK: &types.AttributeValueMemberS{Value: "undelivered"}, attrGSI1SK: &types.AttributeValueMemberS{Value: at + "#" + id},
	}
}

// HasUndelivered reports whether any event is waiting to be fanned out.
func (s *OutboxStore) HasUndelivered(ctx context.Context) (bool, error) {
	evs, _, err := s.Undelivered(ctx, 1, "")
	return len(evs) > 0, err
}

// MarkFannedOut takes event id out of the undelivered index: its deliveries exist.
func (s *OutboxStore) MarkFannedOut(ctx context.Context, id string, at time.Time) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.tables.Events, Key: keyOf("event#"+id, "event"),
		UpdateExpression:          ptr("REMOVE gsi1pk, gsi1sk SET fanned_out_at = :at"),
		ConditionExpression:       ptr("attribute_exists(pk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":at": &types.AttributeValueMemberS{Value: at.UTC().Format(time.RFC3339Nano)}},
	})
	if err != nil && !conditionFailed(err) {
		return fmt.Errorf("marking event %s fanned out: %w", id, err)
	}
	return nil
}
