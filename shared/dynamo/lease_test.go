package dynamo_test

import (
	"context"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
)

// TestLeaseKnocks: a knock reaches only a lease someone holds unexpired; the holder asked to let
// go takes the knock and keeps the lease once, then lets go; a holder whose lease ran out and was
// taken neither releases the new holder's nor takes its knocks.
func TestLeaseKnocks(t *testing.T) {
	ctx := context.Background()
	tables, db := testenv.Tables(t)
	s := dynamo.NewLeaseStore(db, tables.Control)
	now := time.Now()
	held := func(owner string) bool {
		t.Helper()
		ok, err := s.Acquire(ctx, "knock", owner, now, now.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	knock := func(at time.Time) bool {
		t.Helper()
		ok, err := s.Knock(ctx, "knock", at)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	release := func(owner string) bool {
		t.Helper()
		again, err := s.ReleaseUnlessKnocked(ctx, "knock", owner, false)
		if err != nil {
			t.Fatal(err)
		}
		return again
	}

	if knock(now) {
		t.Error("a knock on a lease no one holds was taken, want false: the knocker takes the lease")
	}
	if !held("a") {
		t.Fatal("a could not take a free lease")
	}
	if !knock(now) {
		t.Fatal("a knock on a's lease was not taken")
	}
	if !release("a") {
		t.Error("a let go of its lease with a knock waiting, want it to keep it and run again")
	}
	if held("b") {
		t.Error("b took a's lease while a runs again")
	}
	if release("a") {
		t.Error("a was told to run again with no knock since it last asked")
	}
	if !held("b") {
		t.Fatal("b could not take the lease a let go")
	}
	if knock(now.Add(2 * time.Minute)) {
		t.Error("a knock on b's expired lease was taken, want false")
	}
	if !knock(now) || release("a") {
		t.Error("a, no longer the holder, took b's knock")
	}
	if !release("b") {
		t.Error("b let go with a knock waiting")
	}

	// Released idle, the lease says so until someone takes it; a knock on it is not taken, and
	// it is anyone's; a release that is not idle, or one by a former owner, leaves no mark.
	idle := func() bool {
		t.Helper()
		ok, err := s.Idle(ctx, "knock")
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if idle() {
		t.Error("a held lease reads idle")
	}
	if again, err := s.ReleaseUnlessKnocked(ctx, "knock", "b", true); err != nil || again || !idle() {
		t.Errorf("b released idle: again %v, %v, idle %v; want released and idle", again, err, idle())
	}
	if knock(now) {
		t.Error("a knock on an idle lease was taken, want false: no one holds it")
	}
	if !held("c") || idle() {
		t.Error("c could not take the idle lease, or it stayed idle once taken")
	}
	if again, err := s.ReleaseUnlessKnocked(ctx, "knock", "b", true); err != nil || again || idle() {
		t.Errorf("b, no longer the holder, released idle: again %v, %v, idle %v; want nothing marked", again, err, idle())
	}
	if release("c") || idle() {
		t.Error("c released not idle: want the lease gone and not idle")
	}
}
