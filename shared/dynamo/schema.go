// Package dynamo provides Tidegate's stores on DynamoDB: tenants and keys, jobs, and the outbox.
package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Tables names the three tables. template.yaml creates the same three with the same keys and
// indexes; shared/dev/samcheck's test holds the two in step.
type Tables struct {
	Jobs    string // job records and their history
	Events  string // the outbox: every state change's event, written in the same transaction
	Control string // tenants, keys, idempotency keys, templates, webhooks, apps, leases
}

// Attribute names shared by every table: generic keys let one table hold several item kinds.
const (
	attrPK      = "pk"
	attrSK      = "sk"
	attrGSI1PK  = "gsi1pk"
	attrGSI1SK  = "gsi1sk"
	attrGSI2PK  = "gsi2pk"
	attrGSI2SK  = "gsi2sk"
	attrExpires = "expires_at" // TTL attribute, epoch seconds
	indexGSI1   = "gsi1"
	indexGSI2   = "gsi2"
	indexGSI3   = "gsi3"
	indexGSI4   = "gsi4"
	indexGSI5   = "gsi5"
)

// TableSpec is one table's key schema, as both CreateTables and the template check read it.
type TableSpec struct {
	Name    string
	Indexes []string // global secondary indexes, each keyed <index>pk/<index>sk
	// Include lists, for an index that projects only some attributes, which ones; an index not
	// named projects ALL.
	Include map[string][]string
}

// QueueIndexAttributes are what the jobs table's gsi2 (the queue and the active jobs) projects:
// what a drain, a beat and the queue's stats read, and not the manifests, so a region's queue
// reads in pages of small items.
var QueueIndexAttributes = []string{
	"id", "tenant", "namespace", "region", "priority", "labels", "status", "created_at", "updated_at",
	"gpus", "podless", "spot", "pending_reason", "pending_resource", "queue_position", "spot_gate", "claim", "kind",
	// A retried job's attempt (the beat reads only its pods) and backoff (the drain waits it out).
	"attempt", "not_before",
	// What admission counts: a job's demand, the flavors its node selector allows, the flavor an
	// active one holds.
	"demand", "node_selector", "flavor",
	// What reclaim reads of a running job besides: whose jobs may not evict it, and until when,
	// and when its attempt was applied.
	"shield", "dispatched_at",
	// What its retry rules raised its memory by, which its demand counts.
	"memory_factor",
}

// ReleaseIndexAttributes are what the jobs table's gsi5 (the ended jobs whose dependents are
// still to be released) projects besides its keys: nothing to speak of, the keys name the job.
var ReleaseIndexAttributes = []string{"id"}

// Specs lists the tables with their indexes.
func (t Tables) Specs() []TableSpec {
	return []TableSpec{
		{Name: t.Jobs, Indexes: []string{indexGSI1, indexGSI2, indexGSI3, indexGSI4, indexGSI5}, Include: map[string][]string{indexGSI2: QueueIndexAttributes, indexGSI5: ReleaseIndexAttributes}},
		{Name: t.Events, Indexes: []string{indexGSI1}},
		{Name: t.Control, Indexes: []string{indexGSI1}},
	}
}

// CreateTables creates any of the tables that do not exist yet, waits until each is active and turns
// on TTL. It is what `tidegate dev` and the tests use; in AWS, template.yaml makes the tables.
func CreateTables(ctx context.Context, db *dynamodb.Client, t Tables) error {
	for _, spec := range t.Specs() {
		if err := createTable(ctx, db, spec); err != nil {
			return err
		}
	}
	return nil
}

func createTable(ctx context.Context, db *dynamodb.Client, spec TableSpec) error {
	str := func(name string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: types.ScalarAttributeTypeS}
	}
	key := func(pk, sk string) []types.KeySchemaElement {
		return []types.KeySchemaElement{
			{AttributeName: aws.String(pk), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(sk), KeyType: types.KeyTypeRange},
		}
	}
	in := &dynamodb.CreateTableInput{
		TableName:            aws.String(spec.Name),
		BillingMode:          types.BillingModePayPerRequest,
		KeySchema:            key(attrPK, attrSK),
		AttributeDefinitions: []types.AttributeDefinition{str(attrPK), str(attrSK)},
	}
	for _, ix := range spec.Indexes {
		in.AttributeDefinitions = append(in.AttributeDefinitions, str(ix+"pk"), str(ix+"sk"))
		projection := &types.Projection{ProjectionType: types.ProjectionTypeAll}
		if attrs, ok := spec.Include[ix]; ok {
			projection = &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: attrs}
		}
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
			IndexName:  aws.String(ix),
			KeySchema:  key(ix+"pk", ix+"sk"),
			Projection: projection,
		})
	}
	_, err := db.CreateTable(ctx, in)
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("creating table %s: %w", spec.Name, err)
	}
	// DynamoDB Local makes tables active at once; AWS takes seconds. Two minutes is AWS's own
	// waiter default for a table with indexes.
	if err := dynamodb.NewTableExistsWaiter(db).Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(spec.Name)}, 2*time.Minute); err != nil {
		return fmt.Errorf("waiting for table %s: %w", spec.Name, err)
	}
	_, err = db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName:               aws.String(spec.Name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(attrExpires), Enabled: aws.Bool(true)},
	})
	if err != nil && !isTTLAlreadyOn(err) {
		return fmt.Errorf("turning on TTL for table %s: %w", spec.Name, err)
	}
	return nil
}

// isTTLAlreadyOn tells the error DynamoDB answers when TTL is already enabled, which is no error to us.
func isTTLAlreadyOn(err error) bool {
	var ve interface{ ErrorMessage() string }
	return errors.As(err, &ve) && strings.Contains(strings.ToLower(ve.ErrorMessage()), "already enabled")
}

// cut keeps the first limit of items, read one past the page to learn whether more follow, and
// answers the cursor to resume after the last kept (its key), or "" when nothing follows.
func cut[T any](items []T, limit int, key func(T) string) ([]T, string) {
	if len(items) <= limit {
		return items, ""
	}
	items = items[:limit]
	return items, key(items[limit-1])
}
