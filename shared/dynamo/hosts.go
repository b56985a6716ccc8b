package dynamo

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/records"
)

// What the hosting beat and a registering host write of apps: host tokens, registration, going
// live, failing, crashes.

// hostTokenBytes of randomness make a host token: 256 bits, beyond guessing, so storing its
// SHA-256 is enough, as for API keys.
const hostTokenBytes = 32

// MintHostToken makes a fresh token for host, the host the beat is about to start for org's app,
// and answers it: the beat hands it to the host, which registers with it. Only its SHA-256 is
// kept, on a host#<host> item (so a registration is one GetItem), and the app records host as the
// one its current token is for — the only host that may register. Minting again for the same host
// (a revived pod) replaces its token. records.ErrNotFound if the app is gone; ErrHostTaken if another
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
		return "", fmt.Errorf("app %s/%s: %w", org, app, records.ErrNotFound)
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

// Register records that host, presenting token, registered from the pod whose UID is pod, and
// answers whose host it is. The host item is one GetItem; the token's hash is compared in constant
// time; then the app records host as registered by pod, conditional on it still wanting that host
// (its current token is host's and it is neither stopped nor failed). The registration counts for
// that pod only: the beat makes host live only while the pod running under its name has that UID.
// records.ErrNotFound for a host no token was minted for, ErrBadHostToken for the wrong token,
// ErrHostNotWanted when the app moved on or is gone.
func (s *AppStore) Register(ctx context.Context, host, pod, token string, now time.Time) (org, app string, err error) {
	hpk, hsk := hostKey(host)
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.tables.Control, Key: keyOf(hpk, hsk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return "", "", fmt.Errorf("reading host %s: %w", host, err)
	}
	if out.Item == nil {
		return "", "", fmt.Errorf("host %s: %w", host, records.ErrNotFound)
	}
	var h hostItem
	if err := attributevalue.UnmarshalMap(out.Item, &h); err != nil {
		return "", "", fmt.Errorf("decoding host %s: %w", host, err)
	}
	if subtle.ConstantTimeCompare([]byte(hashToken(token)), []byte(h.TokenHash)) != 1 {
		return h.Org, h.App, ErrBadHostToken
	}
	vals, err := marshalValues(map[string]any{":host": host, ":pod": pod, ":now": now.UTC(), ":deploying": apps.StateDeploying, ":live": apps.StateLive})
	if err != nil {
		return "", "", err
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.tables.Control, Key: keyOf(appPK(h.Org, h.App), "app"),
		UpdateExpression:          aws.String("SET registered = :host, registered_pod = :pod, registered_at = :now, updated_at = :now"),
		ConditionExpression:       aws.String("attribute_exists(pk) AND token_host = :host AND #state IN (:deploying, :live)"),
		ExpressionAttributeNames:  pick(appNames, "#state"),
		ExpressionAttributeValues: vals,
	})
	if conditionFailed(err) {
		return h.Org, h.App, ErrHostNotWanted
	}
	if err != nil {
		return "", "", fmt.Errorf("registering host %s: %w", host, err)
	}
	return h.Org, h.App, nil
}

// MarkLive records, for the beat, that host — release's host, registered — went live: it is the
// live host and release, the app is live, and an app.live event is written in the same
// transaction. records.ErrStale if the app has moved on to another release or was stopped meanwhile (the
// beat drops the step; the next beat sees the new state); records.ErrNotFound if it is gone.
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
// failed_why), and writes an app.failed event in the same transaction, with the reason alone:
// the event goes to every webhook of every tenant of the org, and what the host printed may hold
// any of the org's secrets, which only a deployer reads (GET /api/v1/apps/{name}). The app is failed until the
// next upload or start; a live host of an earlier release keeps serving. records.ErrStale if the app has
// moved on to another release or was stopped; records.ErrNotFound if it is gone.
func (s *AppStore) MarkFailed(ctx context.Context, org, app string, release int, host, reason, lines string, now time.Time) error {
	why := failedWhy(reason, lines)
	ev := outbox.ForApp(outbox.AppFailed, org, app, release, host, reason, now)
	// The release item keeps the failure too, for its logs once a newer release clears the app's.
	vals, err := marshalValues(map[string]any{":host": host, ":why": why})
	if err != nil {
		return err
	}
	onRelease := types.TransactWriteItem{Update: &types.Update{
		TableName: &s.tables.Control, Key: keyOf(appPK(org, app), releaseSK(release)),
		UpdateExpression:          aws.String("SET failed_host = :host, failed_why = :why"),
		ConditionExpression:       aws.String("attribute_exists(pk)"),
		ExpressionAttributeValues: vals,
	}}
	return s.transition(ctx, org, app, release, ev,
		"SET #state = :failed, failed_release = :release, failed_host = :host, failed_why = :why, updated_at = :now",
		map[string]any{":host": host, ":release": release, ":failed": apps.StateFailed, ":why": why, ":now": now.UTC()}, onRelease)
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
// the app not stopped, and writes ev and also with it.
func (s *AppStore) transition(ctx context.Context, org, app string, release int, ev outbox.Event, update string, values map[string]any, also ...types.TransactWriteItem) error {
	values[":stopped"] = apps.StateStopped
	vals, err := marshalValues(values)
	if err != nil {
		return err
	}
	evPut, err := s.tables.eventPut(ev)
	if err != nil {
		return err
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: append([]types.TransactWriteItem{
		{Update: &types.Update{
			TableName: &s.tables.Control, Key: keyOf(appPK(org, app), "app"), UpdateExpression: &update,
			ConditionExpression:                 aws.String("#release = :release AND #state <> :stopped"),
			ExpressionAttributeNames:            pick(appNames, "#release", "#state"),
			ExpressionAttributeValues:           vals,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}},
		evPut,
	}, also...)})
	if old, failed := isConditionFailed(err, 0); failed {
		if len(old) == 0 {
			return fmt.Errorf("app %s/%s: %w", org, app, records.ErrNotFound)
		}
		return fmt.Errorf("app %s/%s release %d: %w", org, app, release, records.ErrStale)
	}
	if _, failed := isConditionFailed(err, 2); failed {
		// The release is gone while the app is not: a Delete is half-way through.
		return fmt.Errorf("release %d of app %s/%s: %w", release, org, app, records.ErrNotFound)
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
// the map loses nothing. records.ErrNotFound if the app is gone.
func (s *AppStore) RecordCrash(ctx context.Context, org, app, host string, at time.Time) error {
	return s.recordCrash(ctx, org, app, host, at, nil)
}

// RecordRevive records, for the beat, a crash of rv.Host at rv.At as RecordCrash does, and keeps
// rv, with the host's last lines, among the app's revives (apps.KeepRevive bounds them), in the
// same write.
func (s *AppStore) RecordRevive(ctx context.Context, org, app string, rv apps.Revive) error {
	return s.recordCrash(ctx, org, app, rv.Host, rv.At, &rv)
}

func (s *AppStore) recordCrash(ctx context.Context, org, app, host string, at time.Time, rv *apps.Revive) error {
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
	update, values := "SET crashes = :crashes", map[string]any{":crashes": crashes}
	if rv != nil {
		rv.At = rv.At.UTC()
		update, values[":revives"] = update+", revives = :revives", apps.KeepRevive(a.Revives, *rv)
	}
	vals, err := marshalValues(values)
	if err != nil {
		return err
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.tables.Control, Key: keyOf(appPK(org, app), "app"),
		UpdateExpression: aws.String(update), ConditionExpression: aws.String("attribute_exists(pk)"),
		ExpressionAttributeValues: vals,
	})
	if conditionFailed(err) {
		return fmt.Errorf("app %s/%s: %w", org, app, records.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("recording a crash of host %s: %w", host, err)
	}
	return nil
}
