package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// TestAWSStandIns starts DynamoDB Local, fauxqs and local-kms as Start would, drives each with the real SDK
// clients in the ways Tidegate uses them, and checks Stop leaves nothing running.
func TestAWSStandIns(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := &Sandbox{dir: t.TempDir()}
	t.Cleanup(s.Stop)
	for _, st := range []struct {
		name  string
		start func(context.Context, *Sandbox) error
	}{{"startDynamoDB", startDynamoDB}, {"startFauxqs", startFauxqs}, {"startKMS", startKMS}} {
		began := time.Now()
		if err := st.start(ctx, s); err != nil {
			if errors.Is(err, errNotInstalled) {
				t.Skipf("%s: %v", st.name, err)
			}
			t.Fatalf("%s: %v", st.name, err)
		}
		t.Logf("%s: ready in %s", st.name, time.Since(began).Round(time.Millisecond))
	}

	t.Run("DynamoDB", func(t *testing.T) { testDynamoDB(ctx, t, s.DynamoDB()) })
	t.Run("SQS", func(t *testing.T) { testSQS(ctx, t, s.SQS()) })
	t.Run("S3", func(t *testing.T) { testS3(ctx, t, s.S3()) })
	t.Run("KMS", func(t *testing.T) { testKMS(ctx, t, s.KMS()) })

	procs := append([]*process(nil), s.procs...)
	endpoints := []string{s.DynamoDBEndpoint, s.AWSEndpoint, s.KMSEndpoint}
	s.Stop()
	for _, p := range procs {
		if !p.exited() {
			t.Errorf("after Stop, %s (pid %d) has not exited", p.name, p.cmd.Process.Pid)
		}
		// Each server leads its own process group; ESRCH means no member of it is left.
		if err := syscall.Kill(-p.cmd.Process.Pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("after Stop, signalling %s's process group: got %v, want ESRCH", p.name, err)
		}
	}
	for _, e := range endpoints {
		if c, err := net.DialTimeout("tcp", strings.TrimPrefix(e, "http://"), time.Second); err == nil {
			c.Close()
			t.Errorf("after Stop, %s still accepts connections", e)
		}
	}
}

// testDynamoDB exercises what the job store relies on: a GSI, a transaction whose condition
// guards the job and its outbox entry together, and TTL.
func testDynamoDB(ctx context.Context, t *testing.T, db *dynamodb.Client) {
	const table = "jobs"
	_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   aws.String(table),
		BillingMode: ddbtypes.BillingModePayPerRequest,
		AttributeDefinitions: []ddbtypes.AttributeDefinition{
			{AttributeName: aws.String("pk"), AttributeType: ddbtypes.ScalarAttributeTypeS},
			{AttributeName: aws.String("status"), AttributeType: ddbtypes.ScalarAttributeTypeS},
			{AttributeName: aws.String("created"), AttributeType: ddbtypes.ScalarAttributeTypeN},
		},
		KeySchema: []ddbtypes.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: ddbtypes.KeyTypeHash}},
		GlobalSecondaryIndexes: []ddbtypes.GlobalSecondaryIndex{{
			IndexName: aws.String("by-status"),
			KeySchema: []ddbtypes.KeySchemaElement{
				{AttributeName: aws.String("status"), KeyType: ddbtypes.KeyTypeHash},
				{AttributeName: aws.String("created"), KeyType: ddbtypes.KeyTypeRange},
			},
			Projection: &ddbtypes.Projection{ProjectionType: ddbtypes.ProjectionTypeAll},
		}},
	})
	if err != nil {
		t.Fatalf("CreateTable %s: %v", table, err)
	}

	// A fresh input each time: the SDK fills ClientRequestToken into the input it is given, and
	// DynamoDB answers a repeated token as an idempotent retry, with success, not a condition check.
	enqueue := func() *dynamodb.TransactWriteItemsInput {
		return &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
			{Put: &ddbtypes.Put{
				TableName:           aws.String(table),
				Item:                item("pk", "job#1", "status", "queued", "created", 1),
				ConditionExpression: aws.String("attribute_not_exists(pk)"),
			}},
			{Put: &ddbtypes.Put{
				TableName: aws.String(table),
				Item:      item("pk", "outbox#1", "job", "job#1"),
			}},
		}}
	}
	first := enqueue()
	if _, err := db.TransactWriteItems(ctx, first); err != nil {
		t.Fatalf("TransactWriteItems job#1 and its outbox entry: %v", err)
	}
	_, err = db.TransactWriteItems(ctx, enqueue())
	var canceled *ddbtypes.TransactionCanceledException
	if !errors.As(err, &canceled) {
		t.Fatalf("TransactWriteItems job#1 again: got %v, want TransactionCanceledException", err)
	}
	if got := aws.ToString(canceled.CancellationReasons[0].Code); got != "ConditionalCheckFailed" {
		t.Errorf("TransactWriteItems job#1 again: first cancellation reason %q, want ConditionalCheckFailed", got)
	}

	q, err := db.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(table),
		IndexName:                 aws.String("by-status"),
		KeyConditionExpression:    aws.String("#s = :s"),
		ExpressionAttributeNames:  map[string]string{"#s": "status"},
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":s": &ddbtypes.AttributeValueMemberS{Value: "queued"}},
	})
	if err != nil {
		t.Fatalf("Query by-status queued: %v", err)
	}
	if len(q.Items) != 1 || q.Items[0]["pk"].(*ddbtypes.AttributeValueMemberS).Value != "job#1" {
		t.Errorf("Query by-status queued: got %d items %v, want job#1 alone", len(q.Items), q.Items)
	}

	if _, err := db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName:               aws.String(table),
		TimeToLiveSpecification: &ddbtypes.TimeToLiveSpecification{AttributeName: aws.String("expires"), Enabled: aws.Bool(true)},
	}); err != nil {
		t.Fatalf("UpdateTimeToLive %s: %v", table, err)
	}
	ttl, err := db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatalf("DescribeTimeToLive %s: %v", table, err)
	}
	if d := ttl.TimeToLiveDescription; d.TimeToLiveStatus != ddbtypes.TimeToLiveStatusEnabled || aws.ToString(d.AttributeName) != "expires" {
		t.Errorf("DescribeTimeToLive %s: got %s on %q, want ENABLED on \"expires\"", table, d.TimeToLiveStatus, aws.ToString(d.AttributeName))
	}
}

// item builds a DynamoDB item from name, value pairs of strings and ints.
func item(kv ...any) map[string]ddbtypes.AttributeValue {
	m := make(map[string]ddbtypes.AttributeValue, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		switch v := kv[i+1].(type) {
		case string:
			m[kv[i].(string)] = &ddbtypes.AttributeValueMemberS{Value: v}
		case int:
			m[kv[i].(string)] = &ddbtypes.AttributeValueMemberN{Value: fmt.Sprint(v)}
		default:
			panic(fmt.Sprintf("item: unsupported value %T", v))
		}
	}
	return m
}

// testSQS exercises a work queue with a dead-letter queue: the redrive policy is kept, a message
// is sent, received and deleted, and one received too often moves to the DLQ.
func testSQS(ctx context.Context, t *testing.T, q *sqs.Client) {
	dlq, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("work-dlq")})
	if err != nil {
		t.Fatalf("CreateQueue work-dlq: %v", err)
	}
	attrs, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       dlq.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn},
	})
	if err != nil {
		t.Fatalf("GetQueueAttributes work-dlq: %v", err)
	}
	dlqARN := attrs.Attributes["QueueArn"]
	redrive := fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":"1"}`, dlqARN)
	work, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{
		QueueName:  aws.String("work"),
		Attributes: map[string]string{"RedrivePolicy": redrive},
	})
	if err != nil {
		t.Fatalf("CreateQueue work with RedrivePolicy %s: %v", redrive, err)
	}
	attrs, err = q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       work.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameRedrivePolicy},
	})
	if err != nil {
		t.Fatalf("GetQueueAttributes work: %v", err)
	}
	if got := attrs.Attributes["RedrivePolicy"]; dlqARN == "" || !strings.Contains(got, dlqARN) {
		t.Errorf("GetQueueAttributes work: RedrivePolicy %q, want one naming the DLQ %q", got, dlqARN)
	}

	if _, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: work.QueueUrl, MessageBody: aws.String("job#1")}); err != nil {
		t.Fatalf("SendMessage job#1: %v", err)
	}
	m := receiveOne(ctx, t, q, work.QueueUrl, "job#1")
	if _, err := q.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: work.QueueUrl, ReceiptHandle: m.ReceiptHandle}); err != nil {
		t.Fatalf("DeleteMessage job#1: %v", err)
	}

	// With maxReceiveCount 1, a message received once and let go is dead-lettered on the next
	// receive instead of being delivered a second time.
	if _, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: work.QueueUrl, MessageBody: aws.String("poison")}); err != nil {
		t.Fatalf("SendMessage poison: %v", err)
	}
	m = receiveOne(ctx, t, q, work.QueueUrl, "poison")
	if _, err := q.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl: work.QueueUrl, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0,
	}); err != nil {
		t.Fatalf("ChangeMessageVisibility poison to 0: %v", err)
	}
	again, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: work.QueueUrl, WaitTimeSeconds: 1})
	if err != nil {
		t.Fatalf("ReceiveMessage work after poison: %v", err)
	}
	if len(again.Messages) != 0 {
		t.Errorf("ReceiveMessage work after poison: got %q, want nothing (moved to the DLQ)", aws.ToString(again.Messages[0].Body))
	}
	receiveOne(ctx, t, q, dlq.QueueUrl, "poison")
}

// receiveOne long-polls url for one message and checks its body.
func receiveOne(ctx context.Context, t *testing.T, q *sqs.Client, url *string, want string) sqstypes.Message {
	t.Helper()
	out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url, WaitTimeSeconds: 5, MaxNumberOfMessages: 1})
	if err != nil {
		t.Fatalf("ReceiveMessage %s: %v", aws.ToString(url), err)
	}
	if len(out.Messages) != 1 || aws.ToString(out.Messages[0].Body) != want {
		t.Fatalf("ReceiveMessage %s: got %d messages %+v, want one %q", aws.ToString(url), len(out.Messages), out.Messages, want)
	}
	return out.Messages[0]
}

// testS3 exercises what artifacts need: a bucket, an object written and read back, a presigned
// GET that a plain HTTP client can follow, and a typed 404 for a missing key.
func testS3(ctx context.Context, t *testing.T, c *s3.Client) {
	const bucket, key, body = "artifacts", "runs/1/out.txt", "hello from the sandbox"
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("CreateBucket %s: %v", bucket, err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(body),
		ContentType: aws.String("text/plain"),
	}); err != nil {
		t.Fatalf("PutObject %s/%s: %v", bucket, key, err)
	}
	got, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("GetObject %s/%s: %v", bucket, key, err)
	}
	b, err := io.ReadAll(got.Body)
	got.Body.Close()
	if err != nil || string(b) != body {
		t.Errorf("GetObject %s/%s: got %q (%v), want %q", bucket, key, b, err, body)
	}

	signed, err := s3.NewPresignClient(c).PresignGetObject(ctx,
		&s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)},
		s3.WithPresignExpires(5*time.Minute))
	if err != nil {
		t.Fatalf("PresignGetObject %s/%s: %v", bucket, key, err)
	}
	req, err := http.NewRequestWithContext(ctx, signed.Method, signed.URL, nil)
	if err != nil {
		t.Fatalf("presigned GET %s: %v", signed.URL, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("presigned GET %s: %v", signed.URL, err)
	}
	b, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || err != nil || string(b) != body {
		t.Errorf("presigned GET %s: got %d %q (%v), want 200 %q", signed.URL, resp.StatusCode, b, err, body)
	}

	_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("runs/1/missing")})
	var notFound *s3types.NotFound
	if !errors.As(err, &notFound) {
		t.Errorf("HeadObject of a missing key: got %v, want *types.NotFound", err)
	}
}

// testKMS exercises what shared/keyring relies on: a data key made under a key with an encryption
// context unwraps with that context and with no other.
func testKMS(ctx context.Context, t *testing.T, c *kms.Client) {
	key, err := c.CreateKey(ctx, &kms.CreateKeyInput{})
	if err != nil {
		t.Fatalf("CreateKey: %v", err)
	}
	if arn := aws.ToString(key.KeyMetadata.Arn); !strings.HasPrefix(arn, "arn:aws:kms:"+sandboxRegion+":"+sandboxAccount+":key/") {
		t.Errorf("key ARN %s, want one in %s and account %s", arn, sandboxRegion, sandboxAccount)
	}
	owner := map[string]string{"tidegate:owner": "org/a"}
	dk, err := c.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{KeyId: key.KeyMetadata.Arn, NumberOfBytes: aws.Int32(32), EncryptionContext: owner})
	if err != nil || len(dk.Plaintext) != 32 {
		t.Fatalf("GenerateDataKey = %v; want 32 bytes", err)
	}
	out, err := c.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: dk.CiphertextBlob, EncryptionContext: owner, KeyId: key.KeyMetadata.Arn})
	if err != nil || string(out.Plaintext) != string(dk.Plaintext) {
		t.Errorf("Decrypt with the same context = %v; want the data key", err)
	}
	if _, err := c.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: dk.CiphertextBlob, EncryptionContext: map[string]string{"tidegate:owner": "org/b"}}); err == nil {
		t.Errorf("Decrypt with another owner's context succeeded")
	}
}
