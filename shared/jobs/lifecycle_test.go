package jobs

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/outbox"
)

var all = []Status{StatusBlocked, StatusQueued, StatusDispatching, StatusPending, StatusRunning, StatusSucceeded, StatusFailed, StatusCancelled}

// allowed is every move a job may make, with the event it writes; every other pair of statuses
// is refused. Written out here rather than read from the code, so that a move made allowed (or
// refused) by mistake fails this test.
var allowed = map[[2]Status]outbox.Type{
	{StatusBlocked, StatusQueued}:        outbox.JobQueued,
	{StatusBlocked, StatusRunning}:       outbox.JobStarted,
	{StatusBlocked, StatusCancelled}:     outbox.JobCancelled,
	{StatusQueued, StatusDispatching}:    "",
	{StatusQueued, StatusCancelled}:      outbox.JobCancelled,
	{StatusQueued, StatusFailed}:         outbox.JobFailed,
	{StatusDispatching, StatusPending}:   outbox.JobDispatched,
	{StatusDispatching, StatusFailed}:    outbox.JobFailed,
	{StatusDispatching, StatusQueued}:    "",
	{StatusDispatching, StatusCancelled}: outbox.JobCancelled,
	{StatusPending, StatusQueued}:        outbox.JobRetrying,
	{StatusRunning, StatusQueued}:        outbox.JobRetrying,
	{StatusPending, StatusRunning}:       outbox.JobStarted,
	{StatusPending, StatusSucceeded}:     outbox.JobCompleted,
	{StatusPending, StatusFailed}:        outbox.JobFailed,
	{StatusPending, StatusCancelled}:     outbox.JobCancelled,
	{StatusRunning, StatusSucceeded}:     outbox.JobCompleted,
	{StatusRunning, StatusFailed}:        outbox.JobFailed,
	{StatusRunning, StatusCancelled}:     outbox.JobCancelled,
}

func TestMoveAllowsExactlyTheLifecycle(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.FixedZone("here", 3600))
	for _, from := range all {
		for _, to := range all {
			j := New("job-1", "ml", "team-a", "us-east-1", 70, map[string]string{"team": "ml"}, nil, at.Add(-time.Hour))
			j.Status = from
			j.Claim = &Claim{Token: "t", Until: at}
			j.PendingReason, j.QueuePosition = "capacity", 3
			want, ok := allowed[[2]Status{from, to}]
			moved, c, err := Move(j, to, "why", at)
			if !ok {
				if !errors.Is(err, ErrMove) || !strings.Contains(err.Error(), string(from)) || !strings.Contains(err.Error(), string(to)) {
					t.Errorf("Move(%s → %s) = %v, want ErrMove naming both statuses", from, to, err)
				}
				if CanMove(from, to) {
					t.Errorf("CanMove(%s, %s) = true, want false", from, to)
				}
				if (Change{From: from, To: to, At: at}).Check() == nil && from != to {
					t.Errorf("Change{%s → %s}.Check() = nil, want refused", from, to)
				}
				continue
			}
			if err != nil {
				t.Errorf("Move(%s → %s) = %v, want allowed", from, to, err)
				continue
			}
			if err := c.Check(); err != nil {
				t.Errorf("Check of Move(%s → %s)'s change = %v", from, to, err)
			}
			if c.From != from || c.To != to || c.Reason != "why" || !c.At.Equal(at) || c.At.Location() != time.UTC {
				t.Errorf("Move(%s → %s) change = %+v, want from, to, reason and time (UTC)", from, to, c)
			}
			if moved.Status != to || len(moved.StatusHistory) != 2 || moved.StatusHistory[1] != (Transition{Status: to, At: at.UTC(), Reason: "why"}) {
				t.Errorf("Move(%s → %s) job = %s with history %v", from, to, moved.Status, moved.StatusHistory)
			}
			if len(j.StatusHistory) != 1 {
				t.Errorf("Move(%s → %s) changed the history of the job it was given", from, to)
			}
			if gone := moved.Claim == nil; gone != (from == StatusDispatching) {
				t.Errorf("Move(%s → %s) left claim %v: a job leaving dispatching drops it, no other", from, to, moved.Claim)
			}
			if cleared := moved.PendingReason == "" && moved.QueuePosition == 0; cleared != (from == StatusQueued || from == StatusBlocked) {
				t.Errorf("Move(%s → %s) left pending reason %q, position %d", from, to, moved.PendingReason, moved.QueuePosition)
			}
			switch {
			case want == "" && c.Event != nil:
				t.Errorf("Move(%s → %s) writes %s, want no event", from, to, c.Event.Type)
			case want != "" && (c.Event == nil || c.Event.Type != want):
				t.Errorf("Move(%s → %s) event = %v, want %s", from, to, c.Event, want)
			case want != "" && (c.Event.Data["status"] != string(to) || c.Event.Data["reason"] != "why" || c.Event.Tenant != "ml"):
				t.Errorf("Move(%s → %s) event data = %v (tenant %q), want the moved job's", from, to, c.Event.Data, c.Event.Tenant)
			}
		}
	}
}

func TestAdopt(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	j := New("job-1", "ml", "team-a", "us-east-1", 50, nil, nil, at)
	if _, _, err := Adopt(j, Claim{Token: "new"}, at); !errors.Is(err, ErrMove) {
		t.Errorf("Adopt(a queued job) = %v, want ErrMove", err)
	}
	j.Status, j.Claim = StatusDispatching, &Claim{Token: "dead", Until: at.Add(-time.Minute)}
	adopted, c, err := Adopt(j, Claim{Token: "new", Until: at.Add(time.Minute)}, at)
	if err != nil {
		t.Fatal(err)
	}
	if c.Claim != "dead" || c.NewClaim == nil || c.NewClaim.Token != "new" || c.Moves() || c.Event != nil {
		t.Errorf("Adopt change = %+v, want held by the dead claim, setting the new one, no move, no event", c)
	}
	if adopted.Claim.Token != "new" || j.Claim.Token != "dead" {
		t.Errorf("Adopt: adopted claim %q, original %q", adopted.Claim.Token, j.Claim.Token)
	}
}

func TestCheckRefusesWhatNoStoreShouldWrite(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for name, c := range map[string]Change{
		"no time":          {From: StatusRunning, To: StatusSucceeded},
		"not a status":     {From: "paused", To: "paused", At: at},
		"finished, again":  {From: StatusSucceeded, To: StatusRunning, At: at},
		"cancelled, again": {From: StatusCancelled, To: StatusPending, At: at},
	} {
		if err := c.Check(); err == nil {
			t.Errorf("%s: Check(%+v) = nil, want an error", name, c)
		}
	}
	if err := Wait("capacity", 2, nil, at).Check(); err != nil {
		t.Errorf("Wait's change: %v", err)
	}
}

func TestPark(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	j := New("job-1", "ml", "team-a", "us-east-1", 50, nil, nil, at)
	if _, _, err := Park(j, "busy", at.Add(time.Minute), at); !errors.Is(err, ErrMove) {
		t.Errorf("Park(a queued job) = %v, want ErrMove", err)
	}
	j.Status, j.Claim, j.DispatchAttempts = StatusDispatching, &Claim{Token: "mine", Until: at.Add(time.Minute)}, 2
	parked, c, err := Park(j, "the server is busy", at.Add(40*time.Second), at)
	if err != nil {
		t.Fatal(err)
	}
	if c.Moves() || c.Event != nil || c.Claim != "mine" || c.NewClaim == nil || !c.NewClaim.Parked || c.NewClaim.Token != "mine" ||
		!c.NewClaim.Until.Equal(at.Add(40*time.Second)) || c.DispatchAttempts != 3 || c.DispatchError != "the server is busy" {
		t.Errorf("Park change = %+v (claim %+v), want the holder's claim parked for 40 s and attempt 3 counted", c, c.NewClaim)
	}
	if parked.Claim.Held(at) || parked.DispatchAttempts != 3 {
		t.Errorf("parked job: claim held %v, attempts %d; want a claim nobody holds, 3 attempts", parked.Claim.Held(at), parked.DispatchAttempts)
	}
	if err := c.Check(); err != nil {
		t.Errorf("Park's change: %v", err)
	}
}

func TestClaimHeld(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		c    *Claim
		want bool
	}{
		{nil, false},
		{&Claim{Token: "t", Until: at.Add(time.Second)}, true},
		{&Claim{Token: "t", Until: at}, true},
		{&Claim{Token: "t", Until: at.Add(-time.Second)}, false},
		{&Claim{Token: "t", Until: at.Add(time.Minute), Parked: true}, false},
	} {
		if got := tc.c.Held(at); got != tc.want {
			t.Errorf("%+v.Held = %v, want %v", tc.c, got, tc.want)
		}
	}
}

func TestNameOf(t *testing.T) {
	obj := func(kind, name string) map[string]any {
		return map[string]any{"kind": kind, "metadata": map[string]any{"name": name}}
	}
	for _, tc := range []struct {
		manifests []map[string]any
		want      string
	}{
		{[]map[string]any{obj("ConfigMap", "settings"), obj("Job", "train")}, "train"},
		{[]map[string]any{obj("Pod", "probe"), obj("Deployment", "web")}, "web"},
		{[]map[string]any{obj("ConfigMap", "settings"), obj("Secret", "s")}, "settings"},
		{[]map[string]any{{"kind": "Job"}, obj("ConfigMap", "c")}, "c"},
		{nil, ""},
	} {
		if got := NameOf(tc.manifests); got != tc.want {
			t.Errorf("NameOf(%v) = %q, want %q", tc.manifests, got, tc.want)
		}
	}
}
