package devstack

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/handlers"
)

// names are what one stack calls its tables, bucket and queues.
type names struct {
	tables                    dynamo.Tables
	bucket, dispatch, webhook string
}

// namesFor names a stack's resources after prefix; with none, as `tidegate dev` always has.
func namesFor(prefix string) names {
	if prefix == "" {
		return names{tables: devTables, bucket: devBucket, dispatch: devDispatchQueue, webhook: devWebhookQueue}
	}
	return names{
		tables: dynamo.Tables{Jobs: prefix + "-jobs", Events: prefix + "-events", Control: prefix + "-control"},
		bucket: prefix + "-sources", dispatch: prefix + "-dispatch", webhook: prefix + "-webhook",
	}
}

// validPrefix keeps every derived name legal: an S3 bucket name is at most 63 lowercase letters,
// digits and hyphens, and "-sources" takes 8 of them.
var validPrefix = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,54}$`)

// standins answers the stand-ins the stack runs on: those opt.Standins names, shared with other
// processes (with clusters of its own beside them where they have fewer than opt.Clusters:
// withOwnClusters), or ones it starts itself. stop ends what it started, and nothing else.
func standins(ctx context.Context, opt Options, say io.Writer) (st sandbox.State, stop func(), err error) {
	if opt.Standins != nil {
		if opt.Kubeconfig == "" && opt.Standins.Kubeconfig == "" {
			return st, nil, fmt.Errorf("the shared stand-ins have no Kubernetes; start them with --kube, or pass --kubeconfig")
		}
		if opt.Kubeconfig != "" || opt.Clusters <= len(opt.Standins.KubeClusters()) {
			return *opt.Standins, func() {}, nil
		}
		return withOwnClusters(ctx, opt, *opt.Standins, say)
	}
	// DynamoDB Local keeps nothing between runs, so neither does the cluster: every run starts
	// from an empty etcd, not one that remembers objects of jobs the tables no longer know.
	sandboxDir := filepath.Join(opt.Dir, "sandbox")
	if err := os.RemoveAll(sandboxDir); err != nil {
		return st, nil, fmt.Errorf("clearing the last run's sandbox: %w", err)
	}
	sb, err := sandbox.Start(ctx, sandbox.Options{
		Dir:      sandboxDir,
		Kube:     opt.Kubeconfig == "",
		Clusters: opt.Clusters,
		Progress: func(m string) { fmt.Fprintf(say, "tidegate dev: %s\n", m) },
	})
	if err != nil {
		return st, nil, err
	}
	return sb.State, sb.Stop, nil
}

// removeTimeout bounds the deletes when a stack on shared stand-ins stops.
const removeTimeout = 30 * time.Second

// removeResources deletes what createResources made, so a stack that shared another process's
// stand-ins leaves them as it found them. Best effort: the stand-ins may be stopping too.
func removeResources(c handlers.Clients, n names, r resources) {
	ctx, cancel := context.WithTimeout(context.Background(), removeTimeout)
	defer cancel()
	for _, spec := range n.tables.Specs() {
		_, _ = c.DynamoDB.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(spec.Name)})
	}
	// A queue's URL ends in its name, so its dead-letter queue's is the same with "-dlq".
	for _, url := range []string{r.dispatch.url, r.webhook.url, r.dispatch.url + "-dlq", r.webhook.url + "-dlq"} {
		_, _ = c.SQS.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(url)})
	}
	pages := s3.NewListObjectsV2Paginator(c.S3, &s3.ListObjectsV2Input{Bucket: aws.String(n.bucket)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			break
		}
		for _, o := range page.Contents {
			_, _ = c.S3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(n.bucket), Key: o.Key})
		}
	}
	_, _ = c.S3.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(n.bucket)})
}
