package dynamo

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/records"
)

// Uploads of release sources live beside the app's items, whether or not the app exists yet (its
// first release creates it):
//
//	upload   pk app#<org>#<name>  sk upload#<id>   expires_at (TTL)
//
// The key holds the org and the app, so an upload is found only by the org and app it was made
// for. Neither Apps nor Releases reads them; DynamoDB's TTL deletes them a day on.

type uploadItem struct {
	PK      string `dynamodbav:"pk"`
	SK      string `dynamodbav:"sk"`
	Expires int64  `dynamodbav:"expires_at"`
	apps.Upload
}

func uploadSK(id string) string { return "upload#" + id }

// CreateUpload records u, an upload of org's app u.App; an upload of that id already there is
// refused (ids are random, so that is a bug, not a race).
func (s *AppStore) CreateUpload(ctx context.Context, org string, u apps.Upload) error {
	item, err := attributevalue.MarshalMap(uploadItem{PK: appPK(org, u.App), SK: uploadSK(u.ID), Expires: u.ExpiresAt.Unix(), Upload: u})
	if err != nil {
		return fmt.Errorf("encoding upload: %w", err)
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &s.tables.Control, Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)"),
	})
	if err != nil {
		return fmt.Errorf("recording upload %s of app %s/%s: %w", u.ID, org, u.App, err)
	}
	return nil
}

// Upload reads upload id of org's app; records.ErrNotFound if there is none (another org's or
// another app's upload of that id included).
func (s *AppStore) Upload(ctx context.Context, org, app, id string) (apps.Upload, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &s.tables.Control, Key: keyOf(appPK(org, app), uploadSK(id)), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return apps.Upload{}, fmt.Errorf("reading upload %s of app %s/%s: %w", id, org, app, err)
	}
	if out.Item == nil {
		return apps.Upload{}, fmt.Errorf("upload %s of app %s/%s: %w", id, org, app, records.ErrNotFound)
	}
	var it uploadItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return apps.Upload{}, fmt.Errorf("decoding upload %s: %w", id, err)
	}
	return it.Upload, nil
}

// DeleteUpload forgets upload id of org's app, once it became a release; one gone already is no
// error.
func (s *AppStore) DeleteUpload(ctx context.Context, org, app, id string) error {
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.tables.Control, Key: keyOf(appPK(org, app), uploadSK(id))})
	if err != nil {
		return fmt.Errorf("forgetting upload %s of app %s/%s: %w", id, org, app, err)
	}
	return nil
}

// Release reads release n of org's app; records.ErrNotFound if there is none.
func (s *AppStore) Release(ctx context.Context, org, app string, n int) (apps.Release, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &s.tables.Control, Key: keyOf(appPK(org, app), releaseSK(n)), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return apps.Release{}, fmt.Errorf("reading release %d of app %s/%s: %w", n, org, app, err)
	}
	if out.Item == nil {
		return apps.Release{}, fmt.Errorf("release %d of app %s/%s: %w", n, org, app, records.ErrNotFound)
	}
	var it releaseItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return apps.Release{}, fmt.Errorf("decoding release %d: %w", n, err)
	}
	return it.Release, nil
}
