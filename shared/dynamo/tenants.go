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

	"github.com/tidegate/tidegate/shared/records"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// TenantStore keeps tenants, their API keys (hashed) and the IAM callers that act for them, in the
// control table.
type TenantStore struct {
	db    *dynamodb.Client
	table string
}

// NewTenantStore returns a store on the control table.
func NewTenantStore(db *dynamodb.Client, controlTable string) *TenantStore {
	return &TenantStore{db: db, table: controlTable}
}

type tenantItem struct {
	PK string `dynamodbav:"pk"`
	SK string `dynamodbav:"sk"`
	tenancy.Tenant
}

// credentialItem maps a key hash or an IAM ARN to its tenant. Keys are listed per tenant via gsi1.
type credentialItem struct {
	PK        string    `dynamodbav:"pk"`
	SK        string    `dynamodbav:"sk"`
	GSI1PK    string    `dynamodbav:"gsi1pk"`
	GSI1SK    string    `dynamodbav:"gsi1sk"`
	Tenant    string    `dynamodbav:"tenant"`
	Subject   string    `dynamodbav:"subject"`
	CreatedAt time.Time `dynamodbav:"created_at"`
}

func tenantKey(name string) (string, string) { return "tenant#" + name, "tenant" }

// PutTenant creates or replaces a tenant.
func (s *TenantStore) PutTenant(ctx context.Context, t tenancy.Tenant) error {
	if err := t.Validate(); err != nil {
		return err
	}
	pk, sk := tenantKey(t.Name)
	item, err := attributevalue.MarshalMap(tenantItem{PK: pk, SK: sk, Tenant: t})
	if err != nil {
		return fmt.Errorf("encoding tenant %s: %w", t.Name, err)
	}
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: item}); err != nil {
		return fmt.Errorf("storing tenant %s: %w", t.Name, err)
	}
	return nil
}

// SetHeld holds tenant name's jobs (none is dispatched) or, held false, lets them go again;
// records.ErrNotFound if there is no such tenant.
func (s *TenantStore) SetHeld(ctx context.Context, name string, held bool) error {
	pk, sk := tenantKey(name)
	in := &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: keyOf(pk, sk), ConditionExpression: aws.String("attribute_exists(pk)"),
		UpdateExpression:          aws.String("SET held = :held"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":held": &types.AttributeValueMemberBOOL{Value: true}},
	}
	if !held {
		in.UpdateExpression, in.ExpressionAttributeValues = aws.String("REMOVE held"), nil
	}
	_, err := s.db.UpdateItem(ctx, in)
	if conditionFailed(err) {
		return fmt.Errorf("tenant %s: %w", name, records.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("holding tenant %s: %w", name, err)
	}
	return nil
}

// Tenant reads one tenant; records.ErrNotFound if there is none by that name.
func (s *TenantStore) Tenant(ctx context.Context, name string) (tenancy.Tenant, error) {
	pk, sk := tenantKey(name)
	var it tenantItem
	if err := s.get(ctx, pk, sk, &it); err != nil {
		return tenancy.Tenant{}, fmt.Errorf("reading tenant %s: %w", name, err)
	}
	return it.Tenant, nil
}

// Tenants lists every tenant, for the admin command. There are few; a scan filtered by sk is fine.
func (s *TenantStore) Tenants(ctx context.Context) ([]tenancy.Tenant, error) {
	p := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{
		TableName:                 &s.table,
		FilterExpression:          aws.String("sk = :sk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":sk": &types.AttributeValueMemberS{Value: "tenant"}},
	})
	var out []tenancy.Tenant
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing tenants: %w", err)
		}
		var items []tenantItem
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &items); err != nil {
			return nil, fmt.Errorf("decoding tenants: %w", err)
		}
		for _, it := range items {
			out = append(out, it.Tenant)
		}
	}
	return out, nil
}

// AddKey stores an API key, hashed, for tenant. The tenant must exist.
func (s *TenantStore) AddKey(ctx context.Context, tenant, key string, now time.Time) error {
	return s.addCredential(ctx, tenant, "apikey#"+tenancy.HashKey(key), "key:"+tenancy.KeyID(key), now)
}

// AddIAM lets the IAM user, role or account arn act for tenant, kept in tenancy.MappedIAM's form;
// a session's ARN is refused with the ARN to give instead.
func (s *TenantStore) AddIAM(ctx context.Context, tenant, arn string, now time.Time) error {
	key, err := tenancy.MappedIAM(arn)
	if err != nil {
		return err
	}
	return s.addCredential(ctx, tenant, "iam#"+key, "iam:"+key, now)
}

func (s *TenantStore) addCredential(ctx context.Context, tenant, pk, subject string, now time.Time) error {
	tpk, tsk := tenantKey(tenant)
	item, err := attributevalue.MarshalMap(credentialItem{
		PK: pk, SK: "credential", GSI1PK: tpk, GSI1SK: "credential#" + subject,
		Tenant: tenant, Subject: subject, CreatedAt: now.UTC(),
	})
	if err != nil {
		return fmt.Errorf("encoding credential: %w", err)
	}
	// The tenant's existence is checked in the same transaction, so no credential ever names a
	// tenant that is not there.
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{ConditionCheck: &types.ConditionCheck{
			TableName:           &s.table,
			Key:                 keyOf(tpk, tsk),
			ConditionExpression: aws.String("attribute_exists(pk)"),
		}},
		{Put: &types.Put{TableName: &s.table, Item: item}},
	}})
	if _, failed := isConditionFailed(err, 0); failed {
		return fmt.Errorf("tenant %s does not exist; create it first with `tidegate admin tenants put`: %w", tenant, records.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("storing credential for tenant %s: %w", tenant, err)
	}
	return nil
}

// ByKey resolves a presented API key to its principal; records.ErrNotFound for an unknown key.
func (s *TenantStore) ByKey(ctx context.Context, key string) (tenancy.Principal, error) {
	return s.byCredential(ctx, "apikey#"+tenancy.HashKey(key))
}

// ByIAM resolves an authenticated IAM caller's ARN to its principal through the user, role or
// account it acts as (tenancy.CallerIAM: an assumed role's session name plays no part);
// records.ErrNotFound if that acts for no tenant. The principal's Subject keeps the caller's own
// ARN, session included, for the logs; its Credential is the mapping's.
func (s *TenantStore) ByIAM(ctx context.Context, arn string) (tenancy.Principal, error) {
	key, ok := tenancy.CallerIAM(arn)
	if !ok {
		return tenancy.Principal{}, fmt.Errorf("IAM caller %s: %w", arn, records.ErrNotFound)
	}
	p, err := s.byCredential(ctx, "iam#"+key)
	if err != nil {
		return tenancy.Principal{}, err
	}
	p.Subject = "iam:" + arn
	return p, nil
}

func (s *TenantStore) byCredential(ctx context.Context, pk string) (tenancy.Principal, error) {
	var c credentialItem
	if err := s.get(ctx, pk, "credential", &c); err != nil {
		return tenancy.Principal{}, err
	}
	t, err := s.Tenant(ctx, c.Tenant)
	if err != nil {
		return tenancy.Principal{}, err
	}
	return tenancy.Principal{Tenant: t, Subject: c.Subject, Credential: c.Subject}, nil
}

func (s *TenantStore) get(ctx context.Context, pk, sk string, into any) error {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: keyOf(pk, sk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return err
	}
	if out.Item == nil {
		return records.ErrNotFound
	}
	return attributevalue.UnmarshalMap(out.Item, into)
}

func keyOf(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		attrPK: &types.AttributeValueMemberS{Value: pk},
		attrSK: &types.AttributeValueMemberS{Value: sk},
	}
}

// conditionFailed reports whether err is a write refused by its condition expression: the answer
// most conditional writes here turn into false, ErrStale or ErrNotFound rather than an error.
func conditionFailed(err error) bool {
	var failed *types.ConditionalCheckFailedException
	return errors.As(err, &failed)
}
