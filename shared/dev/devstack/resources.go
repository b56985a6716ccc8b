package devstack

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/handlers"
)

// The dev stack's resources, named as template.yaml's would be in a stack called "tidegate".
var devTables = dynamo.Tables{Jobs: "tidegate-jobs", Events: "tidegate-events", Control: "tidegate-control"}

const (
	devBucket        = "tidegate-sources"
	devDispatchQueue = "tidegate-dispatch"
	devWebhookQueue  = "tidegate-webhook"
	// The same rules as template.yaml: five receives before a message is dead-lettered, and a
	// visibility of six times the function's timeout (30 s in dev, as in the template).
	devMaxReceives = 5
	devVisibility  = 6 * 30
)

// queue is one created queue: its URL and ARN (the ARN goes on events, as Lambda's mapping sets it).
type queue struct{ url, arn string }

// resources are what `tidegate dev` made for the functions.
type resources struct {
	dispatch, webhook queue
}

func createResources(ctx context.Context, c handlers.Clients, n names) (resources, error) {
	var r resources
	if err := dynamo.CreateTables(ctx, c.DynamoDB, n.tables); err != nil {
		return r, err
	}
	_, err := c.S3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(n.bucket)})
	if err != nil && !strings.Contains(err.Error(), "BucketAlreadyOwnedByYou") {
		return r, fmt.Errorf("creating bucket %s: %w", n.bucket, err)
	}
	if r.dispatch, err = createQueueWithDLQ(ctx, c.SQS, n.dispatch); err != nil {
		return r, err
	}
	if r.webhook, err = createQueueWithDLQ(ctx, c.SQS, n.webhook); err != nil {
		return r, err
	}
	return r, nil
}

func createQueueWithDLQ(ctx context.Context, q *sqs.Client, name string) (queue, error) {
	dlq, err := createQueue(ctx, q, name+"-dlq", nil)
	if err != nil {
		return queue{}, err
	}
	redrive := fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":"%d"}`, dlq.arn, devMaxReceives)
	return createQueue(ctx, q, name, map[string]string{
		string(sqstypes.QueueAttributeNameRedrivePolicy):     redrive,
		string(sqstypes.QueueAttributeNameVisibilityTimeout): strconv.Itoa(devVisibility),
	})
}

func createQueue(ctx context.Context, q *sqs.Client, name string, attrs map[string]string) (queue, error) {
	out, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		return queue{}, fmt.Errorf("creating queue %s: %w", name, err)
	}
	got, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: out.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn},
	})
	if err != nil {
		return queue{}, fmt.Errorf("reading queue %s's ARN: %w", name, err)
	}
	return queue{url: aws.ToString(out.QueueUrl), arn: got.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]}, nil
}
