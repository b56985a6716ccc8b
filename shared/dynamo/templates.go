package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/tidegate/tidegate/shared/records"
	"github.com/tidegate/tidegate/shared/templating"
)

// TemplateStore keeps templates in the control table: pk template#<tenant>#<name>; gsi1 lists a
// tenant's by name (gsi1pk templates#<tenant>).
type TemplateStore struct {
	db    *dynamodb.Client
	table string
}

// NewTemplateStore returns a store on the control table.
func NewTemplateStore(db *dynamodb.Client, controlTable string) *TemplateStore {
	return &TemplateStore{db: db, table: controlTable}
}

// ErrExists is what a create answers for a name already taken.
var ErrExists = errors.New("already exists")

type templateItem struct {
	PK     string `dynamodbav:"pk"`
	SK     string `dynamodbav:"sk"`
	GSI1PK string `dynamodbav:"gsi1pk"`
	GSI1SK string `dynamodbav:"gsi1sk"`
	// The manifest and defaults are kept as their JSON, so numbers keep their exact text.
	Body []byte `dynamodbav:"body_gz"`
	templating.Template
}

type templateBody struct {
	Manifest   map[string]any `json:"manifest"`
	Parameters map[string]any `json:"parameters"`
}

func templateKey(tenant, name string) (string, string) {
	return "template#" + tenant + "#" + name, "template"
}

// Put stores t. With create it refuses a name already taken (ErrExists); without, it replaces an
// existing template and refuses a missing one (records.ErrNotFound).
func (s *TemplateStore) Put(ctx context.Context, t templating.Template, create bool) error {
	pk, sk := templateKey(t.Tenant, t.Name)
	body, err := packJSON(templateBody{Manifest: t.Manifest, Parameters: t.Parameters})
	if err != nil {
		return err
	}
	item, err := attributevalue.MarshalMap(templateItem{PK: pk, SK: sk, GSI1PK: "templates#" + t.Tenant, GSI1SK: t.Name, Body: body, Template: t})
	if err != nil {
		return fmt.Errorf("encoding template %s: %w", t.Name, err)
	}
	cond := "attribute_exists(pk)"
	if create {
		cond = "attribute_not_exists(pk)"
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: item, ConditionExpression: &cond})
	switch {
	case conditionFailed(err) && create:
		return ErrExists
	case conditionFailed(err):
		return records.ErrNotFound
	case err != nil:
		return fmt.Errorf("storing template %s: %w", t.Name, err)
	}
	return nil
}

// Get reads one of tenant's templates; records.ErrNotFound if there is none.
func (s *TemplateStore) Get(ctx context.Context, tenant, name string) (templating.Template, error) {
	pk, sk := templateKey(tenant, name)
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: keyOf(pk, sk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return templating.Template{}, fmt.Errorf("reading template %s: %w", name, err)
	}
	if out.Item == nil {
		return templating.Template{}, records.ErrNotFound
	}
	return decodeTemplate(out.Item)
}

func decodeTemplate(item map[string]types.AttributeValue) (templating.Template, error) {
	var it templateItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return templating.Template{}, fmt.Errorf("decoding template: %w", err)
	}
	var b templateBody
	if err := unpackJSON(it.Body, &b); err != nil {
		return templating.Template{}, fmt.Errorf("template %s: %w", it.Name, err)
	}
	it.Template.Manifest, it.Template.Parameters = b.Manifest, b.Parameters
	return it.Template, nil
}

// List answers tenant's templates by name, limit at most, after cursor (the last name returned).
func (s *TemplateStore) List(ctx context.Context, tenant string, limit int, cursor string) ([]templating.Template, string, error) {
	cond := "gsi1pk = :pk"
	vals := map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "templates#" + tenant}}
	if cursor != "" {
		cond += " AND gsi1sk > :after"
		vals[":after"] = &types.AttributeValueMemberS{Value: cursor}
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: &s.table, IndexName: aws.String(indexGSI1), KeyConditionExpression: &cond,
		ExpressionAttributeValues: vals, Limit: aws.Int32(int32(limit + 1)),
	})
	if err != nil {
		return nil, "", fmt.Errorf("listing templates: %w", err)
	}
	ts := make([]templating.Template, 0, len(out.Items))
	for _, item := range out.Items {
		t, err := decodeTemplate(item)
		if err != nil {
			return nil, "", err
		}
		ts = append(ts, t)
	}
	ts, next := cut(ts, limit, func(t templating.Template) string { return t.Name })
	return ts, next, nil
}

// Delete removes one of tenant's templates; records.ErrNotFound if there was none.
func (s *TemplateStore) Delete(ctx context.Context, tenant, name string) error {
	pk, sk := templateKey(tenant, name)
	err := deleteExisting(ctx, s.db, s.table, pk, sk)
	if errors.Is(err, records.ErrNotFound) {
		return err
	}
	if err != nil {
		return fmt.Errorf("deleting template %s: %w", name, err)
	}
	return nil
}
