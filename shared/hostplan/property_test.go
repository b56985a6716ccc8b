package hostplan_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/hostplan"
)

// cluster is one random input to Plan, small enough that names, states and ages collide often.
type cluster struct {
	apps    []hostplan.App
	pods    []hostplan.Container
	crashes map[string][]time.Time
}

// Ages around every bound Plan has: DefaultUnreadyLimit, RegistersWithin, InstallWithin +
// RegistersWithin, CrashWindow.
var ages = []time.Duration{0, time.Minute, 61 * time.Second, 119 * time.Second, 120 * time.Second, 121 * time.Second, 419 * time.Second, 421 * time.Second, 599 * time.Second, 10 * time.Minute, time.Hour}

func pick[T any](r *rand.Rand, from ...T) T { return from[r.IntN(len(from))] }

func randomCluster(r *rand.Rand) cluster {
	var c cluster
	c.crashes = map[string][]time.Time{}
	for i := range 6 {
		key, name := fmt.Sprintf("org%d/a%d", i%2, i), fmt.Sprintf("a%d", i)
		hosts := []string{name + "-r2-00000000", name + "-r1-00000000", name + "-r0-00000000"}
		if r.IntN(3) > 0 {
			app := hostplan.App{Key: key, Host: hosts[0], Failed: r.IntN(4) == 0}
			// Registered by one of the wanted host's two incarnations, or not at all.
			app.RegisteredPod = pick(r, "", "", hosts[0]+"#0", hosts[0]+"#1")
			app.LiveHost = pick(r, "", hosts[0], hosts[1], hosts[1])
			app.RegisteredAt = now.Add(-pick(r, ages...))
			if r.IntN(12) == 0 {
				app.Host = ""
			}
			c.apps = append(c.apps, app)
		}
		for _, h := range hosts {
			if r.IntN(3) > 0 {
				c.pods = append(c.pods, randomPod(r, h, key, true))
			}
			if r.IntN(2) == 0 {
				c.crashes[h] = nil
				for range r.IntN(8) {
					c.crashes[h] = append(c.crashes[h], now.Add(-pick(r, ages...)))
				}
			}
		}
		// Pods without our labels, under the same app key: never to be named by a step.
		for j := range r.IntN(3) {
			c.pods = append(c.pods, randomPod(r, fmt.Sprintf("foreign-%s-%d", name, j), key, false))
		}
	}
	r.Shuffle(len(c.apps), func(i, j int) { c.apps[i], c.apps[j] = c.apps[j], c.apps[i] })
	r.Shuffle(len(c.pods), func(i, j int) { c.pods[i], c.pods[j] = c.pods[j], c.pods[i] })
	return c
}

func randomPod(r *rand.Rand, name, app string, ours bool) hostplan.Container {
	p := hostplan.Container{Name: name, UID: fmt.Sprintf("%s#%d", name, r.IntN(2)), App: app, Ours: ours, CreatedAt: now.Add(-pick(r, ages...))}
	switch r.IntN(6) {
	case 0:
		p.Installing = true
	case 1:
		p.InstallFailed, p.Exited, p.ExitCode = true, true, 1
	case 2:
		p.StartedAt, p.Exited, p.ExitCode = now.Add(-pick(r, ages...)), true, int32(r.IntN(3))
		p.OOMKilled = r.IntN(3) == 0
	default:
		p.StartedAt = now.Add(-pick(r, ages...))
	}
	if r.IntN(2) == 0 {
		p.Checked, p.Ready, p.ReadyChanged = true, r.IntN(2) == 0, now.Add(-pick(r, ages...))
	}
	return p
}

func (c cluster) clone() cluster {
	crashes := map[string][]time.Time{}
	for h, at := range c.crashes {
		crashes[h] = slices.Clone(at)
	}
	return cluster{slices.Clone(c.apps), slices.Clone(c.pods), crashes}
}

func TestPlanProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 11))
	for n := range 500 {
		c := randomCluster(r)
		name := fmt.Sprintf("case %d (%d apps, %d pods)", n, len(c.apps), len(c.pods))
		before := c.clone()
		steps := hostplan.Plan(c.apps, c.pods, c.crashes, now)

		if diff := cmp.Diff(before, c, cmp.AllowUnexported(cluster{})); diff != "" {
			t.Fatalf("%s: Plan changed its input (-before +after):\n%s", name, diff)
		}
		if diff := cmp.Diff(steps, hostplan.Plan(c.apps, c.pods, c.crashes, now)); diff != "" {
			t.Fatalf("%s: Plan twice on one input differs (-first +second):\n%s", name, diff)
		}
		checkNames(t, name, c, steps)
		checkLiveServes(t, name, c, steps)
		checkAlone(t, name, c, steps)
		checkFixpoint(t, name, c)
	}
}

// checkNames checks that every step points at one of our own pods of its app, or at the first App
// of its key, that a failed host is stopped after it is failed, and that an app has at most two
// steps more than it has pods (a Start for its wanted host and one for its live host, both lost).
func checkNames(t *testing.T, name string, c cluster, steps map[string][]hostplan.Step) {
	t.Helper()
	checkPointers(t, c.apps, c.pods, steps)
	first := map[string]*hostplan.App{}
	for i := range c.apps {
		if first[c.apps[i].Key] == nil {
			first[c.apps[i].Key] = &c.apps[i]
		}
	}
	for key, todo := range steps {
		pods := 0
		for _, p := range c.pods {
			if p.Ours && p.App == key {
				pods++
			}
		}
		if len(todo) > pods+2 {
			t.Fatalf("%s: %s has %d steps for %d pods, more than Plan makes room for: %s", name, key, len(todo), pods, describe(steps)[key])
		}
		for i, s := range todo {
			switch s := s.(type) {
			case hostplan.Start:
				if s.App != first[key] || s.Host() == "" || (s.Live && s.App.LiveHost == s.App.Host) || (!s.Live && s.Host() != s.App.Host) {
					t.Fatalf("%s: %s: %+v starts neither the wanted host nor the live one, apart, of the app's first App", name, key, s)
				}
			case hostplan.WentLive:
				if s.App != first[key] || s.App.Host == "" {
					t.Fatalf("%s: %s: %+v makes live no wanted host of the app's first App", name, key, s)
				}
			case hostplan.Failed:
				if !slices.Contains(todo[i+1:], hostplan.Step(hostplan.Stop{Pod: s.Pod})) {
					t.Fatalf("%s: %s: %+v is not followed by its Stop: %s", name, key, s, describe(steps)[key])
				}
			}
		}
	}
}

// checkLiveServes checks that while a release is live and its host's pod is lost, the beat starts
// the live release again, whatever the wanted release is doing: a Start of the live host, unless
// the wanted host goes live in the same beat and replaces it, or the live host has crashed
// MostCrashes times within CrashWindow and counts as crash looping (a lost pod started again is
// a crash too), or it is the wanted host and its release failed. Nothing else starts the live
// host, and nothing starts it twice.
func checkLiveServes(t *testing.T, name string, c cluster, steps map[string][]hostplan.Step) {
	t.Helper()
	seen := map[string]bool{}
	for i := range c.apps {
		a := &c.apps[i]
		if seen[a.Key] || a.LiveHost == "" {
			continue
		}
		seen[a.Key] = true
		lost := !slices.ContainsFunc(c.pods, func(p hostplan.Container) bool { return p.Ours && p.App == a.Key && p.Name == a.LiveHost })
		starts, wentLive := 0, false
		for _, s := range steps[a.Key] {
			switch s := s.(type) {
			case hostplan.Start:
				if s.Host() == a.LiveHost {
					starts++
				}
			case hostplan.WentLive:
				wentLive = true
			}
		}
		recent := len(hostplan.RecentCrashes(c.crashes[a.LiveHost], now))
		served := a.LiveHost == a.Host
		want := 0
		switch {
		case !lost, wentLive:
		case served && a.Failed:
		case !served && recent >= hostplan.MostCrashes:
		default:
			want = 1
		}
		if starts != want {
			t.Fatalf("%s: %s live on %s (wanted %s, failed %v, %d recent crashes), pod lost %v: %d Starts of the live host, want %d: %s",
				name, a.Key, a.LiveHost, a.Host, a.Failed, recent, lost, starts, want, describe(steps)[a.Key])
		}
	}
}

// checkAlone checks that each app's steps are the same when it is planned with only its own pods.
func checkAlone(t *testing.T, name string, c cluster, steps map[string][]hostplan.Step) {
	t.Helper()
	keys := map[string]*hostplan.App{}
	for i := range c.apps {
		if keys[c.apps[i].Key] == nil {
			keys[c.apps[i].Key] = &c.apps[i]
		}
	}
	for _, p := range c.pods {
		if _, ok := keys[p.App]; !ok {
			keys[p.App] = nil
		}
	}
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		var apps []hostplan.App
		if a := keys[key]; a != nil {
			apps = []hostplan.App{*a}
		}
		var pods []hostplan.Container
		for _, p := range c.pods {
			if p.App == key {
				pods = append(pods, p)
			}
		}
		alone := hostplan.Plan(apps, pods, c.crashes, now)
		if diff := cmp.Diff(describe(steps)[key], describe(alone)[key]); diff != "" {
			t.Fatalf("%s: %s planned alone differs from planned with the others (-together +alone):\n%s", name, key, diff)
		}
	}
}

// checkFixpoint carries the steps out on a model of the cluster and plans again, until a plan has
// no steps; a few rounds must be enough.
func checkFixpoint(t *testing.T, name string, c cluster) {
	t.Helper()
	c = c.clone()
	const rounds = 4
	for round := range rounds {
		steps := hostplan.Plan(c.apps, c.pods, c.crashes, now)
		if len(steps) == 0 {
			return
		}
		if round == rounds-1 {
			t.Fatalf("%s: still planning after %d rounds: %v\napps %+v\npods %+v", name, rounds, describe(steps), c.apps, c.pods)
		}
		// The steps point into the model, so they are read whole before it changes.
		words := describe(steps)
		for _, key := range slices.Sorted(maps.Keys(words)) {
			for _, w := range words[key] {
				kind, host, _ := strings.Cut(w, " ")
				host, rest, _ := strings.Cut(host, " ")
				c.apply(key, kind, host, rest)
			}
		}
	}
}

// apply carries one step out on the model: start adds a running pod (and records a crash when it
// is the live host's, rest "live"), stop removes one, revive replaces one with a running one and
// records a crash, went_live makes the host live and failed fails the release. A pod started or
// revived is a new incarnation, with a UID of its own.
func (c *cluster) apply(key, kind, host, rest string) {
	running := hostplan.Container{Name: host, UID: host + "#new", App: key, Ours: true, StartedAt: now, CreatedAt: now}
	isIt := func(p hostplan.Container) bool { return p.Ours && p.App == key && p.Name == host }
	at := slices.IndexFunc(c.apps, func(a hostplan.App) bool { return a.Key == key })
	switch kind {
	case "start":
		c.pods = append(c.pods, running)
		if rest == "live" {
			c.crashes[host] = append(c.crashes[host], now)
		}
	case "stop":
		c.pods = slices.DeleteFunc(c.pods, isIt)
	case "revive":
		c.pods[slices.IndexFunc(c.pods, isIt)] = running
		c.crashes[host] = append(c.crashes[host], now)
	case "went_live":
		c.apps[at].LiveHost = host
	case "failed":
		c.apps[at].Failed = true
	}
}
