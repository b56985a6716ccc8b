package dynamo

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/secretbox"
)

// Resealer opens a value under whichever key sealed it and seals values under their owner's
// current key, which Current names; keyring.Ring is the real one (keyring.Legacy also opens what
// a configured secrets key sealed before the keyring).
type Resealer interface {
	Current(ctx context.Context, owner string) (string, error)
	Open(ctx context.Context, owner, sealed, binding string) (string, error)
	Seal(ctx context.Context, owner, value, binding string) (string, error)
}

// ResealStep is what Reseal did with one stored item: an org's secret, or a webhook's signing
// secrets.
type ResealStep struct {
	What    string // "org acme's secret API_KEY", "webhook wh_1's signing secrets"
	Outcome string // ResealDone, ResealCurrent or ResealChanged
}

// What Reseal did with an item.
const (
	ResealDone    = "re-sealed under the current key"
	ResealCurrent = "already under the current key"
	ResealChanged = "changed while being re-sealed: left as its writer stored it; run again to be sure"
)

// Reseal seals again, under its owner's current data key, every value sealed at rest in the
// control table that is under another key: orgs' secrets and webhooks' signing secrets (a webhook
// secret stored unsealed is sealed). Each item is replaced by a write conditional on its still
// being what was read, so a value its owner changed meanwhile is left as written. A run that
// stops half way leaves every value opening, and running again finishes the work; a second run
// finds nothing to do. step is told about each item.
func Reseal(ctx context.Context, db *dynamodb.Client, table string, r Resealer, step func(ResealStep)) error {
	in := &dynamodb.ScanInput{
		TableName:        &table,
		FilterExpression: aws.String("(begins_with(pk, :secrets) AND begins_with(sk, :secret)) OR (begins_with(pk, :webhook) AND sk = :webhookSK)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":secrets": &types.AttributeValueMemberS{Value: "secrets#"}, ":secret": &types.AttributeValueMemberS{Value: "secret#"},
			":webhook": &types.AttributeValueMemberS{Value: "webhook#"}, ":webhookSK": &types.AttributeValueMemberS{Value: "webhook"},
		},
		ConsistentRead: aws.Bool(true),
	}
	for p := dynamodb.NewScanPaginator(db, in); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("reading the control table's sealed values: %w", err)
		}
		for _, item := range page.Items {
			var s ResealStep
			if pk := item[attrPK].(*types.AttributeValueMemberS).Value; strings.HasPrefix(pk, "secrets#") {
				s, err = resealSecret(ctx, db, table, r, item)
			} else {
				s, err = resealWebhook(ctx, db, table, r, item)
			}
			if err != nil {
				return err
			}
			step(s)
		}
	}
	return nil
}

// resealSecret re-seals one org's secret when its key is not the org's current one.
func resealSecret(ctx context.Context, db *dynamodb.Client, table string, r Resealer, item map[string]types.AttributeValue) (ResealStep, error) {
	var it secretItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return ResealStep{}, fmt.Errorf("decoding a secret: %w", err)
	}
	org := strings.TrimPrefix(it.PK, "secrets#")
	step := ResealStep{What: fmt.Sprintf("org %s's secret %s", org, it.Name)}
	owner, binding := secretbox.OrgOwner(org), apps.SecretBinding(org, it.Name)
	resealed, changed, err := reseal(ctx, r, owner, it.Sealed, binding)
	if err != nil || !changed {
		step.Outcome = ResealCurrent
		return step, wrapReseal(step, err)
	}
	vals, err := marshalValues(map[string]any{":new": resealed, ":old": it.Sealed})
	if err != nil {
		return step, err
	}
	_, err = db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &table, Key: keyOf(it.PK, it.SK),
		UpdateExpression: aws.String("SET sealed = :new"), ConditionExpression: aws.String("sealed = :old"),
		ExpressionAttributeValues: vals,
	})
	return conditionalOutcome(step, err)
}

// resealWebhook re-seals a webhook's signing secrets (two during a rotation) that are not under
// its tenant's current key, and seals any stored unsealed.
func resealWebhook(ctx context.Context, db *dynamodb.Client, table string, r Resealer, item map[string]types.AttributeValue) (ResealStep, error) {
	var it webhookItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return ResealStep{}, fmt.Errorf("decoding a webhook: %w", err)
	}
	step := ResealStep{What: fmt.Sprintf("webhook %s's signing secrets", it.ID)}
	owner, binding := WebhookSecretOwner(it.Tenant), webhookBinding(it.ID)
	secrets := append([]webhookSecretItem(nil), it.Secrets...)
	touched := false
	for i, sec := range secrets {
		var resealed string
		changed := true
		var err error
		if sec.Sealed == "" {
			resealed, err = r.Seal(ctx, owner, sec.Plain, binding)
		} else {
			resealed, changed, err = reseal(ctx, r, owner, sec.Sealed, binding)
		}
		if err != nil {
			return step, wrapReseal(step, err)
		}
		if changed {
			secrets[i].Sealed, secrets[i].Plain, touched = resealed, "", true
		}
	}
	if !touched {
		step.Outcome = ResealCurrent
		return step, nil
	}
	vals, err := marshalValues(map[string]any{":new": secrets})
	if err != nil {
		return step, err
	}
	vals[":old"] = item["secrets"] // as read, so the condition compares exactly what is stored
	_, err = db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &table, Key: keyOf(it.PK, it.SK),
		UpdateExpression: aws.String("SET secrets = :new"), ConditionExpression: aws.String("secrets = :old"),
		ExpressionAttributeValues: vals,
	})
	return conditionalOutcome(step, err)
}

// reseal opens sealed and seals it again under owner's current key, unless it is under that key
// already (changed false).
func reseal(ctx context.Context, r Resealer, owner, sealed, binding string) (resealed string, changed bool, err error) {
	current, err := r.Current(ctx, owner)
	if err != nil {
		return "", false, err
	}
	if id, err := secretbox.SealedKeyID(sealed); err == nil && id == current {
		return sealed, false, nil
	}
	value, err := r.Open(ctx, owner, sealed, binding)
	if err != nil {
		return "", false, err
	}
	resealed, err = r.Seal(ctx, owner, value, binding)
	return resealed, err == nil, err
}

func wrapReseal(step ResealStep, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("re-sealing %s: %w", step.What, err)
}

// conditionalOutcome is the step's outcome after its conditional write answered err.
func conditionalOutcome(step ResealStep, err error) (ResealStep, error) {
	switch {
	case conditionFailed(err):
		step.Outcome = ResealChanged
		return step, nil
	case err != nil:
		return step, wrapReseal(step, err)
	}
	step.Outcome = ResealDone
	return step, nil
}
