package dynamo

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/records"
)

// AppStore keeps hosted apps, their releases and their hosts' tokens in the control table, and
// writes the apps' events to the outbox with the changes they report:
//
//	app      pk app#<org>#<name>  sk app                gsi1 apps / <org>#<name>
//	release  pk app#<org>#<name>  sk release#<n, 12 digits>
//	host     pk host#<host>       sk host               gsi1 hosts#<org>#<name> / <host>
//
// One Query of gsi1 "apps" lists every app for the beat; begins_with on <org># lists an org's.
type AppStore struct {
	db     *dynamodb.Client
	tables Tables
}

// NewAppStore returns a store on the control and events tables.
func NewAppStore(db *dynamodb.Client, t Tables) *AppStore {
	return &AppStore{db: db, tables: t}
}

// What a host's registration is refused for, besides records.ErrNotFound for a host no token was minted for.
var (
	ErrBadHostToken  = errors.New("the host token is not this host's")
	ErrHostNotWanted = errors.New("the app no longer wants this host")
	// ErrHostTaken is what MintHostToken answers when another app's host has the name.
	ErrHostTaken = errors.New("the host name belongs to another app")
	// ErrBusy is what CreateRelease answers when other uploads to the app kept winning the race.
	ErrBusy = errors.New("too many uploads to this app at once; retry in a moment")
)

type appItem struct {
	PK     string `dynamodbav:"pk"`
	SK     string `dynamodbav:"sk"`
	GSI1PK string `dynamodbav:"gsi1pk"`
	GSI1SK string `dynamodbav:"gsi1sk"`
	apps.App
}

type releaseItem struct {
	PK string `dynamodbav:"pk"`
	SK string `dynamodbav:"sk"`
	apps.Release
}

type hostItem struct {
	PK        string `dynamodbav:"pk"`
	SK        string `dynamodbav:"sk"`
	GSI1PK    string `dynamodbav:"gsi1pk"`
	GSI1SK    string `dynamodbav:"gsi1sk"`
	Org       string `dynamodbav:"org"`
	App       string `dynamodbav:"app"`
	TokenHash string `dynamodbav:"token_hash"`
}

func appPK(org, name string) string { return "app#" + org + "#" + name }

func releaseSK(n int) string { return fmt.Sprintf("release#%0*d", apps.ReleaseDigits, n) }

func hostKey(host string) (string, string) { return "host#" + host, "host" }

// indexApps is gsi1's partition of every app.
const indexApps = "apps"

// appNames are the placeholders of the app item's attributes in expressions: several are
// DynamoDB reserved words.
var appNames = map[string]string{"#release": "release", "#state": "state", "#sha": "release_sha"}

// App reads one of org's apps; records.ErrNotFound if there is none.
func (s *AppStore) App(ctx context.Context, org, name string) (apps.App, error) {
	a, ok, err := s.app(ctx, org, name)
	if err == nil && !ok {
		err = records.ErrNotFound
	}
	return a, err
}

func (s *AppStore) app(ctx context.Context, org, name string) (apps.App, bool, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &s.tables.Control, Key: keyOf(appPK(org, name), "app"), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return apps.App{}, false, fmt.Errorf("reading app %s/%s: %w", org, name, err)
	}
	if out.Item == nil {
		return apps.App{}, false, nil
	}
	a, err := decodeApp(out.Item)
	return a, err == nil, err
}

func decodeApp(item map[string]types.AttributeValue) (apps.App, error) {
	var it appItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return apps.App{}, fmt.Errorf("decoding app: %w", err)
	}
	return it.App, nil
}

// Apps answers org's apps by name, limit at most, after cursor (the last name returned).
func (s *AppStore) Apps(ctx context.Context, org string, limit int, cursor string) ([]apps.App, string, error) {
	// begins_with(<org>#) is the range [<org>#, <org>$]: '$' follows '#', and no name holds it. A
	// cursor starts the range just past the last key returned.
	from := org + "#"
	if cursor != "" {
		from = org + "#" + cursor + "\x00"
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: &s.tables.Control, IndexName: aws.String(indexGSI1),
		KeyConditionExpression: aws.String("gsi1pk = :pk AND gsi1sk BETWEEN :from AND :to"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: indexApps}, ":from": &types.AttributeValueMemberS{Value: from},
			":to": &types.AttributeValueMemberS{Value: org + "$"},
		},
		Limit: aws.Int32(int32(limit + 1)),
	})
	if err != nil {
		return nil, "", fmt.Errorf("listing org %s's apps: %w", org, err)
	}
	list := make([]apps.App, 0, len(out.Items))
	for _, item := range out.Items {
		a, err := decodeApp(item)
		if err != nil {
			return nil, "", err
		}
		list = append(list, a)
	}
	list, next := cut(list, limit, func(a apps.App) string { return a.Name })
	return list, next, nil
}

// Hosting is, for the beat, every app of every org with all the host plan reads of it: the
// release wanted and its sources' digest, what is live, the registered host, the failure, whether
// it is stopped, each host's recent crashes and the host the current token was minted for. It is
// one paginated Query, whatever the number of orgs. With org set, only that org's apps (a plan
// preview's, say), read as Apps reads them.
func (s *AppStore) Hosting(ctx context.Context, org string) ([]apps.App, error) {
	q := &dynamodb.QueryInput{
		TableName: &s.tables.Control, IndexName: aws.String(indexGSI1),
		KeyConditionExpression:    aws.String("gsi1pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: indexApps}},
	}
	if org != "" {
		q.KeyConditionExpression = aws.String("gsi1pk = :pk AND gsi1sk BETWEEN :from AND :to")
		q.ExpressionAttributeValues[":from"] = &types.AttributeValueMemberS{Value: org + "#"}
		q.ExpressionAttributeValues[":to"] = &types.AttributeValueMemberS{Value: org + "$"}
	}
	p := dynamodb.NewQueryPaginator(s.db, q)
	var out []apps.App
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing the apps to host: %w", err)
		}
		for _, item := range page.Items {
			a, err := decodeApp(item)
			if err != nil {
				return nil, err
			}
			out = append(out, a)
		}
	}
	return out, nil
}

// Releases answers an app's releases newest first, limit at most, before cursor (the last number
// returned).
func (s *AppStore) Releases(ctx context.Context, org, name string, limit int, cursor string) ([]apps.Release, string, error) {
	below := apps.MaxRelease + 1
	if cursor != "" {
		n, err := strconv.Atoi(cursor)
		if err != nil || n < 1 {
			return nil, "", fmt.Errorf("release cursor %q is not a release number", cursor)
		}
		below = n
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: &s.tables.Control, ConsistentRead: aws.Bool(true), ScanIndexForward: aws.Bool(false),
		KeyConditionExpression: aws.String("pk = :pk AND sk BETWEEN :lo AND :hi"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: appPK(org, name)},
			":lo": &types.AttributeValueMemberS{Value: releaseSK(1)}, ":hi": &types.AttributeValueMemberS{Value: releaseSK(below - 1)},
		},
		Limit: aws.Int32(int32(limit + 1)),
	})
	if err != nil {
		return nil, "", fmt.Errorf("listing app %s/%s's releases: %w", org, name, err)
	}
	var items []releaseItem
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
		return nil, "", fmt.Errorf("decoding releases: %w", err)
	}
	list := make([]apps.Release, 0, len(items))
	for _, it := range items {
		list = append(list, it.Release)
	}
	list, next := cut(list, limit, func(r apps.Release) string { return strconv.Itoa(r.Number) })
	return list, next, nil
}

// maxUploadAttempts bounds CreateRelease's retries. Each round one of the racing uploads wins, so
// N uploads at once all finish within N rounds; 25 is more uploads to one app at one moment than
// any deploy pipeline makes.
const maxUploadAttempts = 25

// CreateRelease records r as org's next release of app r.App and answers it numbered. The release
// item and the app's counter are written in one transaction, conditional on the counter being
// what was read, so uploads racing each other get distinct, gapless numbers. The first release
// creates the app. Every release makes the app deploying and clears a failure: uploading asks for
// it to run, a stopped app included.
func (s *AppStore) CreateRelease(ctx context.Context, org string, r apps.Release) (apps.Release, error) {
	return s.createRelease(ctx, org, r, false)
}

func (s *AppStore) createRelease(ctx context.Context, org string, r apps.Release, mustExist bool) (apps.Release, error) {
	for attempt := range maxUploadAttempts {
		cur, exists, err := s.app(ctx, org, r.App)
		if err != nil {
			return r, err
		}
		if mustExist && !exists {
			return r, fmt.Errorf("app %s/%s: %w", org, r.App, records.ErrNotFound)
		}
		r.Number = cur.Release + 1
		if r.Number > apps.MaxRelease {
			return r, fmt.Errorf("app %s/%s has had %d releases, the most a host name has room for; delete it and start again", org, r.App, apps.MaxRelease)
		}
		writes, err := s.releaseWrites(org, r, cur, exists)
		if err != nil {
			return r, err
		}
		_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: writes})
		if err == nil {
			return r, nil
		}
		if !lostRace(err) {
			return r, fmt.Errorf("storing release %d of app %s/%s: %w", r.Number, org, r.App, err)
		}
		// Another upload took the number: back off a little, at random, so the losers spread out.
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(time.Duration(mrand.IntN(5*(attempt+1))) * time.Millisecond):
		}
	}
	return r, ErrBusy
}

// releaseWrites are the release item and the app's move to it, each conditional on nobody having
// taken the number first.
func (s *AppStore) releaseWrites(org string, r apps.Release, cur apps.App, exists bool) ([]types.TransactWriteItem, error) {
	pk := appPK(org, r.App)
	rel, err := attributevalue.MarshalMap(releaseItem{PK: pk, SK: releaseSK(r.Number), Release: r})
	if err != nil {
		return nil, fmt.Errorf("encoding release: %w", err)
	}
	relPut := types.TransactWriteItem{Put: &types.Put{TableName: &s.tables.Control, Item: rel, ConditionExpression: aws.String("attribute_not_exists(pk)")}}
	if !exists {
		a := apps.App{Org: org, Name: r.App, Release: r.Number, SHA256: r.SHA256, Launch: r.Launch, State: apps.StateDeploying, CreatedAt: r.CreatedAt, UpdatedAt: r.CreatedAt}
		item, err := attributevalue.MarshalMap(appItem{PK: pk, SK: "app", GSI1PK: indexApps, GSI1SK: org + "#" + r.App, App: a})
		if err != nil {
			return nil, fmt.Errorf("encoding app: %w", err)
		}
		return []types.TransactWriteItem{
			{Put: &types.Put{TableName: &s.tables.Control, Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
			relPut,
		}, nil
	}
	values := map[string]any{
		":n": r.Number, ":prev": cur.Release, ":sha": r.SHA256, ":deploying": apps.StateDeploying, ":now": r.CreatedAt,
	}
	set, remove := "SET #release = :n, #sha = :sha, #state = :deploying, updated_at = :now", " REMOVE failed_release, failed_host, failed_why"
	if r.Launch != nil {
		set, values[":launch"] = set+", launch = :launch", r.Launch
	} else {
		remove += ", launch"
	}
	vals, err := marshalValues(values)
	if err != nil {
		return nil, err
	}
	return []types.TransactWriteItem{
		{Update: &types.Update{
			TableName: &s.tables.Control, Key: keyOf(pk, "app"),
			UpdateExpression:          aws.String(set + remove),
			ConditionExpression:       aws.String("#release = :prev"),
			ExpressionAttributeNames:  pick(appNames, "#release", "#sha", "#state"),
			ExpressionAttributeValues: vals,
		}},
		relPut,
	}, nil
}

// lostRace tells a transaction that another writer beat: a condition on what was read, or a
// concurrent transaction on the same item.
func lostRace(err error) bool {
	var tc *types.TransactionCanceledException
	if !errors.As(err, &tc) {
		return false
	}
	return slices.ContainsFunc(tc.CancellationReasons, func(r types.CancellationReason) bool {
		code := aws.ToString(r.Code)
		return code == "ConditionalCheckFailed" || code == "TransactionConflict"
	})
}

// Rollback records a new release of app with release from's sources; records.ErrNotFound if the app or
// that release does not exist.
func (s *AppStore) Rollback(ctx context.Context, org, name string, from int, now time.Time) (apps.Release, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &s.tables.Control, Key: keyOf(appPK(org, name), releaseSK(from)), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return apps.Release{}, fmt.Errorf("reading release %d of app %s/%s: %w", from, org, name, err)
	}
	if out.Item == nil {
		return apps.Release{}, fmt.Errorf("release %d of app %s/%s: %w", from, org, name, records.ErrNotFound)
	}
	var old releaseItem
	if err := attributevalue.UnmarshalMap(out.Item, &old); err != nil {
		return apps.Release{}, fmt.Errorf("decoding release: %w", err)
	}
	r := apps.Release{
		App: name, SHA256: old.SHA256, Bytes: old.Bytes, Note: fmt.Sprintf("rollback to release %d", from),
		CreatedAt: now.UTC(), RollbackOf: from, Launch: old.Launch,
	}
	return s.createRelease(ctx, org, r, true)
}

// SetStopped stops or starts an app and answers it. Stopping forgets what was live and registered
// (the beat stops the hosts); starting a stopped or failed app makes it deploying again, and
// starting one that is deploying or live changes nothing.
func (s *AppStore) SetStopped(ctx context.Context, org, name string, stopped bool, now time.Time) (apps.App, error) {
	in := &dynamodb.UpdateItemInput{
		TableName: &s.tables.Control, Key: keyOf(appPK(org, name), "app"),
		ExpressionAttributeNames:            pick(appNames, "#state"),
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	vals := map[string]any{":now": now.UTC()}
	if stopped {
		in.UpdateExpression = aws.String("SET #state = :stopped, updated_at = :now REMOVE live_host, live_release, registered, registered_pod, registered_at, token_host")
		in.ConditionExpression = aws.String("attribute_exists(pk)")
		vals[":stopped"] = apps.StateStopped
	} else {
		in.UpdateExpression = aws.String("SET #state = :deploying, updated_at = :now REMOVE failed_release, failed_host, failed_why")
		in.ConditionExpression = aws.String("attribute_exists(pk) AND #state IN (:stopped, :failed)")
		vals[":stopped"], vals[":failed"], vals[":deploying"] = apps.StateStopped, apps.StateFailed, apps.StateDeploying
	}
	var err error
	if in.ExpressionAttributeValues, err = marshalValues(vals); err != nil {
		return apps.App{}, err
	}
	out, err := s.db.UpdateItem(ctx, in)
	var failed *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &failed) && failed.Item == nil:
		return apps.App{}, fmt.Errorf("app %s/%s: %w", org, name, records.ErrNotFound)
	case errors.As(err, &failed):
		return decodeApp(failed.Item) // already running or on its way: nothing to start
	case err != nil:
		return apps.App{}, fmt.Errorf("setting app %s/%s stopped=%v: %w", org, name, stopped, err)
	}
	return decodeApp(out.Attributes)
}

// maxBatch is the most items one TransactWriteItems takes.
const maxBatch = 100

// Delete removes an app with its releases and host tokens; records.ErrNotFound if there is none. The app
// item goes last, in the last transaction, so a Delete cut short leaves the app in place and may
// simply be retried. Once it is gone the beat stops whatever hosts remain: nothing wants them.
func (s *AppStore) Delete(ctx context.Context, org, name string) error {
	if _, err := s.App(ctx, org, name); err != nil {
		return err
	}
	pk := appPK(org, name)
	keys, err := s.keys(ctx, &dynamodb.QueryInput{
		TableName: &s.tables.Control, ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :release)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}, ":release": &types.AttributeValueMemberS{Value: "release#"}},
	})
	if err != nil {
		return err
	}
	hosts, err := s.keys(ctx, &dynamodb.QueryInput{
		TableName: &s.tables.Control, IndexName: aws.String(indexGSI1),
		KeyConditionExpression:    aws.String("gsi1pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "hosts#" + org + "#" + name}},
	})
	if err != nil {
		return err
	}
	keys = append(append(hosts, keys...), keyOf(pk, "app"))
	for chunk := range slices.Chunk(keys, maxBatch) {
		writes := make([]types.TransactWriteItem, 0, len(chunk))
		for _, k := range chunk {
			writes = append(writes, types.TransactWriteItem{Delete: &types.Delete{TableName: &s.tables.Control, Key: k}})
		}
		if _, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: writes}); err != nil {
			return fmt.Errorf("deleting app %s/%s: %w", org, name, err)
		}
	}
	return nil
}

// keys answers the pk and sk of every item a query finds, page after page.
func (s *AppStore) keys(ctx context.Context, in *dynamodb.QueryInput) ([]map[string]types.AttributeValue, error) {
	in.ProjectionExpression = aws.String("pk, sk")
	p := dynamodb.NewQueryPaginator(s.db, in)
	var out []map[string]types.AttributeValue
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing items to delete: %w", err)
		}
		for _, item := range page.Items {
			out = append(out, map[string]types.AttributeValue{attrPK: item[attrPK], attrSK: item[attrSK]})
		}
	}
	return out, nil
}

// marshalValues encodes expression values.
func marshalValues(m map[string]any) (map[string]types.AttributeValue, error) {
	out := make(map[string]types.AttributeValue, len(m))
	for k, v := range m {
		av, err := attributevalue.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", k, err)
		}
		out[k] = av
	}
	return out, nil
}

// pick is the part of names an expression uses: DynamoDB refuses unused placeholders.
func pick(names map[string]string, keys ...string) map[string]string {
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		out[k] = names[k]
	}
	return out
}

func pickValues(vals map[string]types.AttributeValue, keys ...string) map[string]types.AttributeValue {
	out := make(map[string]types.AttributeValue, len(keys))
	for _, k := range keys {
		out[k] = vals[k]
	}
	return out
}
