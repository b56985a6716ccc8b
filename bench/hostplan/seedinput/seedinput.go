// Package seedinput provides the cluster that ../shared/bench/seed_plan_bench.py plans with the
// seed runner's planned(), as hostplan.Plan takes it, so that the Go plan and the seed's are
// timed on the same apps, pods and crashes.
package seedinput

import (
	"fmt"
	"time"

	"github.com/tidegate/tidegate/shared/hostplan"
)

// Now is the seed benchmark's clock, 1,000,000 s after the epoch.
var Now = time.Unix(1_000_000, 0)

// podsPerApp is how many pods the seed benchmark gives each app: its wanted host, its live host
// and three old ones.
const podsPerApp = 5

// Input is one plan's inputs.
type Input struct {
	Apps       []hostplan.App
	Containers []hostplan.Container
	Crashes    map[string][]time.Time
}

// Build is the seed benchmark's input for n apps, mirrored field for field: app i of org
// `org<i%97>` wants release 2 (registered when i%3 == 0, already failed when i%50 == 0) with
// release 1 live, and has five pods, Running, Running, Failed, Pending and Succeeded (the wanted
// host, the live host, then old ones), the k-th started 30k + i%200 seconds before Now; every
// seventh app's live host crashed 10 s and 400 s before Now.
func Build(n int) Input {
	in := Input{
		Apps:       make([]hostplan.App, 0, n),
		Containers: make([]hostplan.Container, 0, podsPerApp*n),
		Crashes:    make(map[string][]time.Time, n/7+1),
	}
	for i := range n {
		name := fmt.Sprintf("app%d", i)
		key := fmt.Sprintf("org%d/%s", i%97, name)
		host := fmt.Sprintf("%s-r2-abcd%04x", name, i)
		live := fmt.Sprintf("%s-r1-abcd%04x", name, i)
		a := hostplan.App{Key: key, Host: host, LiveHost: live, Failed: i%50 == 0}
		if i%3 == 0 {
			a.RegisteredPod = uid(host) // registered by the wanted host's own pod
		}
		in.Apps = append(in.Apps, a)
		for k := range podsPerApp {
			var pod string
			switch k {
			case 0:
				pod = host
			case 1:
				pod = live
			default:
				pod = fmt.Sprintf("%s-old%d", name, k)
			}
			at := Now.Add(-time.Duration(30*k+i%200) * time.Second)
			in.Containers = append(in.Containers, container(pod, key, k, at))
		}
		if i%7 == 0 {
			in.Crashes[live] = []time.Time{Now.Add(-10 * time.Second), Now.Add(-400 * time.Second)}
		}
	}
	return in
}

// container is the k-th pod of an app in the seed benchmark's states. The seed's Pending pod has
// not started its app: the seed reads such a pod's start as its creation plus the install's
// time, so its creation is that much earlier here.
func container(name, app string, k int, at time.Time) hostplan.Container {
	c := hostplan.Container{Name: name, UID: uid(name), App: app, Ours: true, StartedAt: at, CreatedAt: at}
	switch k {
	case 2: // Failed
		c.Exited, c.ExitCode = true, 1
	case 3: // Pending
		c.Installing, c.StartedAt, c.CreatedAt = true, time.Time{}, at.Add(-hostplan.InstallWithin)
	case 4: // Succeeded
		c.Exited = true
	}
	return c
}

// uid is the UID of the pod named name: one incarnation each, as the seed has no others.
func uid(name string) string { return "uid-" + name }
