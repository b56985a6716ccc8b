package keyring

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tidegate/tidegate/shared/secretbox"
)

// record is one wrapped data key in the control table: pk keyring#<owner>, sk seal#<generation>
// for a sealing key (zero-padded, so a Query lists them oldest first) or fingerprint for the
// owner's fingerprint key. Only KMS can unwrap it, and only with the owner's encryption context.
type record struct {
	PK         string    `dynamodbav:"pk"`
	SK         string    `dynamodbav:"sk"`
	Generation int       `dynamodbav:"generation"`
	KeyID      string    `dynamodbav:"key_id"`      // secretbox.KeyID of the data key, as sealed values name it
	Wrapped    []byte    `dynamodbav:"wrapped"`     // GenerateDataKey's CiphertextBlob
	KMSKeyARN  string    `dynamodbav:"kms_key_arn"` // the KMS key that wrapped it, as KMS named it
	MadeUnder  string    `dynamodbav:"made_under"`  // the KMS key as configured when it was made
	CreatedAt  time.Time `dynamodbav:"created_at"`
}

const (
	pkPrefix      = "keyring#"
	sealPrefix    = "seal#"
	fingerprintSK = "fingerprint"
)

func sealSK(generation int) string { return fmt.Sprintf("%s%08d", sealPrefix, generation) }

// errTaken is what make answers when another process made that key first.
var errTaken = errors.New("data key already made")

// load answers what the ring holds of owner's data keys, reading them from the table when it has
// not, when what it read is older than the refresh interval, or when force says so. Keys already
// unwrapped stay unwrapped.
func (r *Ring) load(ctx context.Context, owner string, force bool) (*owned, error) {
	o := r.owners[owner]
	if o != nil && !force && r.now().Sub(o.read) < r.refresh {
		return o, nil
	}
	if o == nil {
		o = &owned{boxes: map[string]*secretbox.Box{}}
	}
	var recs []record
	var start map[string]types.AttributeValue
	for {
		out, err := r.db.Query(ctx, &dynamodb.QueryInput{
			TableName:                 &r.table,
			KeyConditionExpression:    aws.String("pk = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pkPrefix + owner}},
			ConsistentRead:            aws.Bool(true),
			ExclusiveStartKey:         start,
		})
		if err != nil {
			return nil, fmt.Errorf("reading %s's data keys: %w", owner, err)
		}
		var page []record
		if err := attributevalue.UnmarshalListOfMaps(out.Items, &page); err != nil {
			return nil, fmt.Errorf("decoding %s's data keys: %w", owner, err)
		}
		recs = append(recs, page...)
		if start = out.LastEvaluatedKey; len(start) == 0 {
			break
		}
	}
	o.records, o.print = o.records[:0], nil
	for _, rec := range recs {
		switch {
		case rec.SK == fingerprintSK:
			o.print = &rec
		case strings.HasPrefix(rec.SK, sealPrefix):
			o.records = append(o.records, rec)
		}
	}
	slices.SortFunc(o.records, func(a, b record) int { return a.Generation - b.Generation })
	o.read = r.now()
	r.owners[owner] = o
	return o, nil
}

// make makes owner a data key and stores it wrapped under sk, unless one is there already
// (errTaken). It answers the record and the key itself, so the maker need not unwrap it.
func (r *Ring) make(ctx context.Context, owner, sk string, generation int) (record, []byte, error) {
	plain, rec, err := r.generate(ctx, owner)
	if err != nil {
		return rec, nil, err
	}
	rec.PK, rec.SK, rec.Generation = pkPrefix+owner, sk, generation
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		return rec, nil, fmt.Errorf("encoding %s's data key: %w", owner, err)
	}
	_, err = r.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &r.table, Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)"),
	})
	var failed *types.ConditionalCheckFailedException
	if errors.As(err, &failed) {
		return rec, nil, errTaken
	}
	if err != nil {
		return rec, nil, fmt.Errorf("storing %s's data key: %w", owner, err)
	}
	return rec, plain, nil
}
