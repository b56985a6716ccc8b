// Package wake rings the dispatch queue: one SQS message says "look at this region's queued jobs".
// The message carries no job; DynamoDB is the queue, SQS only wakes the worker.
package wake

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// Message is the dispatch queue's body; dispatch.Wake reads the same JSON.
type Message struct {
	Region string `json:"region"`
}

// Sender is the one SQS call a Ringer makes.
type Sender interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, opts ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

// Ringer rings one queue.
type Ringer struct {
	sqs      Sender
	queueURL string
}

// New returns a Ringer for the dispatch queue at queueURL.
func New(s Sender, queueURL string) *Ringer { return &Ringer{sqs: s, queueURL: queueURL} }

// Ring asks the dispatch function to look at region now. A lost ring delays a job by at most one
// reconcile beat, whose sweep rings every region with queued jobs.
func (r *Ringer) Ring(ctx context.Context, region string) error {
	body, err := json.Marshal(Message{Region: region})
	if err != nil {
		return err
	}
	s := string(body)
	if _, err := r.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &r.queueURL, MessageBody: &s}); err != nil {
		return fmt.Errorf("ringing dispatch for %s: %w", region, err)
	}
	return nil
}
