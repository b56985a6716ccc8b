package hostplan_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/hostplan"
)

// checked is c with a readiness check whose pod's Ready condition is ready since changed ago.
func checked(c hostplan.Container, ready bool, changed time.Duration) hostplan.Container {
	c.Checked, c.Ready, c.ReadyChanged = true, ready, ago(changed)
	return c
}

// TestPlanReadiness: a host with a readiness check goes live only once registered and ready; a
// registered host whose check has failed for longer than the limit, counted from the latest of
// the check's change, its process start and its registration, is revived as unhealthy, a crash
// like an exit; past MostCrashes its release fails crash_looping and the live host stays.
func TestPlanReadiness(t *testing.T) {
	reg := func(at time.Duration) hostplan.App {
		return hostplan.App{Key: shop, Host: wanted, LiveHost: live, RegisteredPod: uid(wanted), RegisteredAt: ago(at)}
	}
	served := hostplan.App{Key: shop, Host: wanted, LiveHost: wanted, RegisteredPod: uid(wanted), RegisteredAt: ago(time.Hour)}
	longer := reg(90 * time.Second)
	longer.UnreadyLimit = 2 * time.Minute
	five := map[string][]time.Time{wanted: crashesAgo(time.Minute, 2*time.Minute, 3*time.Minute, 4*time.Minute, 5*time.Minute)}
	slow := startedAgo(pod(wanted), 2*time.Minute)
	tests := []struct {
		name    string
		app     hostplan.App
		pods    []hostplan.Container
		crashes map[string][]time.Time
		want    []string
	}{
		{"registered and ready goes live", reg(30 * time.Second),
			[]hostplan.Container{checked(pod(wanted), true, 5*time.Second), pod(live)}, nil,
			[]string{"went_live " + wanted, "stop " + live}},
		{"registered without a check goes live on its registration alone", reg(30 * time.Second),
			[]hostplan.Container{pod(wanted), pod(live)}, nil,
			[]string{"went_live " + wanted, "stop " + live}},
		{"registered, not ready yet within the limit: the live host serves", reg(30 * time.Second),
			[]hostplan.Container{checked(pod(wanted), false, 10*time.Second), pod(live)}, nil,
			nil},
		{"registered, not ready past the limit: revived as unhealthy, the live host serves", reg(90 * time.Second),
			[]hostplan.Container{checked(slow, false, 61*time.Second), pod(live)}, nil,
			[]string{"revive " + wanted + " unhealthy"}},
		{"exactly the limit is not past it", reg(90 * time.Second),
			[]hostplan.Container{checked(slow, false, 60*time.Second), pod(live)}, nil,
			nil},
		{"judged from its registration, not its start", reg(30 * time.Second),
			[]hostplan.Container{checked(slow, false, 2*time.Minute), pod(live)}, nil,
			nil},
		{"the app's own limit", longer,
			[]hostplan.Container{checked(slow, false, 90*time.Second), pod(live)}, nil,
			nil},
		{"not registered: not judged by its check", hostplan.App{Key: shop, Host: wanted, LiveHost: live},
			[]hostplan.Container{checked(slow, false, 2*time.Minute), pod(live)}, nil,
			nil},
		{"registered by an earlier pod: not judged by its check", reg(5 * time.Minute),
			[]hostplan.Container{again(checked(slow, false, 2*time.Minute)), pod(live)}, nil,
			nil},
		{"unhealthy once more after five revivals: crash looping, the live host stays", reg(90 * time.Second),
			[]hostplan.Container{checked(slow, false, 61*time.Second), pod(live)}, five,
			[]string{"failed " + wanted + " crash_looping", "stop " + wanted}},
		{"a host that served and turns unhealthy is revived", served,
			[]hostplan.Container{checked(slow, false, 61*time.Second)}, nil,
			[]string{"revive " + wanted + " unhealthy"}},
		{"a host that served, unhealthy past five revivals: crash looping", served,
			[]hostplan.Container{checked(slow, false, 61*time.Second)}, five,
			[]string{"failed " + wanted + " crash_looping", "stop " + wanted}},
		{"a live host unready past its time to register and the limit is revived", hostplan.App{Key: shop, Host: wanted, LiveHost: live},
			[]hostplan.Container{pod(wanted), checked(startedAgo(pod(live), 10*time.Minute), false, 61*time.Second)}, nil,
			[]string{"revive " + live + " unhealthy"}},
		{"a live host started again is given its time to register first", hostplan.App{Key: shop, Host: wanted, LiveHost: live},
			[]hostplan.Container{pod(wanted), checked(startedAgo(pod(live), 150*time.Second), false, 150*time.Second)}, nil,
			nil},
		{"an unhealthy live host past five revivals is kept: it is all the app has", hostplan.App{Key: shop, Host: wanted, LiveHost: live},
			[]hostplan.Container{pod(wanted), checked(startedAgo(pod(live), 10*time.Minute), false, 5*time.Minute)},
			map[string][]time.Time{live: crashesAgo(time.Minute, 2*time.Minute, 3*time.Minute, 4*time.Minute, 5*time.Minute)},
			nil},
		{"a process not started is not judged", reg(5 * time.Minute),
			[]hostplan.Container{checked(installing(pod(wanted), time.Minute), false, 5*time.Minute), pod(live)}, nil,
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			apps := []hostplan.App{tt.app}
			steps := hostplan.Plan(apps, tt.pods, tt.crashes, now)
			checkPointers(t, apps, tt.pods, steps)
			if diff := cmp.Diff(tt.want, describe(steps)[shop]); diff != "" {
				t.Errorf("Plan(%+v, %+v) steps (-want +got):\n%s", tt.app, tt.pods, diff)
			}
		})
	}
}

func TestCrashLoopingSaysReadiness(t *testing.T) {
	why := hostplan.Failed{Reason: hostplan.ReasonCrashLooping}.Why("")
	for _, want := range []string{"exiting or failing its readiness check", "5 times within 10 minutes"} {
		if !strings.Contains(why, want) {
			t.Errorf("crash_looping's why %q does not say %q", why, want)
		}
	}
}
