package dispatch

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/tidegate/tidegate/shared/admission"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
)

// deployment is the rig's restricted busybox pod as a Deployment named name.
func (r rig) deployment(name string) map[string]any {
	m := r.manifest(name)
	tmpl := m["spec"].(map[string]any)["template"].(map[string]any)
	tmpl["spec"].(map[string]any)["restartPolicy"] = "Always"
	tmpl["metadata"] = map[string]any{"labels": map[string]any{"app": name}}
	m["apiVersion"], m["kind"] = "apps/v1", "Deployment"
	m["spec"] = map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": name}}, "template": tmpl}
	return m
}

// TestLongRunningJobsHoldTheirPods: in a region of four pods, one held by a batch job, a
// tenant's Deployments take their pods like any job, up to its limit of long-running jobs; the
// next one waits with tenant_long_running_limit, a second batch job takes the last pod and a
// third waits for room. The beat then records each dispatched Deployment running once the
// sandbox's controllers report it available.
func TestLongRunningJobsHoldTheirPods(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 4)
	r.dispatch.LongRunningPerTenant = 2
	// A batch job whose pod runs for ten minutes holds the region's one slot.
	holder, err := r.createWith("job-holder", "holder", 90, nil, func(m map[string]any) {
		tmpl := m["spec"].(map[string]any)["template"].(map[string]any)
		tmpl["metadata"] = map[string]any{"annotations": map[string]any{"pod-complete.stage.kwok.x-k8s.io/delay": "10m"}}
	})
	if err != nil {
		t.Fatal(err)
	}
	var services []string
	for i := range 3 {
		now := r.clock.now().Add(time.Duration(i) * time.Millisecond)
		j := jobs.New(fmt.Sprintf("job-web-%d", i), "ml", r.ns, region, 50, nil, []map[string]any{r.deployment(fmt.Sprintf("web-%d", i))}, now)
		if _, _, err := r.store.Create(ctx, j, jobs.Event(outbox.JobQueued, j, "", now), nil, now); err != nil {
			t.Fatal(err)
		}
		services = append(services, j.ID)
	}
	second := r.submit(t, "second", 10, nil)
	third := r.submit(t, "third", 5, nil)
	if err := r.dispatch.Drain(ctx, region); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		id     string
		status jobs.Status
		reason string
	}{
		{holder.ID, jobs.StatusPending, ""},
		{services[0], jobs.StatusPending, ""},
		{services[1], jobs.StatusPending, ""},
		{services[2], jobs.StatusQueued, string(admission.ReasonSlotlessLimit)},
		{second.ID, jobs.StatusPending, ""},
		{third.ID, jobs.StatusQueued, string(admission.ReasonFlavorFull)},
	} {
		if j := r.job(t, tt.id); j.Status != tt.status || j.PendingReason != tt.reason {
			t.Errorf("after a drain %s is %s (%q), want %s (%q)", tt.id, j.Status, j.PendingReason, tt.status, tt.reason)
		}
	}

	deadline := time.Now().Add(90 * time.Second)
	for {
		if err := r.reconcile.HandleBeat(ctx, events.EventBridgeEvent{ID: "beat"}); err != nil {
			t.Fatal(err)
		}
		if r.job(t, services[0]).Status == jobs.StatusRunning && r.job(t, services[1]).Status == jobs.StatusRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dispatched Deployments' jobs are %s and %s after 90 s, want running",
				r.job(t, services[0]).Status, r.job(t, services[1]).Status)
		}
		time.Sleep(time.Second)
	}
	// Still four pods, all held: another drain changes nothing.
	if err := r.dispatch.Drain(ctx, region); err != nil {
		t.Fatal(err)
	}
	if j := r.job(t, services[2]); j.Status != jobs.StatusQueued {
		t.Errorf("the tenant's third long-running job is %s with two running, want queued", j.Status)
	}
}
