package dynamo

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/outbox"
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

// What a host's registration is refused for, besides ErrNotFound for a host no token was minted for.
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

// App reads one of org's apps; ErrNotFound if there is none.
func (s *AppStore) App(ctx context.Context, org, name string) (apps.App, error) {
	a, ok, err := s.app(ctx, org, name)
	if err == nil && !ok {
		err = ErrNotFound
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
	next := ""
	if len(list) > limit {
		list = list[:limit]
		next = list[limit-1].Name
	}
	return list, next, nil
}

// Hosting is, for the beat, every app of every org with all the host plan reads of it: the
// release wanted and its sources' digest, what is live, the registered host, the failure, whether
// it is stopped, each host's recent crashes and the host the current token was minted for. It is
// one paginated Query, whatever the number of orgs.
func (s *AppStore) Hosting(ctx context.Context) ([]apps.App, error) {
	p := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName: &s.tables.Control, IndexName: aws.String(indexGSI1),
		KeyConditionExpression:    aws.String("gsi1pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: indexApps}},
	})
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
	next := ""
	if len(list) > limit {
		list = list[:limit]
		next = strconv.Itoa(list[limit-1].Number)
	}
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
			return r, fmt.Errorf("app %s/%s: %w", org, r.App, ErrNotFound)
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
		a := apps.App{Org: org, Name: r.App, Release: r.Number, SHA256: r.SHA256, State: apps.StateDeploying, CreatedAt: r.CreatedAt, UpdatedAt: r.CreatedAt}
		item, err := attributevalue.MarshalMap(appItem{PK: pk, SK: "app", GSI1PK: indexApps, GSI1SK: org + "#" + r.App, App: a})
		if err != nil {
			return nil, fmt.Errorf("encoding app: %w", err)
		}
		return []types.TransactWriteItem{
			{Put: &types.Put{TableName: &s.tables.Control, Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
			relPut,
		}, nil
	}
	vals, err := marshalValues(map[string]any{
		":n": r.Number, ":prev": cur.Release, ":sha": r.SHA256, ":deploying": apps.StateDeploying, ":now": r.CreatedAt,
	})
	if err != nil {
		return nil, err
	}
	return []types.TransactWriteItem{
		{Update: &types.Update{
			TableName: &s.tables.Control, Key: keyOf(pk, "app"),
			UpdateExpression:          aws.String("SET #release = :n, #sha = :sha, #state = :deploying, updated_at = :now REMOVE failed_release, failed_host, failed_why"),
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

// Rollback records a new release of app with release from's sources; ErrNotFound if the app or
// that release does not exist.
func (s *AppStore) Rollback(ctx context.Context, org, name string, from int, now time.Time) (apps.Release, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &s.tables.Control, Key: keyOf(appPK(org, name), releaseSK(from)), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return apps.Release{}, fmt.Errorf("reading release %d of app %s/%s: %w", from, org, name, err)
	}
	if out.Item == nil {
		return apps.Release{}, fmt.Errorf("release %d of app %s/%s: %w", from, org, name, ErrNotFound)
	}
	var old releaseItem
	if err := attributevalue.UnmarshalMap(out.Item, &old); err != nil {
		return apps.Release{}, fmt.Errorf("decoding release: %w", err)
	}
	r := apps.Release{
		App: name, SHA256: old.SHA256, Bytes: old.Bytes, Note: fmt.Sprintf("rollback to release %d", from),
		CreatedAt: now.UTC(), RollbackOf: from,
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
		in.UpdateExpression = aws.String("SET #state = :stopped, updated_at = :now REMOVE live_host, live_release, registered, token_host")
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
		return apps.App{}, fmt.Errorf("app %s/%s: %w", org, name, ErrNotFound)
	case errors.As(err, &failed):
		return decodeApp(failed.Item) // already running or on its way: nothing to start
	case err != nil:
		return apps.App{}, fmt.Errorf("setting app %s/%s stopped=%v: %w", org, name, stopped, err)
	}
	return decodeApp(out.Attributes)
}

// maxBatch is the most items one TransactWriteItems takes.
const maxBatch = 100

// Delete removes an app with its releases and host tokens; ErrNotFound if there is none. The app
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

// hostTokenBytes of randomness make a host token: 256 bits, beyond guessing, so storing its
// SHA-256 is enough, as for API keys.
const hostTokenBytes = 32

// MintHostToken makes a fresh token for host, the host the beat is about to start for org's app,
// and answers it: the beat hands it to the host, which registers with it. Only its SHA-256 is
// kept, on a host#<host> item (so a registration is one GetItem), and the app records host as the
// one its current token is for — the only host that may register. Minting again for the same host
// (a revived pod) replaces its token. ErrNotFound if the app is gone; ErrHostTaken if another
// app's host has the name.
func (s *AppStore) MintHostToken(ctx context.Context, org, app, host string) (string, error) {
	b := make([]byte, hostTokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("reading randomness for a host token: %w", err)
	}
	token := "tgh_" + base64.RawURLEncoding.EncodeToString(b)
	hpk, hsk := hostKey(host)
	item, err := attributevalue.MarshalMap(hostItem{
		PK: hpk, SK: hsk, GSI1PK: "hosts#" + org + "#" + app, GSI1SK: host, Org: org, App: app, TokenHash: hashToken(token),
	})
	if err != nil {
		return "", fmt.Errorf("encoding host: %w", err)
	}
	vals, err := marshalValues(map[string]any{":host": host, ":org": org, ":app": app})
	if err != nil {
		return "", err
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{
			TableName: &s.tables.Control, Key: keyOf(appPK(org, app), "app"),
			UpdateExpression: aws.String("SET token_host = :host"), ConditionExpression: aws.String("attribute_exists(pk)"),
			ExpressionAttributeValues: pickValues(vals, ":host"),
		}},
		{Put: &types.Put{
			TableName: &s.tables.Control, Item: item,
			ConditionExpression:       aws.String("attribute_not_exists(pk) OR (org = :org AND app = :app)"),
			ExpressionAttributeValues: pickValues(vals, ":org", ":app"),
		}},
	}})
	if _, failed := isConditionFailed(err, 0); failed {
		return "", fmt.Errorf("app %s/%s: %w", org, app, ErrNotFound)
	}
	if _, failed := isConditionFailed(err, 1); failed {
		return "", fmt.Errorf("host %s: %w", host, ErrHostTaken)
	}
	if err != nil {
		return "", fmt.Errorf("minting a token for host %s: %w", host, err)
	}
	return token, nil
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Register records that host, presenting token, registered, and answers whose host it is. The
// host item is one GetItem; the token's hash is compared in constant time; then the app records
// host as registered, conditional on it still wanting that host (its current token is host's and
// it is neither stopped nor failed). ErrNotFound for a host no token was minted for,
// ErrBadHostToken for the wrong token, ErrHostNotWanted when the app moved on or is gone.
func (s *AppStore) Register(ctx context.Context, host, token string, now time.Time) (org, app string, err error) {
	hpk, hsk := hostKey(host)
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.tables.Control, Key: keyOf(hpk, hsk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return "", "", fmt.Errorf("reading host %s: %w", host, err)
	}
	if out.Item == nil {
		return "", "", fmt.Errorf("host %s: %w", host, ErrNotFound)
	}
	var h hostItem
	if err := attributevalue.UnmarshalMap(out.Item, &h); err != nil {
		return "", "", fmt.Errorf("decoding host %s: %w", host, err)
	}
	if subtle.ConstantTimeCompare([]byte(hashToken(token)), []byte(h.TokenHash)) != 1 {
		return h.Org, h.App, ErrBadHostToken
	}
	vals, err := marshalValues(map[string]any{":host": host, ":now": now.UTC(), ":deploying": apps.StateDeploying, ":live": apps.StateLive})
	if err != nil {
		return "", "", err
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.tables.Control, Key: keyOf(appPK(h.Org, h.App), "app"),
		UpdateExpression:          aws.String("SET registered = :host, updated_at = :now"),
		ConditionExpression:       aws.String("attribute_exists(pk) AND token_host = :host AND #state IN (:deploying, :live)"),
		ExpressionAttributeNames:  pick(appNames, "#state"),
		ExpressionAttributeValues: vals,
	})
	var failed *types.ConditionalCheckFailedException
	if errors.As(err, &failed) {
		return h.Org, h.App, ErrHostNotWanted
	}
	if err != nil {
		return "", "", fmt.Errorf("registering host %s: %w", host, err)
	}
	return h.Org, h.App, nil
}

// MarkLive records, for the beat, that host — release's host, registered — went live: it is the
// live host and release, the app is live, and an app.live event is written in the same
// transaction. ErrStale if the app has moved on to another release or was stopped meanwhile (the
// beat drops the step; the next beat sees the new state); ErrNotFound if it is gone.
func (s *AppStore) MarkLive(ctx context.Context, org, app, host string, release int, now time.Time) error {
	ev := outbox.ForApp(outbox.AppLive, org, app, release, host, "", now)
	return s.transition(ctx, org, app, release, ev,
		"SET live_host = :host, live_release = :release, #state = :live, updated_at = :now REMOVE failed_release, failed_host, failed_why",
		map[string]any{":host": host, ":release": release, ":live": apps.StateLive, ":now": now.UTC()})
}

// maxFailedWhy bounds what a failure keeps of its host's output: about fifty 80-column lines,
// enough to see an install's or a crash's last error, and small beside DynamoDB's 400 KB item.
const maxFailedWhy = 4 << 10

// MarkFailed records, for the beat, that release failed on host — it did not start, register or
// stay up — with reason and the host's last lines (their tail, within 4 KiB, is kept as
// failed_why), and writes an app.failed event in the same transaction. The app is failed until the
// next upload or start; a live host of an earlier release keeps serving. ErrStale if the app has
// moved on to another release or was stopped; ErrNotFound if it is gone.
func (s *AppStore) MarkFailed(ctx context.Context, org, app string, release int, host, reason, lines string, now time.Time) error {
	why := failedWhy(reason, lines)
	ev := outbox.ForApp(outbox.AppFailed, org, app, release, host, why, now)
	return s.transition(ctx, org, app, release, ev,
		"SET #state = :failed, failed_release = :release, failed_host = :host, failed_why = :why, updated_at = :now",
		map[string]any{":host": host, ":release": release, ":failed": apps.StateFailed, ":why": why, ":now": now.UTC()})
}

// failedWhy is reason, then as many of the last lines as fit.
func failedWhy(reason, lines string) string {
	lines = strings.TrimRight(lines, "\n")
	if lines == "" {
		return reason
	}
	room := maxFailedWhy - len(reason) - 1
	if room <= 0 {
		return strings.ToValidUTF8(reason[:maxFailedWhy], "")
	}
	if len(lines) > room {
		lines = lines[len(lines)-room:]
		if i := strings.IndexByte(lines, '\n'); i >= 0 {
			lines = lines[i+1:] // start at a whole line
		}
	}
	// A cut may fall inside a character; DynamoDB stores only valid UTF-8.
	return reason + "\n" + strings.ToValidUTF8(lines, "")
}

// transition updates the app with update, conditional on release still being the one wanted and
// the app not stopped, and writes ev with it.
func (s *AppStore) transition(ctx context.Context, org, app string, release int, ev outbox.Event, update string, values map[string]any) error {
	values[":stopped"] = apps.StateStopped
	vals, err := marshalValues(values)
	if err != nil {
		return err
	}
	evPut, err := s.tables.eventPut(ev)
	if err != nil {
		return err
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{
			TableName: &s.tables.Control, Key: keyOf(appPK(org, app), "app"), UpdateExpression: &update,
			ConditionExpression:                 aws.String("#release = :release AND #state <> :stopped"),
			ExpressionAttributeNames:            pick(appNames, "#release", "#state"),
			ExpressionAttributeValues:           vals,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}},
		evPut,
	}})
	if old, failed := isConditionFailed(err, 0); failed {
		if len(old) == 0 {
			return fmt.Errorf("app %s/%s: %w", org, app, ErrNotFound)
		}
		return fmt.Errorf("app %s/%s release %d: %w", org, app, release, ErrStale)
	}
	if err != nil {
		return fmt.Errorf("recording %s for app %s/%s: %w", ev.Type, org, app, err)
	}
	return nil
}

// What the app keeps of its hosts' crashes: the last ten of each host (twice the five in ten
// minutes after which the runner stops reviving one), and no host whose last crash is a day old.
const (
	keptCrashes = 10
	crashMemory = 24 * time.Hour
)

// RecordCrash adds, for the beat, a crash of host at at to the app's record, where the next
// beats find it (App.Crashes); each host keeps its last ten, and hosts that have not crashed for
// a day are forgotten. Only the beat writes crashes, one beat at a time, so reading then writing
// the map loses nothing. ErrNotFound if the app is gone.
func (s *AppStore) RecordCrash(ctx context.Context, org, app, host string, at time.Time) error {
	a, err := s.App(ctx, org, app)
	if err != nil {
		return err
	}
	crashes := map[string][]time.Time{}
	for h, times := range a.Crashes {
		if len(times) > 0 && at.Sub(times[len(times)-1]) < crashMemory {
			crashes[h] = times
		}
	}
	times := append(crashes[host], at.UTC())
	crashes[host] = times[max(0, len(times)-keptCrashes):]
	vals, err := marshalValues(map[string]any{":crashes": crashes})
	if err != nil {
		return err
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.tables.Control, Key: keyOf(appPK(org, app), "app"),
		UpdateExpression: aws.String("SET crashes = :crashes"), ConditionExpression: aws.String("attribute_exists(pk)"),
		ExpressionAttributeValues: vals,
	})
	var failed *types.ConditionalCheckFailedException
	if errors.As(err, &failed) {
		return fmt.Errorf("app %s/%s: %w", org, app, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("recording a crash of host %s: %w", host, err)
	}
	return nil
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
