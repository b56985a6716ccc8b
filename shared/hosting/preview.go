package hosting

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/hostplan"
)

// AppPlan is what the next beat would do for one app, and why.
type AppPlan struct {
	App      string        `json:"app"`
	State    apps.State    `json:"state,omitempty"` // empty for pods of an app that is gone
	Host     string        `json:"host,omitempty"`  // the host wanted
	LiveHost string        `json:"live_host,omitempty"`
	Steps    []PlannedStep `json:"steps"`
	// Note says why there is nothing to do, when there is nothing.
	Note string `json:"note,omitempty"`
}

// PlannedStep is one step of an app's plan.
type PlannedStep struct {
	Step string `json:"step"` // start, revive, stop, went_live, failed
	Host string `json:"host"`
	Why  string `json:"why"`
}

// Plan answers what the next beat would do for org's apps, and why, without doing any of it: the
// same reads and the same plan as a beat, now.
func (h *Hoster) Plan(ctx context.Context, org string) ([]AppPlan, error) {
	w, err := h.read(ctx, org, "")
	if err != nil {
		return nil, err
	}
	steps := hostplan.Plan(w.plan, w.containers, w.crashes, w.now)
	wanted := map[string]hostplan.App{}
	for _, a := range w.plan {
		wanted[a.Key] = a
	}
	keys := make([]string, 0, len(w.apps)+len(steps))
	for key := range w.apps {
		keys = append(keys, key)
	}
	for key := range steps {
		if _, ok := w.apps[key]; !ok {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	out := make([]AppPlan, 0, len(keys))
	for _, key := range keys {
		a, known := w.apps[key]
		want := wanted[key]
		p := AppPlan{App: strings.TrimPrefix(key, org+"/"), State: a.State, Host: want.Host, LiveHost: a.LiveHost, Steps: []PlannedStep{}}
		for _, st := range steps[key] {
			p.Steps = append(p.Steps, explain(st, a, known, want, w))
		}
		if len(p.Steps) == 0 {
			c, _ := w.container(want.Host)
			p.Note = idle(a, want, w.registered(want), c)
		}
		out = append(out, p)
	}
	return out, nil
}

// explain says one step and why it is taken.
func explain(st hostplan.Step, a apps.App, known bool, want hostplan.App, w *world) PlannedStep {
	switch s := st.(type) {
	case hostplan.Start:
		if s.Live {
			return PlannedStep{Step: "start", Host: s.Host(), Why: whyStartLive(a, want, w)}
		}
		why := fmt.Sprintf("release %d is wanted and no pod runs its host", a.Release)
		if a.LiveHost != "" {
			why += fmt.Sprintf("; %s keeps serving until it registers", a.LiveHost)
		}
		return PlannedStep{Step: "start", Host: s.App.Host, Why: why}
	case hostplan.Revive:
		n := len(hostplan.RecentCrashes(w.crashes[s.Pod.Name], w.now)) + 1
		what := "it served and its process exited"
		if s.Reason == hostplan.ReasonUnhealthy {
			what = fmt.Sprintf("it registered and its readiness check has failed for over %.0f s", want.UnreadyAllowed().Seconds())
		}
		return PlannedStep{Step: "revive", Host: s.Pod.Name, Why: fmt.Sprintf(
			"%s: %s; it runs again (crash %d of the %d allowed within %.0f minutes)",
			s.Reason, what, n, hostplan.MostCrashes, hostplan.CrashWindow.Minutes())}
	case hostplan.Stop:
		return PlannedStep{Step: "stop", Host: s.Pod.Name, Why: whyStop(s.Pod.Name, a, known, w.registered(want), want)}
	case hostplan.WentLive:
		why := "it registered: it becomes the live host"
		if c, ok := w.container(s.App.Host); ok && c.Checked {
			why = "it registered and its readiness check passes: it becomes the live host"
		}
		if a.LiveHost != "" && a.LiveHost != s.App.Host {
			why += fmt.Sprintf(", and %s is stopped in the same beat", a.LiveHost)
		}
		return PlannedStep{Step: "went_live", Host: s.App.Host, Why: why}
	case hostplan.Failed:
		return PlannedStep{Step: "failed", Host: s.Pod.Name, Why: string(s.Reason) + ": " + s.Why("")}
	}
	return PlannedStep{Step: fmt.Sprintf("%T", st)}
}

// whyStartLive says why a's live host, whose pod is lost, is started again.
func whyStartLive(a apps.App, want hostplan.App, w *world) string {
	n := len(hostplan.RecentCrashes(w.crashes[a.LiveHost], w.now)) + 1
	waiting := fmt.Sprintf("release %d has not registered", a.Release)
	switch {
	case a.Failed():
		waiting = fmt.Sprintf("release %d failed", a.Release)
	case want.Host == "":
		waiting = "no other release is wanted"
	}
	return fmt.Sprintf("lost: the live host's pod is gone (its node lost, or the pod deleted) and %s; it runs again from release %d so that the app keeps serving (crash %d of the %d allowed within %.0f minutes)",
		waiting, a.LiveRelease, n, hostplan.MostCrashes, hostplan.CrashWindow.Minutes())
}

func whyStop(pod string, a apps.App, known, registered bool, want hostplan.App) string {
	switch {
	case !known:
		return "its app was deleted"
	case a.Stopped():
		return "its app is stopped"
	case (a.Failed() && pod == a.FailedHost) || pod == want.Host:
		return fmt.Sprintf("release %d failed; its host is removed and the live one kept", a.Release)
	case registered && pod == a.LiveHost:
		return fmt.Sprintf("%s registered and replaces it in this beat", want.Host)
	}
	return "no release wants it any more"
}

// registered says want's host is registered by the pod now running under its name, as the plan
// counts it.
func (w *world) registered(want hostplan.App) bool {
	c, ok := w.container(want.Host)
	return ok && c.Ours && want.Registered(&c)
}

// container is the pod named host as the plan sees it, if the beat read one.
func (w *world) container(host string) (hostplan.Container, bool) {
	info, ok := w.podsByName[host]
	if !ok {
		return hostplan.Container{}, false
	}
	c, _ := info.spec.container()
	return c, true
}

// idle says why an app has nothing to do this beat; c is the wanted host's pod, if it has one.
func idle(a apps.App, want hostplan.App, registered bool, c hostplan.Container) string {
	switch {
	case a.Stopped():
		return "stopped: no host runs"
	case a.Failed():
		if a.LiveHost != "" {
			return fmt.Sprintf("release %d failed; %s keeps serving", a.Release, a.LiveHost)
		}
		return fmt.Sprintf("release %d failed; upload a new release or start the app again", a.Release)
	case registered && c.Checked && !c.Ready && a.LiveHost == want.Host:
		return fmt.Sprintf("live on %s, whose readiness check fails: it is run again once that has lasted over %.0f s", want.Host, want.UnreadyAllowed().Seconds())
	case registered && a.LiveHost == want.Host:
		return fmt.Sprintf("live on %s", want.Host)
	case registered && c.Checked && !c.Ready:
		return fmt.Sprintf("%s registered; waiting for its readiness check to pass (it is run again once it has failed for over %.0f s)", want.Host, want.UnreadyAllowed().Seconds())
	}
	return fmt.Sprintf("waiting for %s to register", want.Host)
}
