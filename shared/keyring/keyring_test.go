package keyring_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/keyring"
	"github.com/tidegate/tidegate/shared/secretbox"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// env is a control table and a KMS key of the test's own in the stand-ins.
type env struct {
	db    *dynamodb.Client
	table string
	kms   *kms.Client
	key   string
}

func newEnv(t *testing.T) env {
	tables, db := testenv.Tables(t)
	key, c := testenv.KMSKey(t)
	return env{db: db, table: tables.Control, kms: c, key: key}
}

// ring is a Ring as a freshly started function has it: nothing cached.
func (e env) ring(t *testing.T, key string) *keyring.Ring {
	t.Helper()
	r, err := keyring.New(e.kms, e.db, e.table, key)
	if err != nil {
		t.Fatalf("keyring.New: %v", err)
	}
	return r
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

func mustSeal(t *testing.T, r *keyring.Ring, owner, value, binding string) string {
	t.Helper()
	sealed, err := r.Seal(ctx(t), owner, value, binding)
	if err != nil {
		t.Fatalf("Seal(%s): %v", owner, err)
	}
	return sealed
}

func TestSealOpenThroughKMS(t *testing.T) {
	e := newEnv(t)
	acme := keyring.Org("acme")
	sealed := mustSeal(t, e.ring(t, e.key), acme, "sk-live-123", "acme/API_KEY")
	if strings.Contains(sealed, "sk-live") {
		t.Errorf("Seal = %q, which holds the value", sealed)
	}
	// Another process (another function, a later cold start) opens it: the data key was stored
	// wrapped, and KMS unwraps it.
	other := e.ring(t, e.key)
	if got, err := other.Open(ctx(t), acme, sealed, "acme/API_KEY"); err != nil || got != "sk-live-123" {
		t.Errorf("a second ring's Open = %q, %v; want the value", got, err)
	}
	if _, err := other.Open(ctx(t), acme, sealed, "acme/OTHER"); !errors.Is(err, secretbox.ErrOpen) {
		t.Errorf("Open with another binding = %v, want ErrOpen", err)
	}
	var n int
	out, err := e.db.Scan(ctx(t), &dynamodb.ScanInput{TableName: &e.table})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range out.Items {
		if pk := it["pk"].(*types.AttributeValueMemberS).Value; pk == "keyring#"+acme {
			n++
			if _, plain := it["plaintext"]; plain {
				t.Errorf("a data key record holds its plaintext")
			}
		}
	}
	if n != 1 {
		t.Errorf("acme has %d data key records after one Seal, want 1", n)
	}
}

// TestOwnersKeysDoNotCross: one org's sealed value does not open as another's, even when the
// other's records are made to hold the first org's wrapped data key: KMS unwraps a data key only
// with the encryption context of the owner it was made for.
func TestOwnersKeysDoNotCross(t *testing.T) {
	e := newEnv(t)
	r := e.ring(t, e.key)
	a, b := keyring.Org("a"), keyring.Org("b")
	sealed := mustSeal(t, r, a, "a's secret", "shared/NAME")
	mustSeal(t, r, b, "b's secret", "shared/NAME")
	if got, err := r.Open(ctx(t), b, sealed, "shared/NAME"); !errors.Is(err, secretbox.ErrOpen) {
		t.Errorf("org b opening org a's value = %q, %v; want ErrOpen", got, err)
	}
	// Copy a's data key record into b's partition, as someone able to write the table might.
	out, err := e.db.GetItem(ctx(t), &dynamodb.GetItemInput{TableName: &e.table, Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "keyring#" + a}, "sk": &types.AttributeValueMemberS{Value: "seal#00000001"},
	}})
	if err != nil || out.Item == nil {
		t.Fatalf("reading a's data key record: %v", err)
	}
	out.Item["pk"] = &types.AttributeValueMemberS{Value: "keyring#" + b}
	out.Item["sk"] = &types.AttributeValueMemberS{Value: "seal#00000002"}
	out.Item["generation"] = &types.AttributeValueMemberN{Value: "2"}
	if _, err := e.db.PutItem(ctx(t), &dynamodb.PutItemInput{TableName: &e.table, Item: out.Item}); err != nil {
		t.Fatal(err)
	}
	got, err := e.ring(t, e.key).Open(ctx(t), b, sealed, "shared/NAME")
	if err == nil || !strings.Contains(err.Error(), "unwrapping") {
		t.Errorf("org b opening org a's value with a's data key copied to b = %q, %v; want KMS to refuse the unwrap", got, err)
	}
}

func TestRotation(t *testing.T) {
	e := newEnv(t)
	r := e.ring(t, e.key)
	owner := keyring.Tenant("team-a")
	old := mustSeal(t, r, owner, "v1", "webhook#w1")
	oldID, _ := secretbox.SealedKeyID(old)
	fp, err := r.Fingerprint(ctx(t), owner, "NAME", "v1")
	if err != nil {
		t.Fatal(err)
	}

	// A new data key under the same KMS key.
	newID, err := r.Rotate(ctx(t), owner)
	if err != nil || newID == oldID {
		t.Fatalf("Rotate = %s, %v; want a new key id other than %s", newID, err, oldID)
	}
	if id := sealedID(t, mustSeal(t, r, owner, "v2", "webhook#w1")); id != newID {
		t.Errorf("after Rotate, Seal used key %s, want the new %s", id, newID)
	}
	// A new KMS key configured: the first Seal makes a data key under it.
	newKMS, _ := testenv.KMSKey(t)
	rotated := e.ring(t, newKMS)
	sealedNew := mustSeal(t, rotated, owner, "v3", "webhook#w1")
	if id := sealedID(t, sealedNew); id == oldID || id == newID {
		t.Errorf("with a new KMS key, Seal used key %s, one of the old KMS key's", id)
	}
	if cur, _ := rotated.Current(ctx(t), owner); cur != sealedID(t, sealedNew) {
		t.Errorf("Current = %s, want the key the last Seal used", cur)
	}
	for _, r := range []*keyring.Ring{rotated, e.ring(t, e.key)} {
		if got, err := r.Open(ctx(t), owner, old, "webhook#w1"); err != nil || got != "v1" {
			t.Errorf("after two rotations, Open(a value sealed before) = %q, %v; want v1", got, err)
		}
		if got, err := r.Open(ctx(t), owner, sealedNew, "webhook#w1"); err != nil || got != "v3" {
			t.Errorf("Open(a value sealed under the new KMS key) = %q, %v; want v3", got, err)
		}
	}
	// Fingerprints outlive rotations, so an unchanged value does not look changed.
	if again, err := rotated.Fingerprint(ctx(t), owner, "NAME", "v1"); err != nil || again != fp {
		t.Errorf("Fingerprint after rotations = %q, %v; want the same %q", again, err, fp)
	}
}

func sealedID(t *testing.T, sealed string) string {
	t.Helper()
	id, err := secretbox.SealedKeyID(sealed)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestFingerprint(t *testing.T) {
	e := newEnv(t)
	r := e.ring(t, e.key)
	a, b := keyring.Org("a"), keyring.Org("b")
	fp := func(r *keyring.Ring, owner, name, value string) string {
		t.Helper()
		s, err := r.Fingerprint(ctx(t), owner, name, value)
		if err != nil {
			t.Fatalf("Fingerprint: %v", err)
		}
		return s
	}
	want := fp(r, a, "API_KEY", "v1")
	if got := fp(e.ring(t, e.key), a, "API_KEY", "v1"); got != want {
		t.Errorf("another ring's Fingerprint = %q, want the same %q", got, want)
	}
	for name, other := range map[string]string{
		"another value": fp(r, a, "API_KEY", "v2"),
		"another owner": fp(r, b, "API_KEY", "v1"),
	} {
		if other == want {
			t.Errorf("Fingerprint with %s = the same %q", name, want)
		}
	}
}

// TestTwoFunctionsMakeTheFirstKey: a ring that last read an owner before another made the owner's
// first data key uses that key rather than making a second of the same generation.
func TestTwoFunctionsMakeTheFirstKey(t *testing.T) {
	e := newEnv(t)
	one, two := e.ring(t, e.key), e.ring(t, e.key)
	owner := keyring.Org("acme")
	if _, err := two.Fingerprint(ctx(t), owner, "N", "v"); err != nil { // two reads acme: no sealing key yet
		t.Fatal(err)
	}
	first := mustSeal(t, one, owner, "v1", "acme/N")
	second := mustSeal(t, two, owner, "v2", "acme/N")
	if sealedID(t, first) != sealedID(t, second) {
		t.Errorf("two rings sealed under %s and %s; want the one key the first made", sealedID(t, first), sealedID(t, second))
	}
	if got, err := one.Open(ctx(t), owner, second, "acme/N"); err != nil || got != "v2" {
		t.Errorf("Open = %q, %v; want v2", got, err)
	}
}

func TestNewNeedsAKey(t *testing.T) {
	if _, err := keyring.New(nil, nil, "t", ""); err == nil {
		t.Errorf("keyring.New with no KMS key succeeded")
	}
}
