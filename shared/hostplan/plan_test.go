package hostplan_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/hostplan"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) time.Time { return now.Add(-d) }

const (
	shop    = "acme/shop"
	wanted  = "shop-r2-0a1b2c3d"
	live    = "shop-r1-4e5f6a7b"
	oldest  = "shop-r0-8c9d0e1f"
	goneApp = "acme/gone"
)

// deploying is shop while release 2 is on its way and release 1 serves.
var deploying = hostplan.App{Key: shop, Host: wanted, LiveHost: live}

// pod is one of our pods of shop whose app process started 10 s ago; its UID is uid(name).
func pod(name string) hostplan.Container {
	return hostplan.Container{Name: name, UID: uid(name), App: shop, Ours: true, StartedAt: ago(10 * time.Second), CreatedAt: ago(time.Minute)}
}

// uid is the UID of pod(name): the incarnation whose process registers in these tests.
func uid(name string) string { return "uid-" + name }

// again is c as a new incarnation: a pod of the same name started again, with its own UID.
func again(c hostplan.Container) hostplan.Container {
	c.UID += "-again"
	return c
}

func exited(c hostplan.Container, code int32) hostplan.Container {
	c.Exited, c.ExitCode = true, code
	return c
}

func startedAgo(c hostplan.Container, d time.Duration) hostplan.Container {
	c.StartedAt = ago(d)
	return c
}

func installing(c hostplan.Container, created time.Duration) hostplan.Container {
	c.Installing, c.StartedAt, c.CreatedAt = true, time.Time{}, ago(created)
	return c
}

func crashesAgo(ds ...time.Duration) []time.Time {
	var at []time.Time
	for _, d := range ds {
		at = append(at, ago(d))
	}
	return at
}

func TestPlan(t *testing.T) {
	served := hostplan.App{Key: shop, Host: wanted, LiveHost: wanted, RegisteredPod: uid(wanted)}
	registered := hostplan.App{Key: shop, Host: wanted, LiveHost: live, RegisteredPod: uid(wanted)}
	tests := []struct {
		name    string
		apps    []hostplan.App
		pods    []hostplan.Container
		crashes map[string][]time.Time
		want    map[string][]string
	}{
		{
			name: "a new app with no pod starts its host",
			apps: []hostplan.App{{Key: shop, Host: wanted}},
			want: map[string][]string{shop: {"start " + wanted}},
		},
		{
			name: "the live host serves while the wanted one installs",
			apps: []hostplan.App{deploying},
			pods: []hostplan.Container{installing(pod(wanted), time.Minute), pod(live)},
			want: map[string][]string{},
		},
		{
			name: "the live host serves while the wanted one starts",
			apps: []hostplan.App{deploying},
			pods: []hostplan.Container{pod(wanted), pod(live)},
			want: map[string][]string{},
		},
		{
			name: "a wanted host that registered goes live and the old live host stops",
			apps: []hostplan.App{registered},
			pods: []hostplan.Container{pod(live), pod(wanted), pod(oldest)},
			want: map[string][]string{shop: {"went_live " + wanted, "stop " + live, "stop " + oldest}},
		},
		{
			name: "a live host that serves has nothing to do",
			apps: []hostplan.App{served},
			pods: []hostplan.Container{startedAgo(pod(wanted), time.Hour)},
			want: map[string][]string{},
		},
		{
			name: "a served host between two registrations is left alone, however long it has run",
			apps: []hostplan.App{{Key: shop, Host: wanted, LiveHost: wanted}},
			pods: []hostplan.Container{startedAgo(pod(wanted), time.Hour)},
			want: map[string][]string{},
		},
		{
			name: "a wanted host that exits before serving fails the release; the live host stays",
			apps: []hostplan.App{deploying},
			pods: []hostplan.Container{exited(pod(wanted), 3), pod(live)},
			want: map[string][]string{shop: {"failed " + wanted + " exited", "stop " + wanted}},
		},
		{
			name: "a wanted host that exits with code 0 before serving has exited too",
			apps: []hostplan.App{{Key: shop, Host: wanted}},
			pods: []hostplan.Container{exited(pod(wanted), 0)},
			want: map[string][]string{shop: {"failed " + wanted + " exited", "stop " + wanted}},
		},
		{
			name: "a wanted host killed for its memory before serving fails as oom_killed",
			apps: []hostplan.App{deploying},
			pods: []hostplan.Container{func() hostplan.Container { c := exited(pod(wanted), 137); c.OOMKilled = true; return c }(), pod(live)},
			want: map[string][]string{shop: {"failed " + wanted + " oom_killed", "stop " + wanted}},
		},
		{
			name: "a wanted host whose install failed fails as install_failed",
			apps: []hostplan.App{deploying},
			pods: []hostplan.Container{pod(live), func() hostplan.Container {
				c := installing(pod(wanted), time.Minute)
				c.Installing, c.InstallFailed, c.ExitCode = false, true, 1
				return c
			}()},
			want: map[string][]string{shop: {"failed " + wanted + " install_failed", "stop " + wanted}},
		},
		{
			name: "a wanted host that registered and then exited before going live fails; the live host stays",
			apps: []hostplan.App{registered},
			pods: []hostplan.Container{exited(pod(wanted), 1), pod(live)},
			want: map[string][]string{shop: {"failed " + wanted + " exited", "stop " + wanted}},
		},
		{
			name: "a failed release's host is removed and the live one kept",
			apps: []hostplan.App{{Key: shop, Host: wanted, LiveHost: live, Failed: true}},
			pods: []hostplan.Container{pod(wanted), pod(live)},
			want: map[string][]string{shop: {"stop " + wanted}},
		},
		{
			name: "a failed release is not started again",
			apps: []hostplan.App{{Key: shop, Host: wanted, LiveHost: live, Failed: true}},
			pods: []hostplan.Container{pod(live)},
			want: map[string][]string{},
		},
		{
			name: "a live host that exits while the release is failed is revived",
			apps: []hostplan.App{{Key: shop, Host: wanted, LiveHost: live, Failed: true}},
			pods: []hostplan.Container{exited(pod(live), 1)},
			want: map[string][]string{shop: {"revive " + live + " exited"}},
		},
		{
			name:    "a live host that exits while the wanted one starts is revived under the limit",
			apps:    []hostplan.App{deploying},
			pods:    []hostplan.Container{pod(wanted), exited(pod(live), 1)},
			crashes: map[string][]time.Time{live: crashesAgo(time.Minute, 2*time.Minute, 3*time.Minute, 4*time.Minute)},
			want:    map[string][]string{shop: {"revive " + live + " exited"}},
		},
		{
			name:    "a live host that exits over the limit while the wanted one starts is stopped",
			apps:    []hostplan.App{deploying},
			pods:    []hostplan.Container{pod(wanted), exited(pod(live), 1)},
			crashes: map[string][]time.Time{live: crashesAgo(time.Minute, 2*time.Minute, 3*time.Minute, 4*time.Minute, 5*time.Minute)},
			want:    map[string][]string{shop: {"stop " + live}},
		},
		{
			name:    "a host that served and exits is revived under the limit, older crashes not counted",
			apps:    []hostplan.App{served},
			pods:    []hostplan.Container{exited(pod(wanted), 1)},
			crashes: map[string][]time.Time{wanted: crashesAgo(time.Second, time.Minute, 2*time.Minute, 9*time.Minute, 10*time.Minute, 11*time.Minute)},
			want:    map[string][]string{shop: {"revive " + wanted + " exited"}},
		},
		{
			name:    "a host that served and exits once more after five revivals in ten minutes is crash looping",
			apps:    []hostplan.App{served},
			pods:    []hostplan.Container{exited(pod(wanted), 1), pod(oldest)},
			crashes: map[string][]time.Time{wanted: crashesAgo(time.Second, time.Minute, 2*time.Minute, 3*time.Minute, 9*time.Minute+59*time.Second)},
			want:    map[string][]string{shop: {"failed " + wanted + " crash_looping", "stop " + wanted, "stop " + oldest}},
		},
		{
			name: "a wanted host not registered 121 s after its app started never registered",
			apps: []hostplan.App{deploying},
			pods: []hostplan.Container{startedAgo(pod(wanted), 121*time.Second), pod(live)},
			want: map[string][]string{shop: {"failed " + wanted + " never_registered", "stop " + wanted}},
		},
		{
			name: "a wanted host 120 s after its app started still has time",
			apps: []hostplan.App{deploying},
			pods: []hostplan.Container{startedAgo(pod(wanted), 120*time.Second), pod(live)},
			want: map[string][]string{},
		},
		{
			name: "the install's time is not counted: created 400 s ago, started 100 s ago",
			apps: []hostplan.App{deploying},
			pods: []hostplan.Container{func() hostplan.Container {
				c := startedAgo(pod(wanted), 100*time.Second)
				c.CreatedAt = ago(400 * time.Second)
				return c
			}(), pod(live)},
			want: map[string][]string{},
		},
		{
			name: "a host still installing within the install's limit has time",
			apps: []hostplan.App{deploying},
			pods: []hostplan.Container{installing(pod(wanted), 419*time.Second), pod(live)},
			want: map[string][]string{},
		},
		{
			name: "a host whose app never started within the install's limit and 120 s never registered",
			apps: []hostplan.App{deploying},
			pods: []hostplan.Container{installing(pod(wanted), 421*time.Second), pod(live)},
			want: map[string][]string{shop: {"failed " + wanted + " never_registered", "stop " + wanted}},
		},
		{
			name: "old releases' pods of a wanted app are stopped, in the pods' order",
			apps: []hostplan.App{deploying},
			pods: []hostplan.Container{pod("shop-r0-aaaaaaaa"), pod(wanted), pod(live), pod(oldest)},
			want: map[string][]string{shop: {"stop shop-r0-aaaaaaaa", "stop " + oldest}},
		},
		{
			name: "the pods of an app nobody wants are stopped under its key",
			apps: []hostplan.App{served},
			pods: []hostplan.Container{
				pod(wanted),
				{Name: "gone-r4-00000000", App: goneApp, Ours: true},
				{Name: "gone-r3-00000000", App: goneApp, Ours: true, Exited: true},
			},
			want: map[string][]string{goneApp: {"stop gone-r4-00000000", "stop gone-r3-00000000"}},
		},
		{
			name: "a pod without our labels is never touched, and does not stand in for the wanted host",
			apps: []hostplan.App{deploying},
			pods: []hostplan.Container{
				{Name: wanted, App: shop, Ours: false, StartedAt: ago(time.Hour)},
				{Name: "stray", App: shop},
				{Name: "gone-r1-00000000", App: goneApp},
				pod(live),
			},
			want: map[string][]string{shop: {"start " + wanted}},
		},
		{
			name: "a registered host whose pod is gone is started again and the live one keeps serving",
			apps: []hostplan.App{registered},
			pods: []hostplan.Container{pod(live)},
			want: map[string][]string{shop: {"start " + wanted}},
		},
		{
			name: "a wanted host started again is not registered by its earlier pod's process",
			apps: []hostplan.App{registered},
			pods: []hostplan.Container{pod(live), again(pod(wanted))},
			want: map[string][]string{},
		},
		{
			name: "a wanted host started again whose own process registered goes live",
			apps: []hostplan.App{{Key: shop, Host: wanted, LiveHost: live, RegisteredPod: uid(wanted) + "-again"}},
			pods: []hostplan.Container{pod(live), again(pod(wanted))},
			want: map[string][]string{shop: {"went_live " + wanted, "stop " + live}},
		},
		{
			name: "a registration of another host's pod does not register the wanted one",
			apps: []hostplan.App{{Key: shop, Host: wanted, LiveHost: live, RegisteredPod: uid(live)}},
			pods: []hostplan.Container{pod(live), pod(wanted)},
			want: map[string][]string{},
		},
		{
			name: "a wanted host started again that has not registered in time fails; the live one stays",
			apps: []hostplan.App{registered},
			pods: []hostplan.Container{pod(live), startedAgo(again(pod(wanted)), 121*time.Second)},
			want: map[string][]string{shop: {"failed " + wanted + " never_registered", "stop " + wanted}},
		},
		{
			name: "a live host whose pod is lost while the wanted one starts is started again",
			apps: []hostplan.App{deploying},
			pods: []hostplan.Container{pod(wanted)},
			want: map[string][]string{shop: {"start " + live + " live"}},
		},
		{
			name: "a live host whose pod is lost while the wanted one installs is started again",
			apps: []hostplan.App{deploying},
			pods: []hostplan.Container{installing(pod(wanted), time.Minute)},
			want: map[string][]string{shop: {"start " + live + " live"}},
		},
		{
			name: "with both pods lost, the wanted host and the live one are both started",
			apps: []hostplan.App{deploying},
			want: map[string][]string{shop: {"start " + wanted, "start " + live + " live"}},
		},
		{
			name: "a live host whose pod is lost while the wanted one fails is started again",
			apps: []hostplan.App{deploying},
			pods: []hostplan.Container{exited(pod(wanted), 3)},
			want: map[string][]string{shop: {"failed " + wanted + " exited", "start " + live + " live", "stop " + wanted}},
		},
		{
			name: "a live host whose pod is lost after its release failed is started again",
			apps: []hostplan.App{{Key: shop, Host: wanted, LiveHost: live, Failed: true}},
			want: map[string][]string{shop: {"start " + live + " live"}},
		},
		{
			name: "a live host whose pod is lost while the wanted one registered but is not ready is started again",
			apps: []hostplan.App{registered},
			pods: []hostplan.Container{func() hostplan.Container { c := pod(wanted); c.Checked = true; return c }()},
			want: map[string][]string{shop: {"start " + live + " live"}},
		},
		{
			name: "a live host whose pod is lost is not started when the wanted one goes live in the same beat",
			apps: []hostplan.App{registered},
			pods: []hostplan.Container{pod(wanted)},
			want: map[string][]string{shop: {"went_live " + wanted}},
		},
		{
			name:    "a lost live host is started again under the crash limit",
			apps:    []hostplan.App{deploying},
			pods:    []hostplan.Container{pod(wanted)},
			crashes: map[string][]time.Time{live: crashesAgo(time.Minute, 2*time.Minute, 3*time.Minute, 4*time.Minute, 11*time.Minute)},
			want:    map[string][]string{shop: {"start " + live + " live"}},
		},
		{
			name:    "a lost live host that crashed five times in ten minutes is not started again",
			apps:    []hostplan.App{deploying},
			pods:    []hostplan.Container{pod(wanted)},
			crashes: map[string][]time.Time{live: crashesAgo(time.Minute, 2*time.Minute, 3*time.Minute, 4*time.Minute, 5*time.Minute)},
			want:    map[string][]string{},
		},
		{
			name: "an app with no wanted host starts its lost live host again",
			apps: []hostplan.App{{Key: shop, LiveHost: live}},
			pods: []hostplan.Container{pod(oldest)},
			want: map[string][]string{shop: {"start " + live + " live", "stop " + oldest}},
		},
		{
			name: "a served host whose pod is lost is started as the wanted host",
			apps: []hostplan.App{served},
			want: map[string][]string{shop: {"start " + wanted}},
		},
		{
			name: "an app with no wanted host keeps its live one and starts nothing",
			apps: []hostplan.App{{Key: shop, LiveHost: live}},
			pods: []hostplan.Container{pod(live), pod(oldest)},
			want: map[string][]string{shop: {"stop " + oldest}},
		},
		{
			name: "a second app of the same key is ignored",
			apps: []hostplan.App{served, {Key: shop, Host: "shop-r9-99999999"}},
			pods: []hostplan.Container{pod(wanted)},
			want: map[string][]string{},
		},
		{
			name: "apps are planned each on its own",
			apps: []hostplan.App{{Key: "acme/a", Host: "a-r1-00000000"}, {Key: "acme/b", Host: "b-r1-00000000", LiveHost: "b-r1-00000000", RegisteredPod: "uid-b"}},
			pods: []hostplan.Container{
				{Name: "b-r1-00000000", UID: "uid-b", App: "acme/b", Ours: true, Exited: true},
				{Name: "a-r0-00000000", App: "acme/a", Ours: true},
			},
			want: map[string][]string{
				"acme/a": {"start a-r1-00000000", "stop a-r0-00000000"},
				"acme/b": {"revive b-r1-00000000 exited"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps := hostplan.Plan(tt.apps, tt.pods, tt.crashes, now)
			checkPointers(t, tt.apps, tt.pods, steps)
			if diff := cmp.Diff(tt.want, describe(steps)); diff != "" {
				t.Errorf("Plan(%+v, %+v) steps (-want +got):\n%s", tt.apps, tt.pods, diff)
			}
		})
	}
}

// describe is each app's steps as words: "start <host>" ("start <host> live" for the live host),
// "went_live <host>", "revive <pod> <reason>", "stop <pod>", "failed <pod> <reason>".
func describe(steps map[string][]hostplan.Step) map[string][]string {
	words := map[string][]string{}
	for key, todo := range steps {
		for _, s := range todo {
			var w string
			switch s := s.(type) {
			case hostplan.Start:
				w = "start " + s.Host()
				if s.Live {
					w += " live"
				}
			case hostplan.WentLive:
				w = "went_live " + s.App.Host
			case hostplan.Revive:
				w = "revive " + s.Pod.Name + " " + string(s.Reason)
			case hostplan.Stop:
				w = "stop " + s.Pod.Name
			case hostplan.Failed:
				w = "failed " + s.Pod.Name + " " + string(s.Reason)
			default:
				w = fmt.Sprintf("unknown step %#v", s)
			}
			words[key] = append(words[key], w)
		}
	}
	return words
}

// checkPointers checks that every step points into Plan's inputs: at one of the apps, or at one of
// our own pods of the app the step is listed under.
func checkPointers(t *testing.T, apps []hostplan.App, pods []hostplan.Container, steps map[string][]hostplan.Step) {
	t.Helper()
	isApp := func(key string, a *hostplan.App) bool {
		for i := range apps {
			if &apps[i] == a {
				return a.Key == key
			}
		}
		return false
	}
	isPod := func(key string, p *hostplan.Container) bool {
		for i := range pods {
			if &pods[i] == p {
				return p.Ours && p.App == key
			}
		}
		return false
	}
	for key, todo := range steps {
		for _, s := range todo {
			var ok bool
			switch s := s.(type) {
			case hostplan.Start:
				ok = isApp(key, s.App)
			case hostplan.WentLive:
				ok = isApp(key, s.App)
			case hostplan.Revive:
				ok = isPod(key, s.Pod)
			case hostplan.Stop:
				ok = isPod(key, s.Pod)
			case hostplan.Failed:
				ok = isPod(key, s.Pod)
			}
			if !ok {
				t.Fatalf("Plan(%+v, %+v): %s: step %+v points at no App of the key or pod of ours of the app in the inputs", apps, pods, key, s)
			}
		}
	}
}

func TestRecentCrashes(t *testing.T) {
	times := crashesAgo(time.Second, 10*time.Minute, 9*time.Minute, time.Hour, -time.Second)
	want := crashesAgo(time.Second, 9*time.Minute, -time.Second)
	if diff := cmp.Diff(want, hostplan.RecentCrashes(times, now)); diff != "" {
		t.Errorf("RecentCrashes(%v) (-want +got):\n%s", times, diff)
	}
}
