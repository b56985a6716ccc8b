package dynamo

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
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
		GSI1PK: "undelivered", GSI1SK: ev.At.UTC().Format(time.RFC3339Nano) + "#" + ev.ID,
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
