package dynamo_test

import (
	"context"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/keyring"
	"github.com/tidegate/tidegate/shared/secretbox"
)

// writerMeanwhile is the real keyring, with an org admin changing the secret being re-sealed
// between Reseal's read and its write.
type writerMeanwhile struct {
	*keyring.Ring
	change func()
}

func (w writerMeanwhile) Seal(ctx context.Context, owner, value, binding string) (string, error) {
	if w.change != nil {
		w.change()
	}
	return w.Ring.Seal(ctx, owner, value, binding)
}

// TestResealLeavesAConcurrentChange: a value changed while Reseal re-seals it keeps the change,
// and the next run finds it under the current key already.
func TestResealLeavesAConcurrentChange(t *testing.T) {
	tables, db := testenv.Tables(t)
	ring := testenv.Keyring(t, db, tables.Control)
	ctx := context.Background()
	owner, binding := keyring.Org("acme"), apps.SecretBinding("acme", "API_KEY")
	secrets := dynamo.NewSecretStore(db, tables.Control)
	put := func(value string) {
		t.Helper()
		sealed, err := ring.Seal(ctx, owner, value, binding)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := secrets.Put(ctx, "acme", "API_KEY", sealed, "fp", time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	put("first")
	if _, err := ring.Rotate(ctx, owner); err != nil {
		t.Fatal(err)
	}
	var steps []dynamo.ResealStep
	record := func(s dynamo.ResealStep) { steps = append(steps, s) }
	if err := dynamo.Reseal(ctx, db, tables.Control, writerMeanwhile{ring, func() { put("changed meanwhile") }}, record); err != nil {
		t.Fatal(err)
	}
	if len(steps) != 1 || steps[0].Outcome != dynamo.ResealChanged {
		t.Fatalf("Reseal with a write meanwhile: %+v, want one step, %q", steps, dynamo.ResealChanged)
	}
	sealed, err := secrets.Sealed(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ring.Open(ctx, owner, sealed["API_KEY"], binding); err != nil || got != "changed meanwhile" {
		t.Errorf("after Reseal, API_KEY opens to %q, %v; want the value written meanwhile", got, err)
	}
	steps = nil
	if err := dynamo.Reseal(ctx, db, tables.Control, ring, record); err != nil {
		t.Fatal(err)
	}
	cur, _ := ring.Current(ctx, owner)
	if id, _ := secretbox.SealedKeyID(sealed["API_KEY"]); len(steps) != 1 || steps[0].Outcome != dynamo.ResealCurrent || id != cur {
		t.Errorf("the next Reseal: %+v (value under %s, current %s); want it already current", steps, id, cur)
	}
}
