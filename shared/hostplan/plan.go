package hostplan

import "time"

// Plan is this beat's steps per app key, each app's in the order they are to be done; an app with
// nothing to do is not in it. It touches nothing and changes none of its inputs.
//
// apps are the apps wanted running, one per key (a later App with a key already seen is
// ignored). containers are the hosting pods the cluster has; those not Ours are never in a step,
// and a pod of our own whose app is not wanted is stopped, under its App key. crashes are the
// recorded crashes of each host by name. An app's steps depend on its own App, its own pods and
// its hosts' crashes only. The steps point into apps and containers (see Step).
//
// Plan reads each pod once to group the pods by app (one map lookup a pod), then each app's own
// pods: its cost is linear in the number of apps and pods.
func Plan(apps []App, containers []Container, crashes map[string][]time.Time, now time.Time) map[string][]Step {
	p := planner{containers: containers, ix: group(apps, containers), crashes: crashes, now: now}
	// An app has at most two steps more than it has pods: a pod it keeps takes no Stop, a host
	// revived or gone live is kept, a failed one is stopped too, and a Start is for a host without
	// one (the wanted host, and the live one apart from it). So every wanted app's steps fit in one
	// array, sliced per app once all are planned.
	all := make([]Step, 0, 2*len(apps)+p.ix.pods)
	ends := make([]int, len(apps))
	withSteps := 0
	for i := range apps {
		from := len(all)
		if !p.ix.isDuplicate(i) {
			all = p.app(all, &apps[i], i)
		}
		ends[i] = len(all)
		if len(all) > from {
			withSteps++
		}
	}

	steps := make(map[string][]Step, withSteps+p.ix.unwanted)
	from := 0
	for i, end := range ends {
		if end > from {
			steps[apps[i].Key] = all[from:end:end]
		}
		from = end
	}
	if p.ix.unwanted > 0 {
		for i := range containers {
			if p.ix.next[i] == unwantedPod {
				c := &containers[i]
				steps[c.App] = append(steps[c.App], Stop{Pod: c})
			}
		}
	}
	return steps
}

// planner is what every app is planned from.
type planner struct {
	containers []Container
	ix         index
	crashes    map[string][]time.Time
	now        time.Time
}

// app appends the steps of app, apps[i], to steps: first what its wanted host needs, then what
// its live host needs (see live), then a Stop for each of its pods that is not kept, in the pods'
// order.
func (p *planner) app(steps []Step, app *App, i int) []Step {
	var wanted, live *Container
	for k := p.ix.first[i]; k >= 0; k = p.ix.next[k] {
		c := &p.containers[k]
		switch {
		case app.Host != "" && c.Name == app.Host:
			if wanted == nil {
				wanted = c
			}
		case app.LiveHost != "" && c.Name == app.LiveHost:
			if live == nil {
				live = c
			}
		}
	}

	// The live host is kept apart from the wanted one only while they differ. The wanted host is
	// registered only by its present pod's own process, and serves only while its readiness check
	// (if it has one) passes.
	served := app.Host == app.LiveHost
	registered := app.Registered(wanted)
	ready := registered && wanted.ready()
	unhealthy := registered && wanted.unhealthy(app.RegisteredAt, app.UnreadyAllowed(), p.now)
	keepWanted := app.Host != "" && !app.Failed
	keepLive := app.LiveHost != "" && !served
	switch {
	case !keepWanted:
		// A failed release is not started again; its host goes, the live one stays.
	case wanted == nil:
		steps = append(steps, Start{App: app})
	case wanted.ended() && !served:
		steps = append(steps, failedOnExit(wanted))
		keepWanted = false
	case (wanted.ended() || unhealthy) && !mayRunAgain(wanted.Name, p.crashes, p.now):
		steps = append(steps, Failed{Pod: wanted, Reason: ReasonCrashLooping})
		keepWanted = false
	case wanted.ended():
		steps = append(steps, Revive{Pod: wanted, Reason: exitReason(wanted)})
	case unhealthy:
		steps = append(steps, Revive{Pod: wanted, Reason: ReasonUnhealthy})
	case ready && !served:
		steps = append(steps, WentLive{App: app})
	case !registered && !served && wanted.overdue(p.now):
		steps = append(steps, Failed{Pod: wanted, Reason: ReasonNeverRegistered})
		keepWanted = false
	}
	// Once the wanted host has registered and is ready, the live one has been replaced; unless
	// the wanted release has just failed, when the live host is all the app has.
	if ready && keepWanted {
		keepLive = false
	}

	if keepLive {
		steps, keepLive = p.live(steps, app, live)
	}

	for k := p.ix.first[i]; k >= 0; k = p.ix.next[k] {
		c := &p.containers[k]
		if (keepWanted && c.Name == app.Host) || (keepLive && c.Name == app.LiveHost) {
			continue
		}
		steps = append(steps, Stop{Pod: c})
	}
	return steps
}

// live appends what app's live host needs, while it serves apart from the wanted one, to steps,
// and says whether its pod is kept. live is its pod, nil when it has none.
//
// The live host serves until the wanted one replaces it, whatever the wanted release does: one
// whose pod was lost (its node gone, the pod deleted) is started again from its own release, one
// whose process exited is revived, one whose check has failed too long is revived as unhealthy.
// Each counts as a crash, and past MostCrashes within CrashWindow the live host is left to go. Its
// process registered before it went live; a pod of it revived or started since is given
// RegistersWithin to start again before its check is judged.
func (p *planner) live(steps []Step, app *App, live *Container) ([]Step, bool) {
	again := mayRunAgain(app.LiveHost, p.crashes, p.now)
	switch {
	case live == nil && again:
		steps = append(steps, Start{App: app, Live: true})
	case live == nil:
	case live.ended() && again:
		steps = append(steps, Revive{Pod: live, Reason: exitReason(live)})
	case live.ended():
		return steps, false
	case live.unhealthy(live.StartedAt.Add(RegistersWithin), app.UnreadyAllowed(), p.now) && again:
		steps = append(steps, Revive{Pod: live, Reason: ReasonUnhealthy})
	}
	return steps, true
}
