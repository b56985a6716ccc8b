package dynamo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tidegate/tidegate/shared/deliveryplan"
	"github.com/tidegate/tidegate/shared/records"
	"github.com/tidegate/tidegate/shared/secretbox"
	"github.com/tidegate/tidegate/shared/signing"
)

// Sealer seals webhook secrets at rest, each for its owner (keyring.Tenant of the webhook's
// tenant); keyring.Ring is the real one.
type Sealer interface {
	Seal(ctx context.Context, owner, value, binding string) (string, error)
	Open(ctx context.Context, owner, sealed, binding string) (string, error)
}

// WebhookStore keeps webhooks in the control table (pk webhook#<id>; gsi1 lists a tenant's,
// gsi1pk webhooks#<tenant>) and their deliveries in the events table, beside the outbox
// (pk hook#<webhook id>, sk msg#<delivery id>, so a webhook's log is one Query; a pending delivery
// sits in gsi1 under "due", sorted by when it next needs a worker).
type WebhookStore struct {
	db     *dynamodb.Client
	tables Tables
	sealer Sealer
}

// NewWebhookStore returns a store on the control and events tables. Secrets are sealed with
// sealer; with none they are stored as they are.
func NewWebhookStore(db *dynamodb.Client, t Tables, sealer Sealer) *WebhookStore {
	return &WebhookStore{db: db, tables: t, sealer: sealer}
}

// ErrLimit is what CreateWebhook answers for a tenant that has as many webhooks as it may.
var ErrLimit = errors.New("limit reached")

type webhookItem struct {
	PK      string              `dynamodbav:"pk"`
	SK      string              `dynamodbav:"sk"`
	GSI1PK  string              `dynamodbav:"gsi1pk"`
	GSI1SK  string              `dynamodbav:"gsi1sk"`
	Secrets []webhookSecretItem `dynamodbav:"secrets"`
	deliveryplan.Webhook
}

// webhookSecretItem is one signing secret at rest: sealed when the store has a sealer, else plain.
type webhookSecretItem struct {
	Sealed    string     `dynamodbav:"sealed,omitempty"`
	Plain     string     `dynamodbav:"plain,omitempty"`
	ExpiresAt *time.Time `dynamodbav:"expires_at,omitempty"`
}

func webhookKey(id string) (string, string) { return "webhook#" + id, "webhook" }

// binding ties a sealed secret to its webhook: it opens for no other.
func webhookBinding(webhookID string) string { return "webhook#" + webhookID }

// WebhookSecretOwner is whose data keys seal a webhook's signing secrets: its tenant's.
func WebhookSecretOwner(tenant string) string { return secretbox.TenantOwner(tenant) }

func (s *WebhookStore) sealSecrets(ctx context.Context, w deliveryplan.Webhook) ([]webhookSecretItem, error) {
	id, secrets := w.ID, w.Secrets
	out := make([]webhookSecretItem, 0, len(secrets))
	for _, sec := range secrets {
		it := webhookSecretItem{ExpiresAt: sec.ExpiresAt}
		if s.sealer == nil {
			it.Plain = sec.Key.String()
		} else {
			sealed, err := s.sealer.Seal(ctx, WebhookSecretOwner(w.Tenant), sec.Key.String(), webhookBinding(id))
			if err != nil {
				return nil, fmt.Errorf("sealing webhook %s's secret: %w", id, err)
			}
			it.Sealed = sealed
		}
		out = append(out, it)
	}
	return out, nil
}

func (s *WebhookStore) decodeWebhook(ctx context.Context, item map[string]types.AttributeValue) (deliveryplan.Webhook, error) {
	var it webhookItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return deliveryplan.Webhook{}, fmt.Errorf("decoding webhook: %w", err)
	}
	w := it.Webhook
	for _, sec := range it.Secrets {
		text := sec.Plain
		if sec.Sealed != "" {
			if s.sealer == nil {
				return w, fmt.Errorf("webhook %s's secret is sealed and this store has no key to open it", w.ID)
			}
			var err error
			if text, err = s.sealer.Open(ctx, WebhookSecretOwner(w.Tenant), sec.Sealed, webhookBinding(w.ID)); err != nil {
				return w, fmt.Errorf("opening webhook %s's secret: %w", w.ID, err)
			}
		}
		key, err := signing.ParseSecret(text)
		if err != nil {
			return w, fmt.Errorf("webhook %s's stored secret: %w", w.ID, err)
		}
		w.Secrets = append(w.Secrets, deliveryplan.Secret{Key: key, ExpiresAt: sec.ExpiresAt})
	}
	return w, nil
}

// CreateWebhook stores a new webhook, unless its tenant already has limit of them (ErrLimit).
func (s *WebhookStore) CreateWebhook(ctx context.Context, w deliveryplan.Webhook, limit int) error {
	count, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: &s.tables.Control, IndexName: aws.String(indexGSI1), Select: types.SelectCount,
		KeyConditionExpression:    aws.String("gsi1pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "webhooks#" + w.Tenant}},
	})
	if err != nil {
		return fmt.Errorf("counting tenant %s's webhooks: %w", w.Tenant, err)
	}
	if int(count.Count) >= limit {
		return ErrLimit
	}
	secrets, err := s.sealSecrets(ctx, w)
	if err != nil {
		return err
	}
	pk, sk := webhookKey(w.ID)
	item, err := attributevalue.MarshalMap(webhookItem{PK: pk, SK: sk, GSI1PK: "webhooks#" + w.Tenant, GSI1SK: w.ID, Secrets: secrets, Webhook: w})
	if err != nil {
		return fmt.Errorf("encoding webhook %s: %w", w.ID, err)
	}
	puts := []types.TransactWriteItem{{Put: &types.Put{TableName: &s.tables.Control, Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)")}}}
	if w.Org != "" {
		opk, osk := orgWebhookKey(w.Org, w.ID)
		pointer, err := attributevalue.MarshalMap(orgWebhookItem{PK: opk, SK: osk, Tenant: w.Tenant})
		if err != nil {
			return fmt.Errorf("encoding webhook %s: %w", w.ID, err)
		}
		puts = append(puts, types.TransactWriteItem{Put: &types.Put{TableName: &s.tables.Control, Item: pointer}})
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: puts})
	if _, failed := isConditionFailed(err, 0); failed {
		return ErrExists
	}
	if err != nil {
		return fmt.Errorf("storing webhook %s: %w", w.ID, err)
	}
	return nil
}

// orgWebhookItem says an org has a webhook, and whose: an org's events (hosted apps') reach its
// tenants' webhooks through these, one Query for the org.
type orgWebhookItem struct {
	PK     string `dynamodbav:"pk"`
	SK     string `dynamodbav:"sk"`
	Tenant string `dynamodbav:"tenant"`
}

func orgWebhookKey(org, id string) (string, string) { return "orgwebhooks#" + org, "webhook#" + id }

// OrgTenants lists the tenants of org that have webhooks.
func (s *WebhookStore) OrgTenants(ctx context.Context, org string) ([]string, error) {
	pk, _ := orgWebhookKey(org, "")
	p := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName: &s.tables.Control, KeyConditionExpression: aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}},
		ProjectionExpression:      aws.String("tenant"),
	})
	var tenants []string
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing org %s's webhooks: %w", org, err)
		}
		var items []orgWebhookItem
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &items); err != nil {
			return nil, fmt.Errorf("decoding org %s's webhooks: %w", org, err)
		}
		for _, it := range items {
			if !slices.Contains(tenants, it.Tenant) {
				tenants = append(tenants, it.Tenant)
			}
		}
	}
	return tenants, nil
}

// Webhook reads one of tenant's webhooks; records.ErrNotFound if there is none, or it is another's.
func (s *WebhookStore) Webhook(ctx context.Context, tenant, id string) (deliveryplan.Webhook, error) {
	pk, sk := webhookKey(id)
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.tables.Control, Key: keyOf(pk, sk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return deliveryplan.Webhook{}, fmt.Errorf("reading webhook %s: %w", id, err)
	}
	if out.Item == nil {
		return deliveryplan.Webhook{}, records.ErrNotFound
	}
	w, err := s.decodeWebhook(ctx, out.Item)
	if err == nil && w.Tenant != tenant {
		return deliveryplan.Webhook{}, records.ErrNotFound
	}
	return w, err
}

// Webhooks lists tenant's webhooks oldest first, limit at most, after cursor (the last id returned).
func (s *WebhookStore) Webhooks(ctx context.Context, tenant string, limit int, cursor string) ([]deliveryplan.Webhook, string, error) {
	cond := "gsi1pk = :pk"
	vals := map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "webhooks#" + tenant}}
	if cursor != "" {
		cond += " AND gsi1sk > :after"
		vals[":after"] = &types.AttributeValueMemberS{Value: cursor}
	}
	in := &dynamodb.QueryInput{
		TableName: &s.tables.Control, IndexName: aws.String(indexGSI1),
		KeyConditionExpression: &cond, ExpressionAttributeValues: vals,
	}
	if limit > 0 {
		in.Limit = aws.Int32(int32(limit + 1))
	}
	var ws []deliveryplan.Webhook
	for p := dynamodb.NewQueryPaginator(s.db, in); p.HasMorePages() && (limit <= 0 || len(ws) <= limit); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, "", fmt.Errorf("listing tenant %s's webhooks: %w", tenant, err)
		}
		for _, item := range page.Items {
			w, err := s.decodeWebhook(ctx, item)
			if err != nil {
				return nil, "", err
			}
			ws = append(ws, w)
		}
	}
	if limit <= 0 {
		return ws, "", nil
	}
	ws, next := cut(ws, limit, func(w deliveryplan.Webhook) string { return w.ID })
	return ws, next, nil
}

// DeleteWebhook removes one of tenant's webhooks; records.ErrNotFound if there was none. Its deliveries
// stay in the log until they expire; any still pending end at their next attempt.
func (s *WebhookStore) DeleteWebhook(ctx context.Context, tenant, id string) error {
	pk, sk := webhookKey(id)
	out, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: &s.tables.Control, Key: keyOf(pk, sk),
		ConditionExpression:       aws.String("tenant = :t"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberS{Value: tenant}},
		ReturnValues:              types.ReturnValueAllOld,
	})
	if conditionFailed(err) {
		return records.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("deleting webhook %s: %w", id, err)
	}
	// A pointer left behind by a failure here only costs a fan-out a look at the tenant's list.
	if org, ok := out.Attributes["org"].(*types.AttributeValueMemberS); ok && org.Value != "" {
		opk, osk := orgWebhookKey(org.Value, id)
		if _, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.tables.Control, Key: keyOf(opk, osk)}); err != nil {
			return fmt.Errorf("deleting webhook %s's org entry: %w", id, err)
		}
	}
	return nil
}

// SetSecrets replaces w's signing secrets (a rotation); records.ErrNotFound if w is gone.
func (s *WebhookStore) SetSecrets(ctx context.Context, w deliveryplan.Webhook, now time.Time) error {
	secrets, err := s.sealSecrets(ctx, w)
	if err != nil {
		return err
	}
	return s.update(ctx, w.ID, "SET secrets = :s, updated_at = :now", "tenant = :t", map[string]any{":s": secrets, ":now": now.UTC(), ":t": w.Tenant})
}

// MarkFailing records that webhook id's endpoint has been failing since `since`, unless an earlier
// start is already recorded.
func (s *WebhookStore) MarkFailing(ctx context.Context, id string, since time.Time) error {
	return ignoreGoneWebhook(s.update(ctx, id, "SET failing_since = if_not_exists(failing_since, :since)", "attribute_exists(pk)", map[string]any{":since": since.UTC()}))
}

// MarkHealthy ends webhook id's run of failures.
func (s *WebhookStore) MarkHealthy(ctx context.Context, id string) error {
	return ignoreGoneWebhook(s.update(ctx, id, "REMOVE failing_since", "attribute_exists(failing_since)", nil))
}

// Disable stops new deliveries to webhook id, for reason.
func (s *WebhookStore) Disable(ctx context.Context, id, reason string, at time.Time) error {
	return ignoreGoneWebhook(s.update(ctx, id, "SET disabled = :yes, disabled_reason = :why, disabled_at = :at, updated_at = :at",
		"attribute_exists(pk)", map[string]any{":yes": true, ":why": reason, ":at": at.UTC()}))
}

func (s *WebhookStore) update(ctx context.Context, id, expr, cond string, vals map[string]any) error {
	pk, sk := webhookKey(id)
	in := &dynamodb.UpdateItemInput{TableName: &s.tables.Control, Key: keyOf(pk, sk), UpdateExpression: &expr, ConditionExpression: &cond}
	if len(vals) > 0 {
		av, err := attributevalue.MarshalMap(vals)
		if err != nil {
			return fmt.Errorf("encoding webhook %s's change: %w", id, err)
		}
		in.ExpressionAttributeValues = av
	}
	_, err := s.db.UpdateItem(ctx, in)
	if conditionFailed(err) {
		return records.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("updating webhook %s: %w", id, err)
	}
	return nil
}

// ignoreGone treats a webhook deleted meanwhile as nothing to update.
func ignoreGoneWebhook(err error) error {
	if errors.Is(err, records.ErrNotFound) {
		return nil
	}
	return err
}
