package devstack

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/tidegate/tidegate/shared/handlers"
)

// devKMSKey makes the KMS key in local-kms, at endpoint, under which the functions' keyring makes
// orgs' and tenants' data keys, and answers its ARN. Orgs' secrets last only as long as this run's
// tables, so a fresh key each run loses nothing; the functions are given the key's ARN, never key
// material, as in AWS.
func devKMSKey(ctx context.Context, awsCfg aws.Config, endpoint string) (string, error) {
	if endpoint == "" {
		return "", errors.New("the stand-ins have no local-kms (a sandbox started before it was added): restart the sandbox, after `make tools` installs it")
	}
	c := kms.NewFromConfig(awsCfg, func(o *kms.Options) { o.BaseEndpoint = handlers.Endpoint(endpoint) })
	out, err := c.CreateKey(ctx, &kms.CreateKeyInput{Description: aws.String("tidegate dev: wraps the data keys that seal secrets")})
	if err != nil {
		return "", fmt.Errorf("creating the KMS key in local-kms: %w", err)
	}
	return aws.ToString(out.KeyMetadata.Arn), nil
}
