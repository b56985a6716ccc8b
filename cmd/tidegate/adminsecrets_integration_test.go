package main

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/deliveryplan"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/keyring"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/secretbox"
	"github.com/tidegate/tidegate/shared/signing"
)

// TestSecretsRotateAndReseal: after `admin secrets rotate --all`, secrets sealed before still
// open and new ones use the new keys; `admin secrets reseal` seals every value again under its
// owner's current key (values an older deployment's configured key sealed too, given that key,
// and a webhook secret stored unsealed), and a second run finds nothing to do.
func TestSecretsRotateAndReseal(t *testing.T) {
	tables, db := testenv.Tables(t)
	st := testenv.AWS(t)
	kmsKey, kc := testenv.KMSKey(t)
	for k, v := range map[string]string{
		config.EnvControlTable: tables.Control, config.EnvDynamoDBEndpoint: st.DynamoDBEndpoint,
		config.EnvKMSKey: kmsKey, config.EnvKMSEndpoint: st.KMSEndpoint,
		"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "tidegate", "AWS_SECRET_ACCESS_KEY": "tidegate", "AWS_PROFILE": "",
	} {
		t.Setenv(k, v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ring := func() *keyring.Ring {
		r, err := keyring.New(kc, db, tables.Control, kmsKey)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := ring()
	secrets := dynamo.NewSecretStore(db, tables.Control)
	put := func(org, name, sealed string) {
		if _, err := secrets.Put(ctx, org, name, sealed, "fp", time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	seal := func(owner, value, binding string) string {
		s, err := r.Seal(ctx, owner, value, binding)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	put("acme", "API_KEY", seal(keyring.Org("acme"), "acme-value", apps.SecretBinding("acme", "API_KEY")))
	legacyKey := secretbox.NewKey()
	legacy, _ := secretbox.New(legacyKey)
	old, _ := legacy.Seal("from-the-old-key", apps.SecretBinding("beta", "DB_URL"))
	put("beta", "DB_URL", old)
	key, _ := signing.NewSecret()
	now := time.Now().UTC()
	hook := func(id, tenant string) deliveryplan.Webhook {
		return deliveryplan.Webhook{ID: id, Tenant: tenant, URL: "https://hooks.example.com/" + id, Events: []outbox.Type{outbox.JobQueued},
			CreatedAt: now, UpdatedAt: now, Secrets: []deliveryplan.Secret{{Key: key}}}
	}
	if err := dynamo.NewWebhookStore(db, tables, r).CreateWebhook(ctx, hook("wh_sealed", "ml"), 5); err != nil {
		t.Fatal(err)
	}
	if err := dynamo.NewWebhookStore(db, tables, nil).CreateWebhook(ctx, hook("wh_plain", "ml"), 5); err != nil {
		t.Fatal(err)
	}

	out, err := admin(t, "secrets", "rotate", "--all")
	if err != nil || !strings.Contains(out, "org/acme: new data key") || !strings.Contains(out, "tenant/ml: new data key") || !strings.Contains(out, "rotated 2 owners") {
		t.Fatalf("secrets rotate --all = %v\n%s", err, out)
	}
	// Rotated, not yet re-sealed: everything sealed before still opens, and a new value uses the new key.
	fresh := ring()
	if got := open(t, fresh, secrets, "acme", "API_KEY"); got != "acme-value" {
		t.Errorf("after rotate, acme's API_KEY opens to %q", got)
	}
	cur, _ := fresh.Current(ctx, keyring.Org("acme"))
	if sealed, err := fresh.Seal(ctx, keyring.Org("acme"), "v", "acme/NEW"); err != nil || sealedID(sealed) != cur {
		t.Errorf("after rotate, a new value is sealed under %s (%v), want the new key %s", sealedID(sealed), err, cur)
	}

	if out, err := admin(t, "secrets", "reseal"); err == nil || !strings.Contains(err.Error(), "re-sealing org beta's secret DB_URL") {
		t.Errorf("reseal without the legacy key = %v\n%s; want it to stop at beta's DB_URL, which it cannot open", err, out)
	}
	file := filepath.Join(t.TempDir(), "legacy-key")
	if err := os.WriteFile(file, []byte(base64.StdEncoding.EncodeToString(legacyKey)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = admin(t, "secrets", "reseal", "--legacy-key-file", file)
	if err != nil || !strings.Contains(out, "org beta's secret DB_URL: "+dynamo.ResealDone) || !strings.Contains(out, "webhook wh_plain's signing secrets: "+dynamo.ResealDone) {
		t.Fatalf("reseal --legacy-key-file = %v\n%s", err, out)
	}
	fresh = ring()
	for _, s := range []struct{ org, name, want string }{{"acme", "API_KEY", "acme-value"}, {"beta", "DB_URL", "from-the-old-key"}} {
		sealed, _ := secrets.Sealed(ctx, s.org)
		cur, _ := fresh.Current(ctx, keyring.Org(s.org))
		if id := sealedID(sealed[s.name]); id != cur {
			t.Errorf("after reseal, %s's %s is under key %s, want the current %s", s.org, s.name, id, cur)
		}
		if got := open(t, fresh, secrets, s.org, s.name); got != s.want {
			t.Errorf("after reseal, %s's %s opens to %q, want %q", s.org, s.name, got, s.want)
		}
	}
	for _, id := range []string{"wh_sealed", "wh_plain"} {
		w, err := dynamo.NewWebhookStore(db, tables, fresh).Webhook(ctx, "ml", id)
		if err != nil || len(w.Secrets) != 1 || w.Secrets[0].Key.String() != key.String() {
			t.Errorf("after reseal, webhook %s = %+v, %v; want its secret", id, w.Secrets, err)
		}
	}
	if out, err := admin(t, "secrets", "reseal"); err != nil || !strings.Contains(out, "re-sealed 0, 4 already under the current key") {
		t.Errorf("a second reseal = %v\n%s; want nothing to do", err, out)
	}
	if out, err := admin(t, "secrets", "rotate", "acme"); err == nil || !strings.Contains(err.Error(), "org/NAME") {
		t.Errorf("rotate acme = %v\n%s; want it refused, saying how owners are named", err, out)
	}
}

func sealedID(sealed string) string {
	id, _ := secretbox.SealedKeyID(sealed)
	return id
}

func open(t *testing.T, r *keyring.Ring, s *dynamo.SecretStore, org, name string) string {
	t.Helper()
	sealed, err := s.Sealed(context.Background(), org)
	if err != nil {
		t.Fatal(err)
	}
	v, err := r.Open(context.Background(), keyring.Org(org), sealed[name], apps.SecretBinding(org, name))
	if err != nil {
		t.Errorf("opening %s's %s: %v", org, name, err)
	}
	return v
}
