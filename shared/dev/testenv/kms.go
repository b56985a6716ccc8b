package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/tidegate/tidegate/shared/keyring"
)

// KMSKey makes a KMS key in the sandbox's local-kms that only this test uses, and answers its ARN
// and a client. local-kms keeps its keys in the sandbox's folder, so they go with the sandbox.
func KMSKey(t testing.TB) (string, *kms.Client) {
	t.Helper()
	st := AWS(t)
	if st.KMSEndpoint == "" {
		t.Fatalf("the sandbox has no local-kms (its state predates it); restart the sandbox")
	}
	c := st.KMS()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := c.CreateKey(ctx, &kms.CreateKeyInput{Description: aws.String("tidegate test " + uniq(t, "key"))})
	if err != nil {
		t.Fatalf("creating a KMS key: %v", err)
	}
	return aws.ToString(out.KeyMetadata.Arn), c
}

// Keyring is a keyring on a KMS key of this test's own, keeping its data keys in table (a
// control table Tables made).
func Keyring(t testing.TB, db *dynamodb.Client, table string) *keyring.Ring {
	t.Helper()
	key, c := KMSKey(t)
	r, err := keyring.New(c, db, table, key)
	if err != nil {
		t.Fatalf("keyring.New: %v", err)
	}
	return r
}
