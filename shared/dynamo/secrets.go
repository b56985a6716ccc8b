package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/records"
)

// SecretStore keeps each org's secrets, sealed, in the control table: pk secrets#<org>, sk
// secret#<NAME>, so an org's secrets are one Query. It never sees a value in the clear: callers
// seal with shared/secretbox and pass a fingerprint that changes when the value does.
type SecretStore struct {
	db    *dynamodb.Client
	table string
}

// NewSecretStore returns a store on the control table.
func NewSecretStore(db *dynamodb.Client, controlTable string) *SecretStore {
	return &SecretStore{db: db, table: controlTable}
}

// ErrTooManySecrets is what Put answers for a new name when the org has apps.MaxSecrets already.
var ErrTooManySecrets = fmt.Errorf("the org has %d secrets, the most its hosts can carry; delete one first", apps.MaxSecrets)

// SecretName is what may be shown of a secret: its name and when it last changed.
type SecretName struct {
	Name      string    `json:"name" dynamodbav:"name"`
	UpdatedAt time.Time `json:"updated_at" dynamodbav:"updated_at"`
}

type secretItem struct {
	PK          string `dynamodbav:"pk"`
	SK          string `dynamodbav:"sk"`
	Sealed      string `dynamodbav:"sealed"`
	Fingerprint string `dynamodbav:"fingerprint"`
	SecretName
}

func secretKey(org, name string) (string, string) { return "secrets#" + org, "secret#" + name }

// Put stores org's secret name, sealed, with its fingerprint, and answers whether it is new.
// Replacing one is a single conditional update; a new one is refused (ErrTooManySecrets) when
// the org already has apps.MaxSecrets. Two new names put at once may pass that count together:
// the bound is there to keep hosts' Secrets small, and one over it still fits.
func (s *SecretStore) Put(ctx context.Context, org, name, sealed, fingerprint string, now time.Time) (created bool, err error) {
	pk, sk := secretKey(org, name)
	vals, err := marshalValues(map[string]any{":sealed": sealed, ":fp": fingerprint, ":now": now.UTC()})
	if err != nil {
		return false, err
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: keyOf(pk, sk),
		UpdateExpression:          aws.String("SET sealed = :sealed, fingerprint = :fp, updated_at = :now"),
		ConditionExpression:       aws.String("attribute_exists(pk)"),
		ExpressionAttributeValues: vals,
	})
	if err == nil {
		return false, nil
	}
	if !conditionFailed(err) {
		return false, fmt.Errorf("storing secret %s of org %s: %w", name, org, err)
	}
	count, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: &s.table, Select: types.SelectCount, ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}},
	})
	if err != nil {
		return false, fmt.Errorf("counting org %s's secrets: %w", org, err)
	}
	if count.Count >= apps.MaxSecrets {
		return false, ErrTooManySecrets
	}
	item, err := attributevalue.MarshalMap(secretItem{PK: pk, SK: sk, Sealed: sealed, Fingerprint: fingerprint, SecretName: SecretName{Name: name, UpdatedAt: now.UTC()}})
	if err != nil {
		return false, fmt.Errorf("encoding secret: %w", err)
	}
	// Without a condition: a Put racing this one for the same name leaves one of the two values,
	// as two replacements would.
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: item}); err != nil {
		return false, fmt.Errorf("storing secret %s of org %s: %w", name, org, err)
	}
	return true, nil
}

// Names answers org's secrets' names by name, limit at most, after cursor (the last name
// returned); never their values.
func (s *SecretStore) Names(ctx context.Context, org string, limit int, cursor string) ([]SecretName, string, error) {
	pk, from := secretKey(org, "")
	cond := "pk = :pk AND begins_with(sk, :from)"
	vals := map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}, ":from": &types.AttributeValueMemberS{Value: from}}
	if cursor != "" {
		_, after := secretKey(org, cursor)
		cond = "pk = :pk AND sk > :after"
		vals = map[string]types.AttributeValue{":pk": vals[":pk"], ":after": &types.AttributeValueMemberS{Value: after}}
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: &s.table, ConsistentRead: aws.Bool(true), KeyConditionExpression: &cond, ExpressionAttributeValues: vals,
		ProjectionExpression: aws.String("#name, updated_at"), ExpressionAttributeNames: map[string]string{"#name": "name"},
		Limit: aws.Int32(int32(limit + 1)),
	})
	if err != nil {
		return nil, "", fmt.Errorf("listing org %s's secrets: %w", org, err)
	}
	names := []SecretName{}
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &names); err != nil {
		return nil, "", fmt.Errorf("decoding secrets: %w", err)
	}
	names, next := cut(names, limit, func(n SecretName) string { return n.Name })
	return names, next, nil
}

// Delete removes org's secret name; records.ErrNotFound if there was none.
func (s *SecretStore) Delete(ctx context.Context, org, name string) error {
	pk, sk := secretKey(org, name)
	err := deleteExisting(ctx, s.db, s.table, pk, sk)
	if errors.Is(err, records.ErrNotFound) {
		return fmt.Errorf("secret %s of org %s: %w", name, org, records.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("deleting secret %s of org %s: %w", name, org, err)
	}
	return nil
}

// Sealed answers, for the beat, every secret of org by name, still sealed: open each with
// secretbox's Box.Open(sealed, apps.SecretBinding(org, name)) to build a host's Secret.
func (s *SecretStore) Sealed(ctx context.Context, org string) (map[string]string, error) {
	items, err := s.all(ctx, org, "#name, sealed")
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(items))
	for _, it := range items {
		out[it.Name] = it.Sealed
	}
	return out, nil
}

// Digest is org's secrets digest, apps.SecretsDigest over every secret's name and fingerprint:
// it changes when any secret is added, changed or deleted, and so do the org's host names.
func (s *SecretStore) Digest(ctx context.Context, org string) (string, error) {
	items, err := s.all(ctx, org, "#name, fingerprint")
	if err != nil {
		return "", err
	}
	fps := make(map[string]string, len(items))
	for _, it := range items {
		fps[it.Name] = it.Fingerprint
	}
	return apps.SecretsDigest(fps), nil
}

// all reads every secret of org with the attributes of projection, page after page.
func (s *SecretStore) all(ctx context.Context, org, projection string) ([]secretItem, error) {
	pk, _ := secretKey(org, "")
	p := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName: &s.table, ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}},
		ProjectionExpression:      &projection, ExpressionAttributeNames: map[string]string{"#name": "name"},
	})
	var out []secretItem
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading org %s's secrets: %w", org, err)
		}
		var items []secretItem
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &items); err != nil {
			return nil, fmt.Errorf("decoding secrets: %w", err)
		}
		out = append(out, items...)
	}
	return out, nil
}
