package hostplan

import (
	"fmt"
	"strings"
)

// Step is one thing the beat does for an app. The set is closed: Start, Revive, Stop, WentLive
// and Failed; an executor type-switches on them and treats any other as an error.
//
// A step points at the App or the Container it is about, in Plan's inputs, so that the executor
// reads what it needs of them (a Stop names its pod as Pod.Name) and a step of one pointer costs
// no allocation; the steps are valid while those inputs are left unchanged.
type Step interface{ step() }

// Start installs and runs a host of the app that has no pod: its wanted host, App.Host, or, when
// Live, the host that went live, App.LiveHost, whose pod was lost (its node gone, the pod deleted)
// while another release is wanted. The live host is started from its own release, and its start
// is recorded as a crash of it: a lost pod counts toward MostCrashes as an exit does.
type Start struct {
	App  *App
	Live bool
}

// Host is the host s starts.
func (s Start) Host() string {
	if s.Live {
		return s.App.LiveHost
	}
	return s.App.Host
}

// Revive runs again a host that served and whose process exited, or a host that registered and
// whose readiness check has failed for longer than its limit, and records the crash. The pod's
// last lines are the beat's to keep before it is replaced.
type Revive struct {
	Pod *Container
	// Reason is the verdict on the host: ReasonExited or ReasonOOMKilled for a process that
	// ended, ReasonUnhealthy for a failing readiness check.
	Reason Reason
}

// Stop drains and removes a pod nobody wants any more.
type Stop struct {
	Pod *Container
}

// WentLive tells the gateway the wanted host, App.Host, registered: it is the app's live host
// from now on.
type WentLive struct {
	App *App
}

// Failed fails the app's wanted release. Pod is the host whose last lines the beat fetches to say
// why (see Why; its exit code is Pod.ExitCode); a Stop for it follows in the same steps.
type Failed struct {
	Pod    *Container
	Reason Reason
}

func (Start) step()    {}
func (Revive) step()   {}
func (Stop) step()     {}
func (WentLive) step() {}
func (Failed) step()   {}

// Reason is why a release failed. The values are what the API shows and app.failed events carry.
type Reason string

const (
	// ReasonInstallFailed: the install init container failed, so the app never ran.
	ReasonInstallFailed Reason = "install_failed"
	// ReasonExited: the wanted host's process exited before it ever served.
	ReasonExited Reason = "exited"
	// ReasonOOMKilled: the wanted host was killed for its memory use before it ever served.
	ReasonOOMKilled Reason = "oom_killed"
	// ReasonNeverRegistered: the wanted host did not register within RegistersWithin of its app
	// process starting.
	ReasonNeverRegistered Reason = "never_registered"
	// ReasonCrashLooping: a host that served exited, or a registered host failed its readiness
	// check past its limit, once more after MostCrashes revivals within CrashWindow.
	ReasonCrashLooping Reason = "crash_looping"
	// ReasonUnhealthy: a registered host's readiness check failed for longer than its limit; the
	// verdict of a Revive, never of a failed release (that is ReasonCrashLooping).
	ReasonUnhealthy Reason = "unhealthy"
)

// What a failed release says to its org, before the host's last lines: what happened and what to
// do about it.
const (
	whyInstallFailed   = "installing the release failed with exit code %d; fix the install its last lines show and upload a new release"
	whyExited          = "the app exited with code %d before it registered; fix what its last lines show and upload a new release"
	whyOOMKilled       = "the app was killed for using more memory than a host has, before it registered; lower its memory use and upload a new release"
	whyNeverRegistered = "the app did not register within %.0f s of starting; it must call POST /api/v1/hosts/{host}/register with its host token once it is ready"
	whyCrashLooping    = "the app kept exiting or failing its readiness check after it registered: it was run again %d times within %.0f minutes and is not run again; fix what its last lines show and upload a new release, or roll back"
	whyUnknown         = "the release failed (%s)"
	lastLinesHeader    = "\nits last lines:\n"
)

// Why is the failure as the app's failed_why says it, with lastLines, the failed container's last
// output as the beat fetched it (the install's when the app never ran), appended when there are any.
func (f Failed) Why(lastLines string) string {
	var why string
	switch f.Reason {
	case ReasonInstallFailed:
		why = fmt.Sprintf(whyInstallFailed, f.exitCode())
	case ReasonExited:
		why = fmt.Sprintf(whyExited, f.exitCode())
	case ReasonOOMKilled:
		why = whyOOMKilled
	case ReasonNeverRegistered:
		why = fmt.Sprintf(whyNeverRegistered, RegistersWithin.Seconds())
	case ReasonCrashLooping:
		why = fmt.Sprintf(whyCrashLooping, MostCrashes, CrashWindow.Minutes())
	default:
		why = fmt.Sprintf(whyUnknown, f.Reason)
	}
	if lines := strings.TrimRight(lastLines, "\n"); lines != "" {
		why += lastLinesHeader + lines
	}
	return why
}

func (f Failed) exitCode() int32 {
	if f.Pod == nil {
		return 0
	}
	return f.Pod.ExitCode
}

// exitReason is the verdict on a host that served and whose process ended: killed for its memory,
// or exited.
func exitReason(c *Container) Reason {
	if c.OOMKilled {
		return ReasonOOMKilled
	}
	return ReasonExited
}

// failedOnExit is the failure of a wanted host that ended before it ever served.
func failedOnExit(c *Container) Failed {
	switch {
	case c.InstallFailed:
		return Failed{Pod: c, Reason: ReasonInstallFailed}
	case c.OOMKilled:
		return Failed{Pod: c, Reason: ReasonOOMKilled}
	}
	return Failed{Pod: c, Reason: ReasonExited}
}
