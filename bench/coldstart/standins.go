package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dynamo"
)

// cleanupTimeout bounds deleting the run's tables and queues from stand-ins others may share.
const cleanupTimeout = 30 * time.Second

// resources are the run's own tables, queues and apps namespace, named after this process so
// that runs sharing stand-ins never meet.
type resources struct {
	tables        dynamo.Tables
	queues        map[string]string // role → URL
	appsNamespace string            // never created: the beat finds no hosts in it
	kmsKey        string            // the ARN of a key in local-kms, for the functions' keyring
	remove        func()
}

func createResources(ctx context.Context, st sandbox.State) (resources, error) {
	db, q := st.DynamoDB(), st.SQS()
	base := fmt.Sprintf("coldstart-%d", os.Getpid())
	r := resources{
		tables:        dynamo.Tables{Jobs: base + "-jobs", Events: base + "-events", Control: base + "-control"},
		queues:        map[string]string{},
		appsNamespace: base,
	}
	r.remove = func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		for _, spec := range r.tables.Specs() {
			_, _ = db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(spec.Name)})
		}
		for _, url := range r.queues {
			_, _ = q.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(url)})
		}
	}
	if err := dynamo.CreateTables(ctx, db, r.tables); err != nil {
		r.remove()
		return r, fmt.Errorf("creating tables: %w", err)
	}
	if st.KMSEndpoint == "" {
		r.remove()
		return r, fmt.Errorf("the stand-ins have no local-kms (a sandbox started before it was added); restart them")
	}
	key, err := st.KMS().CreateKey(ctx, &kms.CreateKeyInput{Description: aws.String("tidegate cold start benchmark " + base)})
	if err != nil {
		r.remove()
		return r, fmt.Errorf("creating a KMS key: %w", err)
	}
	r.kmsKey = aws.ToString(key.KeyMetadata.Arn)
	for _, role := range []string{"dispatch", "webhook"} {
		out, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(base + "-" + role)})
		if err != nil {
			r.remove()
			return r, fmt.Errorf("creating queue %s: %w", role, err)
		}
		r.queues[role] = aws.ToString(out.QueueUrl)
	}
	return r, nil
}

// functionEnv is the whole environment of the emulator and the functions: the settings
// shared/config requires and the KMS key, DynamoDB and SQS on the stand-ins, every other
// endpoint on a loopback port nobody serves, and static credentials so the SDK reads nothing of
// this machine's AWS setup. A target adds what only it needs (targetEnv).
func functionEnv(home string, st sandbox.State, r resources) []string {
	dead := "http://" + freeAddr()
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=AKIDTIDEGATEBENCH",
		"AWS_SECRET_ACCESS_KEY=not-a-secret",
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_CONFIG_FILE=" + filepath.Join(home, "aws-config"),
		"AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(home, "aws-credentials"),
		config.EnvJobsTable + "=" + r.tables.Jobs,
		config.EnvEventsTable + "=" + r.tables.Events,
		config.EnvControlTable + "=" + r.tables.Control,
		config.EnvDispatchQueueURL + "=" + r.queues["dispatch"],
		config.EnvWebhookQueueURL + "=" + r.queues["webhook"],
		config.EnvDynamoDBEndpoint + "=" + st.DynamoDBEndpoint,
		config.EnvSQSEndpoint + "=" + st.AWSEndpoint,
		config.EnvSourcesBucket + "=tidegate-sources",
		config.EnvRegions + "=us-east-1=cluster-a",
		config.EnvAppsNamespace + "=" + r.appsNamespace,
		config.EnvLogJSON + "=true",
		// The API and the beat refuse to start without a KMS key for their keyring.
		config.EnvKMSKey + "=" + r.kmsKey,
		config.EnvKMSEndpoint + "=" + st.KMSEndpoint,
	}
	for _, name := range []string{config.EnvS3Endpoint, config.EnvEC2Endpoint, config.EnvSTSEndpoint, config.EnvEKSEndpoint} {
		env = append(env, name+"="+dead)
	}
	return env
}
