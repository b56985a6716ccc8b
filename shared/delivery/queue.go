package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/tidegate/tidegate/shared/dynamo"
)

// Message is the body of a webhook queue message. It says "fan out the outbox" (Drain, or a ring
// naming the event just written) or "attempt this delivery" (WebhookID and DeliveryID). The queue
// only wakes the worker: the outbox and the deliveries are in DynamoDB.
type Message struct {
	Drain      bool   `json:"drain,omitempty"`
	EventID    string `json:"event_id,omitempty"`
	WebhookID  string `json:"webhook_id,omitempty"`
	DeliveryID string `json:"delivery_id,omitempty"`
}

// MaxQueueDelay is the longest wait SQS holds a message for (DelaySeconds ≤ 900). A retry due
// later waits in the delivery's due index, where the reconcile sweep finds it.
const MaxQueueDelay = 15 * time.Minute

// sendBatch is SQS's most entries in one SendMessageBatch.
const sendBatch = 10

// Sender is the SQS calls a Queue makes.
type Sender interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, opts ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
	SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, opts ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
}

// Queue rings the webhook queue.
type Queue struct {
	sqs Sender
	url string
}

// NewQueue returns the ringer for the webhook queue at url.
func NewQueue(s Sender, url string) *Queue { return &Queue{sqs: s, url: url} }

// RingDrain asks the webhook function to fan out the outbox now. A lost ring costs at most one
// reconcile beat: the sweep rings while any event waits.
func (q *Queue) RingDrain(ctx context.Context) error {
	body, _ := json.Marshal(Message{Drain: true})
	if _, err := q.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &q.url, MessageBody: aws.String(string(body))}); err != nil {
		return fmt.Errorf("ringing the webhook queue: %w", err)
	}
	return nil
}

// Send asks for an attempt of each delivery after delay (at most MaxQueueDelay).
func (q *Queue) Send(ctx context.Context, delay time.Duration, refs ...dynamo.DeliveryRef) error {
	secs := int32(math.Ceil(min(max(delay, 0), MaxQueueDelay).Seconds()))
	var errs []error
	for start := 0; start < len(refs); start += sendBatch {
		chunk := refs[start:min(start+sendBatch, len(refs))]
		entries := make([]types.SendMessageBatchRequestEntry, 0, len(chunk))
		for i, ref := range chunk {
			body, _ := json.Marshal(Message{WebhookID: ref.WebhookID, DeliveryID: ref.DeliveryID})
			entries = append(entries, types.SendMessageBatchRequestEntry{
				Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(string(body)), DelaySeconds: secs,
			})
		}
		out, err := q.sqs.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &q.url, Entries: entries})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, f := range out.Failed {
			errs = append(errs, fmt.Errorf("entry %s: %s", aws.ToString(f.Id), aws.ToString(f.Message)))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("queueing %d deliveries: %w", len(refs), err)
	}
	return nil
}
