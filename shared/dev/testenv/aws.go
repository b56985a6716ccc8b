package testenv

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dynamo"
)

// AWS is the shared DynamoDB Local and fauxqs.
func AWS(t testing.TB) sandbox.State { return get(t, false) }

// cleanupTimeout bounds the deletes a test's cleanup makes.
const cleanupTimeout = 30 * time.Second

// Tables creates the three Tidegate tables under names only this test uses, and deletes them when
// the test ends.
func Tables(t testing.TB) (dynamo.Tables, *dynamodb.Client) {
	t.Helper()
	st := AWS(t)
	db := st.DynamoDB()
	base := uniq(t, "tg")
	tables := dynamo.Tables{Jobs: base + "-jobs", Events: base + "-events", Control: base + "-control"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := dynamo.CreateTables(ctx, db, tables); err != nil {
		t.Fatalf("creating tables: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		for _, spec := range tables.Specs() {
			_, _ = db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(spec.Name)})
		}
	})
	return tables, db
}

// Queue creates an SQS queue only this test uses and answers its URL; it is deleted at the end.
func Queue(t testing.TB, role string) (string, *sqs.Client) {
	t.Helper()
	st := AWS(t)
	q := st.SQS()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(uniq(t, role))})
	if err != nil {
		t.Fatalf("creating queue %s: %v", role, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		_, _ = q.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: out.QueueUrl})
	})
	return aws.ToString(out.QueueUrl), q
}

// sharedBucket is the one bucket tests share; each test writes under its own prefix.
const sharedBucket = "tidegate-test-sources"

// Bucket answers the shared bucket and a key prefix only this test uses.
func Bucket(t testing.TB) (bucket, prefix string, client *s3.Client) {
	t.Helper()
	st := AWS(t)
	c := st.S3()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(sharedBucket)}); err != nil &&
		!strings.Contains(err.Error(), "BucketAlreadyOwnedByYou") && !strings.Contains(err.Error(), "BucketAlreadyExists") {
		t.Fatalf("creating bucket: %v", err)
	}
	return sharedBucket, uniq(t, "t") + "/", c
}
