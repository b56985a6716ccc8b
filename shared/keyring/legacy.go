package keyring

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tidegate/tidegate/shared/secretbox"
)

// Legacy is a Ring that also opens what the secrets key sealed when it was configuration (the
// TIDEGATE_SECRETS_KEY of older deployments), so that `tidegate admin secrets reseal` can seal
// those values again under their owners' data keys. It never seals with that key.
type Legacy struct {
	*Ring
	id  string
	box *secretbox.Box
}

// NewLegacy returns r, also opening what key sealed.
func NewLegacy(r *Ring, key []byte) (*Legacy, error) {
	box, err := secretbox.New(key)
	if err != nil {
		return nil, err
	}
	return &Legacy{Ring: r, id: secretbox.KeyID(key), box: box}, nil
}

// Open opens a value the legacy key sealed with that key, and any other with the ring.
func (l *Legacy) Open(ctx context.Context, owner, sealed, binding string) (string, error) {
	if id, err := secretbox.SealedKeyID(sealed); err == nil && id == l.id {
		return l.box.Open(sealed, binding)
	}
	return l.Ring.Open(ctx, owner, sealed, binding)
}

// Owners lists, sorted, every owner that has a sealing data key.
func (r *Ring) Owners(ctx context.Context) ([]string, error) {
	in := &dynamodb.ScanInput{
		TableName:            &r.table,
		FilterExpression:     aws.String("begins_with(pk, :pk) AND begins_with(sk, :seal)"),
		ProjectionExpression: aws.String("pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: pkPrefix}, ":seal": &types.AttributeValueMemberS{Value: sealPrefix},
		},
	}
	seen := map[string]bool{}
	for p := dynamodb.NewScanPaginator(r.db, in); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing the owners of data keys: %w", err)
		}
		var recs []record
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &recs); err != nil {
			return nil, fmt.Errorf("decoding data key records: %w", err)
		}
		for _, rec := range recs {
			seen[rec.PK[len(pkPrefix):]] = true
		}
	}
	owners := make([]string, 0, len(seen))
	for o := range seen {
		owners = append(owners, o)
	}
	slices.Sort(owners)
	return owners, nil
}
