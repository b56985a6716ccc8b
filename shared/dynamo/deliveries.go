package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tidegate/tidegate/shared/deliveryplan"
	"github.com/tidegate/tidegate/shared/records"
)

// Deliveries live in the events table beside the events they carry: a webhook's log is one Query
// (pk hook#<webhook>), and every pending delivery is in gsi1's "due" partition.

// deliveryRetention is how long a delivery stays in the log after its last change: the events'
// own retention, so the log outlives the retry schedule's five days with weeks to read it.
const deliveryRetention = eventRetention

// deliveryDuePartition holds every pending delivery in the events table's gsi1, sorted by when it next
// needs a worker: its next attempt, or the end of the claim of an attempt under way.
const deliveryDuePartition = "due"

type deliveryItem struct {
	PK     string `dynamodbav:"pk"`
	SK     string `dynamodbav:"sk"`
	GSI1PK string `dynamodbav:"gsi1pk,omitempty"`
	GSI1SK string `dynamodbav:"gsi1sk,omitempty"`
	// NextMS is NextAttemptAt in epoch milliseconds, for the claim's condition.
	NextMS int64 `dynamodbav:"next_ms,omitempty"`
	// A claim is the right to make attempt AttemptCount+1, until ClaimUntilMS.
	ClaimToken   string `dynamodbav:"claim_token,omitempty"`
	ClaimUntilMS int64  `dynamodbav:"claim_until_ms,omitempty"`
	Expires      int64  `dynamodbav:"expires_at"`
	deliveryplan.Delivery
}

// DeliveryRef names a delivery: what a worker is handed.
type DeliveryRef struct {
	WebhookID  string `json:"webhook_id" dynamodbav:"webhook_id"`
	DeliveryID string `json:"delivery_id" dynamodbav:"id"`
}

func deliveryKey(webhookID, id string) (string, string) { return "hook#" + webhookID, "msg#" + id }

// dueKey sorts by time in a fixed-width form, so string order is time order.
func deliveryDueKey(at time.Time, id string) string {
	return at.UTC().Format("2006-01-02T15:04:05.000Z") + "#" + id
}

// toDeliveryItem encodes d; a pending delivery takes its place in the due index at its next attempt.
func toDeliveryItem(d deliveryplan.Delivery) (map[string]types.AttributeValue, error) {
	pk, sk := deliveryKey(d.WebhookID, d.ID)
	it := deliveryItem{PK: pk, SK: sk, Expires: d.UpdatedAt.Add(deliveryRetention).Unix(), Delivery: d}
	if d.Status == deliveryplan.StatusPending && d.NextAttemptAt != nil {
		it.GSI1PK, it.GSI1SK, it.NextMS = deliveryDuePartition, deliveryDueKey(*d.NextAttemptAt, d.ID), d.NextAttemptAt.UnixMilli()
	}
	item, err := attributevalue.MarshalMap(it)
	if err != nil {
		return nil, fmt.Errorf("encoding delivery %s: %w", d.ID, err)
	}
	return item, nil
}

func decodeDelivery(item map[string]types.AttributeValue) (deliveryplan.Delivery, error) {
	var it deliveryItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return deliveryplan.Delivery{}, fmt.Errorf("decoding delivery: %w", err)
	}
	return it.Delivery, nil
}

// CreateDelivery stores d unless a delivery of the same event to the same webhook exists; it
// answers whether this call made it, so only one of two fan-outs of an event rings for it.
func (s *WebhookStore) CreateDelivery(ctx context.Context, d deliveryplan.Delivery) (bool, error) {
	item, err := toDeliveryItem(d)
	if err != nil {
		return false, err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.tables.Events, Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)")})
	if conditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("storing delivery %s: %w", d.ID, err)
	}
	return true, nil
}

// Stored answers which of ds are stored already (by id): read in BatchGetItems of statesPerRead
// keys, a few at once.
func (s *WebhookStore) Stored(ctx context.Context, ds []deliveryplan.Delivery) (map[string]bool, error) {
	type stored struct {
		ID string `dynamodbav:"id"`
	}
	found, err := inChunks(ds, statesPerRead, func(chunk []deliveryplan.Delivery) ([]stored, error) {
		keys := make([]map[string]types.AttributeValue, len(chunk))
		for i, d := range chunk {
			keys[i] = keyOf(deliveryKey(d.WebhookID, d.ID))
		}
		return batchGet[stored](ctx, s.db, s.tables.Events, keys, types.KeysAndAttributes{
			ConsistentRead: aws.Bool(true), ProjectionExpression: aws.String("id"),
		})
	})
	if err != nil {
		return nil, fmt.Errorf("reading %d deliveries: %w", len(ds), err)
	}
	out := make(map[string]bool, len(found))
	for _, f := range found {
		out[f.ID] = true
	}
	return out, nil
}

// Delivery reads one delivery of webhookID; records.ErrNotFound if there is none, or if it is
// past its retention (expires_at) and only waits for DynamoDB's TTL to delete it.
func (s *WebhookStore) Delivery(ctx context.Context, webhookID, id string) (deliveryplan.Delivery, error) {
	pk, sk := deliveryKey(webhookID, id)
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.tables.Events, Key: keyOf(pk, sk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return deliveryplan.Delivery{}, fmt.Errorf("reading delivery %s: %w", id, err)
	}
	if out.Item == nil {
		return deliveryplan.Delivery{}, records.ErrNotFound
	}
	var it deliveryItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return deliveryplan.Delivery{}, fmt.Errorf("decoding delivery: %w", err)
	}
	if expired(it.Expires, time.Now()) {
		return deliveryplan.Delivery{}, records.ErrNotFound
	}
	return it.Delivery, nil
}

// Deliveries lists webhookID's deliveries newest first, limit at most, after cursor (the last
// delivery id returned), leaving out those past their retention.
func (s *WebhookStore) Deliveries(ctx context.Context, webhookID string, limit int, cursor string) ([]deliveryplan.Delivery, string, error) {
	pk, _ := deliveryKey(webhookID, "")
	in := &dynamodb.QueryInput{
		TableName: &s.tables.Events, KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :msg)"),
		FilterExpression: aws.String(notExpired),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: pk}, ":msg": &types.AttributeValueMemberS{Value: "msg#"},
			":now": epoch(time.Now()),
		},
		ScanIndexForward: aws.Bool(false), Limit: aws.Int32(int32(limit + 1)),
	}
	if cursor != "" {
		_, sk := deliveryKey(webhookID, cursor)
		in.ExclusiveStartKey = keyOf(pk, sk)
	}
	ds := []deliveryplan.Delivery{}
	// The filter applies after the read: a page may hold fewer than asked with more after it.
	p := dynamodb.NewQueryPaginator(s.db, in)
	for p.HasMorePages() && len(ds) <= limit {
		out, err := p.NextPage(ctx)
		if err != nil {
			return nil, "", fmt.Errorf("listing webhook %s's deliveries: %w", webhookID, err)
		}
		for _, item := range out.Items {
			d, err := decodeDelivery(item)
			if err != nil {
				return nil, "", err
			}
			ds = append(ds, d)
		}
	}
	ds, next := cut(ds, limit, func(d deliveryplan.Delivery) string { return d.ID })
	return ds, next, nil
}

// Claim takes the right to make d's next attempt until `until`, if d is still pending with the
// attempts it had when read, due by `due`, and unclaimed or its claim has run out. It answers the
// delivery as claimed; records.ErrStale if another worker has it or it moved on. A claim that runs out
// (its worker died) keeps the delivery in the due index, so the sweep finds it again.
func (s *WebhookStore) Claim(ctx context.Context, d deliveryplan.Delivery, token string, now, due, until time.Time) (deliveryplan.Delivery, error) {
	pk, sk := deliveryKey(d.WebhookID, d.ID)
	vals, err := attributevalue.MarshalMap(map[string]any{
		":tok": token, ":until": until.UnixMilli(), ":now": now.UnixMilli(), ":due": due.UnixMilli(),
		":pending": deliveryplan.StatusPending, ":n": d.AttemptCount, ":sk": deliveryDueKey(until, d.ID),
	})
	if err != nil {
		return d, err
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.tables.Events, Key: keyOf(pk, sk),
		UpdateExpression: aws.String("SET claim_token = :tok, claim_until_ms = :until, gsi1sk = :sk"),
		ConditionExpression: aws.String("#status = :pending AND attempt_count = :n AND next_ms <= :due AND " +
			"(attribute_not_exists(claim_until_ms) OR claim_until_ms < :now)"),
		ExpressionAttributeNames:  map[string]string{"#status": "status"},
		ExpressionAttributeValues: vals, ReturnValues: types.ReturnValueAllNew,
	})
	if conditionFailed(err) {
		return d, records.ErrStale
	}
	if err != nil {
		return d, fmt.Errorf("claiming delivery %s: %w", d.ID, err)
	}
	return decodeDelivery(out.Attributes)
}

// Record writes d as its attempt left it, if the claim token is still the delivery's: the claim
// ends, and a pending delivery takes its place in the due index at its next attempt.
func (s *WebhookStore) Record(ctx context.Context, d deliveryplan.Delivery, token string) error {
	return s.replace(ctx, d, "claim_token = :tok", map[string]any{":tok": token})
}

// Replace writes d over the stored delivery (a redelivery, or an end without an attempt) if the
// stored one still has prevAttempts attempts and no attempt is under way at now; records.ErrStale if not.
func (s *WebhookStore) Replace(ctx context.Context, d deliveryplan.Delivery, prevAttempts int, now time.Time) error {
	return s.replace(ctx, d, "attempt_count = :n AND (attribute_not_exists(claim_until_ms) OR claim_until_ms < :now)",
		map[string]any{":n": prevAttempts, ":now": now.UnixMilli()})
}

func (s *WebhookStore) replace(ctx context.Context, d deliveryplan.Delivery, cond string, vals map[string]any) error {
	item, err := toDeliveryItem(d)
	if err != nil {
		return err
	}
	av, err := attributevalue.MarshalMap(vals)
	if err != nil {
		return err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &s.tables.Events, Item: item, ConditionExpression: &cond, ExpressionAttributeValues: av,
	})
	if conditionFailed(err) {
		return records.ErrStale
	}
	if err != nil {
		return fmt.Errorf("writing delivery %s: %w", d.ID, err)
	}
	return nil
}

// Due lists up to limit pending deliveries whose next attempt, or whose claim's end, is before
// `before`: those whose queue message was lost, whose wait was too long for the queue, or whose
// worker died.
func (s *WebhookStore) Due(ctx context.Context, before time.Time, limit int) ([]DeliveryRef, error) {
	in := &dynamodb.QueryInput{
		TableName: &s.tables.Events, IndexName: aws.String(indexGSI1),
		KeyConditionExpression: aws.String("gsi1pk = :due AND gsi1sk < :before"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":due": &types.AttributeValueMemberS{Value: deliveryDuePartition}, ":before": &types.AttributeValueMemberS{Value: deliveryDueKey(before, "")},
		},
		ProjectionExpression: aws.String("webhook_id, id"),
	}
	var out []DeliveryRef
	for p := dynamodb.NewQueryPaginator(s.db, in); p.HasMorePages() && len(out) < limit; {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading due deliveries: %w", err)
		}
		var refs []DeliveryRef
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &refs); err != nil {
			return nil, fmt.Errorf("decoding due deliveries: %w", err)
		}
		out = append(out, refs...)
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// MaxTransactItems is the most items one DynamoDB transaction may write.
const MaxTransactItems = 100

// EventDeliveries is one outbox event and the deliveries its fan-out makes, none if no webhook
// wants it.
type EventDeliveries struct {
	EventID    string
	Deliveries []deliveryplan.Delivery
}

// RecordSent writes, in one transaction of at most MaxTransactItems items and MaxTransactBytes,
// deliveries a drain has attempted, each as its attempt left it and none stored before, and takes
// the events out of the outbox's undelivered index at `at`. If one of the deliveries is stored
// already, or an event has left the index, another fan-out got there first: nothing is written,
// and it answers records.ErrStale.
func (s *WebhookStore) RecordSent(ctx context.Context, ds []deliveryplan.Delivery, events []string, at time.Time) error {
	if n := len(ds) + len(events); n > MaxTransactItems {
		return fmt.Errorf("recording %d deliveries and %d events: %d items, more than a transaction's %d", len(ds), len(events), n, MaxTransactItems)
	}
	items := make([]types.TransactWriteItem, 0, len(ds)+len(events))
	size := len(events) * EventMarkBytes
	for _, d := range ds {
		item, err := toDeliveryItem(d)
		if err != nil {
			return err
		}
		size += DeliveryBytes(d)
		items = append(items, types.TransactWriteItem{Put: &types.Put{
			TableName: &s.tables.Events, Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)"),
		}})
	}
	if size > MaxTransactBytes {
		return fmt.Errorf("recording %d deliveries: about %d bytes, more than a transaction takes", len(ds), size)
	}
	for _, id := range events {
		// The event item is the one eventPut writes; its gsi1 entry is the undelivered index.
		items = append(items, types.TransactWriteItem{Update: &types.Update{
			TableName: &s.tables.Events, Key: keyOf("event#"+id, "event"),
			UpdateExpression:    aws.String("REMOVE gsi1pk, gsi1sk SET fanned_out_at = :at"),
			ConditionExpression: aws.String("gsi1pk = :u"),
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":at": &types.AttributeValueMemberS{Value: at.UTC().Format(time.RFC3339Nano)},
				":u":  &types.AttributeValueMemberS{Value: "undelivered"},
			},
		}})
	}
	if len(items) == 0 {
		return nil
	}
	_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if anyConditionFailed(err) {
		return records.ErrStale
	}
	if err != nil {
		return fmt.Errorf("recording %d deliveries and %d events: %w", len(ds), len(events), err)
	}
	return nil
}

// drainLease is the lease a fan-out of the outbox holds: one at a time, so that a webhook's
// events are sent in the order they happened.
const drainLease = "webhook-drain"

// TakeDrain takes the outbox's fan-out for owner until `until`; false, with no error, when
// another worker has it.
func (s *WebhookStore) TakeDrain(ctx context.Context, owner string, now, until time.Time) (bool, error) {
	return NewLeaseStore(s.db, s.tables.Control).Acquire(ctx, drainLease, owner, now, until)
}

// ReleaseDrain lets the outbox's fan-out go, if owner still has it.
func (s *WebhookStore) ReleaseDrain(ctx context.Context, owner string) error {
	return NewLeaseStore(s.db, s.tables.Control).Release(ctx, drainLease, owner)
}

// MaxTransactBytes keeps a transaction of deliveries under DynamoDB's 4 MB per transaction, with
// room for each item's attributes besides its payload.
const MaxTransactBytes = 3 << 20

// DeliveryBytes is about what d takes in a transaction: its payload and, generously, the rest.
func DeliveryBytes(d deliveryplan.Delivery) int { return len(d.Payload) + 2<<10 }

// EventMarkBytes is about what taking an event out of the undelivered index takes in a transaction.
const EventMarkBytes = 1 << 10
