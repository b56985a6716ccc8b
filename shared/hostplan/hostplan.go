// Package hostplan provides the host plan for hosted apps: from the apps wanted, the hosting pods
// the cluster has and the crashes recorded, the steps that bring each app's host where it should be.
//
// Numbers in, steps out: Plan reads no clock, calls no cluster and no store. The reconcile beat
// lists the hosting pods with one label-selected LIST, builds the inputs, calls Plan and carries
// the steps out; a host is one gVisor pod running one release of one app, named
// `<app>-r<release>-<8 hex>`.
//
// The rules, each app on its own:
//
//   - The host that last went live serves until the wanted host registers, whatever becomes of
//     the wanted one: its pod lost (its node gone, the pod deleted), it is started again from its
//     own release; its process exited, it is revived. Either counts as a crash of it.
//   - A registration belongs to the pod incarnation whose process made it (App.RegisteredPod is
//     that pod's UID): a wanted host whose pod disappeared and was started again, or was revived,
//     is not registered until the new pod's own process registers.
//   - A wanted host that exits before it ever served fails its release at once, even one that
//     had registered before the beat saw it go live: the live host keeps serving.
//   - A host that served and exits is revived, at most MostCrashes times in CrashWindow; the next
//     exit fails the release (ReasonCrashLooping). A live host apart from the wanted one that
//     exits or loses its pod past that many crashes (lost pods started again included) is not
//     run again instead: the wanted release is not its to fail.
//   - A host with a readiness check (Container.Checked) is live only while the check passes: the
//     wanted host goes live once it registered and its pod is Ready, and the live one serves until
//     then. A host that registered and whose check has failed for longer than the App's
//     UnreadyLimit is revived as a crash (ReasonUnhealthy), counting toward MostCrashes like an
//     exit, whether or not it served; past MostCrashes its release fails (ReasonCrashLooping) and
//     the live host keeps serving. A host without a check is judged by its registration alone.
//   - A wanted host that has not registered RegistersWithin after its app process started fails
//     its release (ReasonNeverRegistered). The install is not counted: it is an init container,
//     and the app's own container starts after it.
//   - A failed release's host is removed and the live one kept; every other pod of the app, and
//     every pod of an app no longer wanted, is stopped.
//   - A pod without our labels is never in any step.
package hostplan

import "time"

const (
	// RegistersWithin is how long a wanted host's app process has to register its agents: the
	// seed runner's measured bound (120 s from the process starting to the gateway seeing it).
	RegistersWithin = 120 * time.Second

	// MostCrashes is how many times a host that served is revived (or, the live host apart from
	// the wanted one, started again after its pod was lost) within CrashWindow; the crash after
	// that fails the release, or, for a live host apart from the wanted one, is not run again. The seed runner's figure: five tries cover a dependency that
	// restarts under the app, and no more are worth taking for an app that cannot stay up.
	MostCrashes = 5

	// CrashWindow is the span over which crashes are counted, the seed runner's ten minutes.
	CrashWindow = 10 * time.Minute

	// InstallWithin is the install init container's own time limit (the seed runner runs it under
	// `timeout 300`). A host whose app process never started is timed from its pod's creation
	// with this much more for the install, so one stuck before running still fails in time.
	InstallWithin = 300 * time.Second

	// DefaultUnreadyLimit is how long a registered host's readiness check may fail before the
	// host is revived as unhealthy, when the App gives no UnreadyLimit (config's
	// TIDEGATE_APP_UNREADY_SECONDS). A minute rides out a slow dependency or a long pause.
	DefaultUnreadyLimit = 60 * time.Second

	// MinUnreadyLimit is the shortest UnreadyLimit config accepts: the pod's Ready condition
	// turns False only after its check failed three times ten seconds apart (podspec), so a
	// shorter limit would judge a host on one bad answer.
	MinUnreadyLimit = 30 * time.Second
)

// App is one app that is wanted running: its wanted host and the one serving now. An app that is
// stopped or deleted is not an App; its pods are stopped.
type App struct {
	// Key is the app's `<org>/<name>`, as its pods carry it.
	Key string
	// Host is the wanted release's host. An empty Host wants no new host: the live one is kept,
	// and started again only if its pod is lost.
	Host string
	// LiveHost is the host that last went live, empty while the app has never been live.
	LiveHost string
	// RegisteredPod is the UID of the pod whose process registered the wanted host, empty while
	// none has. The wanted host counts as registered only while its pod is that one (Registered).
	RegisteredPod string
	// Failed says the wanted release has already failed: its host is not started again.
	Failed bool
	// RegisteredAt is when the wanted host registered (with RegisteredPod); its readiness check
	// is judged from then. Zero when unknown.
	RegisteredAt time.Time
	// UnreadyLimit is how long a registered host's readiness check may fail before it is revived
	// as unhealthy; 0 is DefaultUnreadyLimit.
	UnreadyLimit time.Duration
}

// Container is one hosting pod as the plan reads it: whose it is and how its containers stand.
type Container struct {
	// Name is the pod's name, the host.
	Name string
	// UID is the pod's UID: one incarnation of the host, which a pod of the same name started
	// again does not share.
	UID string
	// App is the key of the app the pod says it belongs to.
	App string
	// Ours says the pod carries our labels. One that does not is never touched.
	Ours bool
	// Installing says the install init container has not finished.
	Installing bool
	// InstallFailed says the install init container ended in failure, so the app never ran.
	InstallFailed bool
	// Exited says the pod's process is over (phase Succeeded or Failed).
	Exited bool
	// OOMKilled says the app container was killed for using more memory than the host has.
	OOMKilled bool
	// ExitCode is the app container's (or, when InstallFailed, the install's) exit code.
	ExitCode int32
	// StartedAt is when the app container started, after the install; zero until it has.
	StartedAt time.Time
	// CreatedAt is when the pod was created; it times a host whose app process never started.
	CreatedAt time.Time
	// Checked says the app container has a readiness check (the app's tidegate.json "ready"):
	// then Ready and ReadyChanged count. A pod without one is ready once registered.
	Checked bool
	// Ready is the pod's Ready condition: its check passes.
	Ready bool
	// ReadyChanged is when the pod's Ready condition last changed; zero when it has none.
	ReadyChanged time.Time
}

// Registered says c is the pod of app's wanted host whose own process registered it: a pod of
// the same name that is another incarnation (started again, revived) is not.
func (a *App) Registered(c *Container) bool {
	return c != nil && a.Host != "" && c.Name == a.Host && a.RegisteredPod != "" && c.UID == a.RegisteredPod
}

// ended says the pod's process is over, or never got to run because its install failed.
func (c *Container) ended() bool { return c.Exited || c.InstallFailed }

// overdue says a wanted host that has not registered has had its time: RegistersWithin from its
// app process starting, or, when that never started, InstallWithin more from the pod's creation.
// A pod with neither time is not timed.
func (c *Container) overdue(now time.Time) bool {
	switch {
	case !c.StartedAt.IsZero() && !c.Installing:
		return now.Sub(c.StartedAt) > RegistersWithin
	case !c.CreatedAt.IsZero():
		return now.Sub(c.CreatedAt) > InstallWithin+RegistersWithin
	}
	return false
}

// ready says c may serve as far as its readiness check goes: it has none, or the check passes.
func (c *Container) ready() bool { return !c.Checked || c.Ready }

// unhealthy says c, a host that registered, has a readiness check that has failed for longer than
// limit, counted from the latest of the check's last change, its app process starting and judged
// (its registration, or any later time from which it is to be judged). A host whose app process
// has not started is not judged.
func (c *Container) unhealthy(judged time.Time, limit time.Duration, now time.Time) bool {
	if c.ready() || c.ended() || c.Installing || c.StartedAt.IsZero() {
		return false
	}
	from := c.ReadyChanged
	for _, t := range []time.Time{c.StartedAt, judged} {
		if t.After(from) {
			from = t
		}
	}
	return !from.IsZero() && now.Sub(from) > limit
}

// UnreadyAllowed is how long a registered host of a may fail its readiness check: a's
// UnreadyLimit, or DefaultUnreadyLimit when it gives none.
func (a *App) UnreadyAllowed() time.Duration {
	if a.UnreadyLimit > 0 {
		return a.UnreadyLimit
	}
	return DefaultUnreadyLimit
}

// RecentCrashes is the crashes of times that Plan still counts at now: those within CrashWindow.
// The beat keeps only these when it records a crash, so the record stays bounded.
func RecentCrashes(times []time.Time, now time.Time) []time.Time {
	var recent []time.Time
	for _, at := range times {
		if now.Sub(at) < CrashWindow {
			recent = append(recent, at)
		}
	}
	return recent
}

// mayRunAgain says a host that served and exited is revived, rather than failing its release.
func mayRunAgain(host string, crashes map[string][]time.Time, now time.Time) bool {
	n := 0
	for _, at := range crashes[host] {
		if now.Sub(at) < CrashWindow {
			n++
		}
	}
	return n < MostCrashes
}
