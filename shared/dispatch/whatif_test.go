package dispatch

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/admission"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/records"
)

// TestWhatIf: a what-if runs the drain's admission for a job not stored, and stores nothing. A
// job that fits is admitted; one that would wait says why and where it stands, and stored for
// real it waits for that reason; in a cordoned region it says so; a job of two regions hears
// which one its drain would choose.
func TestWhatIf(t *testing.T) {
	r := newRigIn(t, func(string) int { return 1 }, region, west)
	r.dispatch.Health = r.store
	ctx := context.Background()
	now := r.clock.now()
	fits := jobs.New("job-fits", "ml", r.ns, region, 50, nil, []map[string]any{r.manifest("fits")}, now)
	got, err := r.dispatch.WhatIf(ctx, region, fits)
	if err != nil || !got.Admitted || got.Reason != "" {
		t.Fatalf("what if of a job that fits = %+v (%v); want admitted", got, err)
	}
	if _, err := r.store.Job(ctx, fits.ID); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("after a what-if, job %s is stored (%v); want nothing stored", fits.ID, err)
	}

	// A job of higher priority queued ahead takes the one slot.
	ahead, err := r.createIn("job-ahead", "ahead", 90, nil, region)
	if err != nil {
		t.Fatal(err)
	}
	waits := jobs.New("job-waits", "ml", r.ns, region, 50, nil, []map[string]any{r.manifest("waits")}, r.clock.now())
	got, err = r.dispatch.WhatIf(ctx, region, waits)
	if err != nil || got.Admitted || got.Reason == "" || got.Position != 1 {
		t.Fatalf("what if behind a job of higher priority = %+v (%v); want waiting, first in line, with a reason", got, err)
	}
	if _, err := r.createIn(waits.ID, "waits", 50, nil, region); err != nil {
		t.Fatal(err)
	}
	r.drainIn(t, region)
	if j := r.job(t, ahead.ID); j.Status != jobs.StatusPending {
		t.Fatalf("the job ahead = %s; want pending", j.Status)
	}
	if j := r.job(t, waits.ID); j.Status != jobs.StatusQueued || j.PendingReason != got.Reason {
		t.Errorf("submitted for real, the job = %s (%s); want queued %s, as the what-if said", j.Status, j.PendingReason, got.Reason)
	}
	// The region full now, a drain reads none of its queues; the what-if still says why.
	if got, err := r.dispatch.WhatIf(ctx, region, fits); err != nil || got.Admitted || got.Reason != string(admission.ReasonFlavorFull) {
		t.Errorf("what if in a full region = %+v (%v); want %s", got, err, admission.ReasonFlavorFull)
	}

	roam := jobs.New("job-roam", "ml", r.ns, "", 50, nil, []map[string]any{r.manifest("roam")}, r.clock.now())
	roam.Regions = []string{region, west}
	if got, err := r.dispatch.WhatIf(ctx, west, roam); err != nil || !got.Admitted || got.Choice == nil || got.Choice.Region != west {
		t.Errorf("what if of a job of two regions, in us-west-2 (us-east-1 full) = %+v (%v); want admitted there, chosen", got, err)
	}
	if got, err := r.dispatch.WhatIf(ctx, region, roam); err != nil || got.Admitted || got.Reason != jobs.WhatIfElsewhere || got.Choice == nil || got.Choice.Region != west {
		t.Errorf("what if of a job of two regions, in us-east-1 = %+v (%v); want sent to us-west-2", got, err)
	}

	if err := r.store.SetCordon(ctx, west, dynamo.Cordoned, "operator:test", r.clock.now()); err != nil {
		t.Fatal(err)
	}
	r.clock.skip(gateTTL + time.Second)
	pinned := jobs.New("job-west", "ml", r.ns, west, 50, nil, []map[string]any{r.manifest("west")}, r.clock.now())
	if got, err := r.dispatch.WhatIf(ctx, west, pinned); err != nil || got.Admitted || got.Reason != string(admission.ReasonRegionCordoned) {
		t.Errorf("what if in a cordoned region = %+v (%v); want region_cordoned", got, err)
	}
	if _, err := r.dispatch.WhatIf(ctx, "eu-west-9", pinned); err == nil {
		t.Error("what if in a region the deployment does not run: no error")
	}
}
