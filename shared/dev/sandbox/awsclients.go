package sandbox

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

const (
	// The stand-ins accept any region; us-east-1 is the one whose S3 needs no location constraint
	// when a bucket is created.
	sandboxRegion = "us-east-1"
	// Any key pair will do for the stand-ins; a fixed one is never mistaken for a real one.
	sandboxAccessKey = "tidegate"
	sandboxSecretKey = "tidegate"
)

// AWSConfig is an SDK configuration for the stand-ins: a fixed region and static credentials, and
// nothing read from the environment or ~/.aws, so a developer's real AWS profile is never used.
// It sets no endpoint; the DynamoDB, SQS and S3 constructors below add the right one.
func (st State) AWSConfig() aws.Config {
	return aws.Config{
		Region:      sandboxRegion,
		Credentials: credentials.NewStaticCredentialsProvider(sandboxAccessKey, sandboxSecretKey, ""),
	}
}

// DynamoDB is a client for the sandbox's DynamoDB Local.
func (st State) DynamoDB() *dynamodb.Client {
	return dynamodb.NewFromConfig(st.AWSConfig(), func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(st.DynamoDBEndpoint)
	})
}

// SQS is a client for the sandbox's fauxqs.
func (st State) SQS() *sqs.Client {
	return sqs.NewFromConfig(st.AWSConfig(), func(o *sqs.Options) {
		o.BaseEndpoint = aws.String(st.AWSEndpoint)
	})
}

// S3 is a client for the sandbox's fauxqs. Path-style addressing keeps the bucket out of the host
// name, which on loopback would not resolve.
func (st State) S3() *s3.Client {
	return s3.NewFromConfig(st.AWSConfig(), func(o *s3.Options) {
		o.BaseEndpoint = aws.String(st.AWSEndpoint)
		o.UsePathStyle = true
	})
}

// KMS is a client for the sandbox's local-kms.
func (st State) KMS() *kms.Client {
	return kms.NewFromConfig(st.AWSConfig(), func(o *kms.Options) {
		o.BaseEndpoint = aws.String(st.KMSEndpoint)
	})
}
