package dynamo

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// AuditRecord is one change a principal asked for: when, who (principal, tenant, request id,
// source IP), what (the route's method and pattern, and the path it named), and how it ended (the
// answer's status; 0 while the change is under way, and for good where the process died first:
// the record is written before the change, so no change happens unrecorded).
type AuditRecord struct {
	At        time.Time `json:"at" dynamodbav:"at"`
	Tenant    string    `json:"tenant" dynamodbav:"tenant"`
	Principal string    `json:"principal" dynamodbav:"principal"`
	RequestID string    `json:"request_id" dynamodbav:"request_id"`
	SourceIP  string    `json:"source_ip,omitempty" dynamodbav:"source_ip,omitempty"`
	Action    string    `json:"action" dynamodbav:"action"`
	Path      string    `json:"path" dynamodbav:"path"`
	Status    int       `json:"status" dynamodbav:"status"`
}

type auditItem struct {
	PK      string `dynamodbav:"pk"`
	SK      string `dynamodbav:"sk"`
	GSI1PK  string `dynamodbav:"gsi1pk"`
	GSI1SK  string `dynamodbav:"gsi1sk"`
	Expires int64  `dynamodbav:"expires_at,omitempty"`
	AuditRecord
}

// auditAll is the control table's gsi1 partition of every tenant's records, for the operator.
const auditAll = "audit"

// AuditStore keeps the audit log in the control table: a tenant's records under its own
// partition, newest last, and every tenant's in gsi1 for the operator.
type AuditStore struct {
	db        *dynamodb.Client
	table     string
	retention time.Duration
}

// NewAuditStore is the audit log in table, each record kept retention (0: for good).
func NewAuditStore(db *dynamodb.Client, table string, retention time.Duration) *AuditStore {
	return &AuditStore{db: db, table: table, retention: retention}
}

func auditSK(r AuditRecord) string {
	return r.At.UTC().Format("2006-01-02T15:04:05.000000000Z") + "#" + r.RequestID
}

// AuditEntry is an audit record as the transaction of the change it records writes it (JobStore's
// CreateAudited), its retention applied.
type AuditEntry struct {
	Record  AuditRecord
	Expires time.Time // zero: kept for good
}

// Entry is r as a change's own transaction writes it.
func (s *AuditStore) Entry(r AuditRecord) AuditEntry {
	e := AuditEntry{Record: r}
	if s.retention > 0 {
		e.Expires = r.At.Add(s.retention)
	}
	return e
}

// put is e's item, for a PutItem or a transaction.
func (e AuditEntry) put(table string) (*types.Put, error) {
	r := e.Record
	it := auditItem{PK: "audit#" + r.Tenant, SK: auditSK(r), GSI1PK: auditAll, GSI1SK: auditSK(r), AuditRecord: r}
	if !e.Expires.IsZero() {
		it.Expires = e.Expires.Unix()
	}
	item, err := attributevalue.MarshalMap(it)
	if err != nil {
		return nil, fmt.Errorf("encoding an audit record: %w", err)
	}
	return &types.Put{TableName: &table, Item: item}, nil
}

// Begin appends r, before the change it records is made; with r.Status set, it records a
// request that made no change (one refused), once it is answered.
func (s *AuditStore) Begin(ctx context.Context, r AuditRecord) error {
	put, err := s.Entry(r).put(s.table)
	if err != nil {
		return err
	}
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: put.TableName, Item: put.Item}); err != nil {
		return fmt.Errorf("writing the audit record of request %s: %w", r.RequestID, err)
	}
	return nil
}

// Finish records how r's change ended: the answer's status.
func (s *AuditStore) Finish(ctx context.Context, r AuditRecord, status int) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: keyOf("audit#"+r.Tenant, auditSK(r)),
		UpdateExpression:          aws.String("SET #status = :status"),
		ConditionExpression:       aws.String("attribute_exists(pk)"),
		ExpressionAttributeNames:  map[string]string{"#status": "status"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":status": &types.AttributeValueMemberN{Value: fmt.Sprint(status)}},
	})
	if err != nil {
		return fmt.Errorf("finishing the audit record of request %s: %w", r.RequestID, err)
	}
	return nil
}

// AuditQuery chooses records: a tenant's ("" for every tenant's), in [From, To), of one action
// when Action is set, oldest first, at most Limit after Cursor.
type AuditQuery struct {
	Tenant   string
	From, To time.Time
	Action   string
	Limit    int
	Cursor   string
	// NewestFirst reads the range from its end; a cursor goes on in the order it was made in.
	NewestFirst bool
}

// Audit reads the records q chooses, and the cursor of the next page ("" at the end).
func (s *AuditStore) Audit(ctx context.Context, q AuditQuery) ([]AuditRecord, string, error) {
	in := &dynamodb.QueryInput{
		TableName:              &s.table,
		KeyConditionExpression: aws.String("pk = :pk AND sk BETWEEN :from AND :to"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk":   &types.AttributeValueMemberS{Value: "audit#" + q.Tenant},
			":from": &types.AttributeValueMemberS{Value: q.From.UTC().Format("2006-01-02T15:04:05.000000000Z")},
			":to":   &types.AttributeValueMemberS{Value: q.To.UTC().Format("2006-01-02T15:04:05.000000000Z")},
		},
		Limit: aws.Int32(int32(q.Limit)), ScanIndexForward: aws.Bool(!q.NewestFirst),
	}
	if q.Tenant == "" {
		in.IndexName = aws.String("gsi1")
		in.KeyConditionExpression = aws.String("gsi1pk = :pk AND gsi1sk BETWEEN :from AND :to")
		in.ExpressionAttributeValues[":pk"] = &types.AttributeValueMemberS{Value: auditAll}
	}
	if q.Action != "" {
		in.FilterExpression = aws.String("#action = :action")
		in.ExpressionAttributeNames = map[string]string{"#action": "action"}
		in.ExpressionAttributeValues[":action"] = &types.AttributeValueMemberS{Value: q.Action}
	}
	if q.Cursor != "" {
		key, err := decodeAuditCursor(q.Cursor)
		if err != nil {
			return nil, "", err
		}
		// A cursor names where a listing stopped, in its own partition: one made up to start in
		// another tenant's is refused, not read.
		if pk, _ := key["pk"].(*types.AttributeValueMemberS); pk == nil || q.Tenant != "" && pk.Value != "audit#"+q.Tenant {
			return nil, "", ErrBadAuditCursor
		}
		in.ExclusiveStartKey = key
	}
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return nil, "", fmt.Errorf("reading the audit log: %w", err)
	}
	var items []auditItem
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
		return nil, "", fmt.Errorf("decoding the audit log: %w", err)
	}
	recs := make([]AuditRecord, len(items))
	for i, it := range items {
		recs[i] = it.AuditRecord
	}
	next := ""
	if len(out.LastEvaluatedKey) > 0 {
		next = encodeAuditCursor(out.LastEvaluatedKey)
	}
	return recs, next, nil
}

// ErrBadAuditCursor is what Audit answers for a cursor it did not make.
var ErrBadAuditCursor = fmt.Errorf("the cursor is not one this listing gave")

func encodeAuditCursor(key map[string]types.AttributeValue) string {
	flat := map[string]string{}
	for k, v := range key {
		if s, ok := v.(*types.AttributeValueMemberS); ok {
			flat[k] = s.Value
		}
	}
	b, _ := json.Marshal(flat)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeAuditCursor(c string) (map[string]types.AttributeValue, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return nil, ErrBadAuditCursor
	}
	var flat map[string]string
	if err := json.Unmarshal(b, &flat); err != nil || len(flat) == 0 {
		return nil, ErrBadAuditCursor
	}
	out := map[string]types.AttributeValue{}
	for k, v := range flat {
		out[k] = &types.AttributeValueMemberS{Value: v}
	}
	return out, nil
}
