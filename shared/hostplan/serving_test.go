package hostplan_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/hostplan"
)

// history is one app followed beat by beat, as the store, the cluster and the hosts' processes
// would move it: between beats pods vanish, exit, start their process and register (some with a
// UID of an incarnation that is gone), and new releases are uploaded; at each beat the plan's
// steps are carried out.
type history struct {
	r   *rand.Rand
	now time.Time
	// app is the record as the store holds it: registered is the host that last registered and
	// registeredPod the UID its process gave; tokenHost the host whose token was last minted.
	app                                  hostplan.App
	registered, registeredPod, tokenHost string
	registeredAt                         time.Time
	release                              int
	pods                                 []hostplan.Container
	crashes                              map[string][]time.Time
	uids                                 int
	gone                                 []string // UIDs of incarnations that no longer exist
	log                                  []string
}

func newHistory(seed uint64) *history {
	h := &history{r: rand.New(rand.NewPCG(seed, 16)), now: now, crashes: map[string][]time.Time{}}
	h.app = hostplan.App{Key: shop}
	h.upload()
	return h
}

func (h *history) say(format string, args ...any) {
	h.log = append(h.log, fmt.Sprintf("%s ", h.now.Sub(now))+fmt.Sprintf(format, args...))
}

// upload makes a new release the one wanted, as an upload does: its failure, if any, is cleared.
func (h *history) upload() {
	h.release++
	h.app.Host, h.app.Failed = fmt.Sprintf("shop-r%d-00000000", h.release), false
	h.say("release %d uploaded", h.release)
}

// input is the App the beat gives the plan: the registration counts for the wanted host only.
func (h *history) input() hostplan.App {
	a := h.app
	a.RegisteredPod = ""
	if h.registered == a.Host {
		a.RegisteredPod, a.RegisteredAt = h.registeredPod, h.registeredAt
	}
	return a
}

func (h *history) pod(name string) *hostplan.Container {
	for i := range h.pods {
		if h.pods[i].Name == name {
			return &h.pods[i]
		}
	}
	return nil
}

func alive(c *hostplan.Container) bool { return c != nil && !c.Exited && !c.InstallFailed }

// ready says c's readiness check, if it has one, passes: it may serve.
func ready(c *hostplan.Container) bool { return !c.Checked || c.Ready }

// newPod is a new incarnation of host, installing; half the hosts have a readiness check.
func (h *history) newPod(host string) hostplan.Container {
	h.uids++
	return hostplan.Container{Name: host, UID: fmt.Sprintf("uid-%d", h.uids), App: shop, Ours: true, Installing: true, CreatedAt: h.now,
		Checked: h.release%2 == 0}
}

// happen is what goes on between two beats: a few random events, then time passes.
func (h *history) happen() {
	for range h.r.IntN(3) {
		switch n := len(h.pods); {
		case h.r.IntN(10) == 0:
			h.upload()
		case n > 0 && h.r.IntN(4) == 0:
			i := h.r.IntN(n)
			h.say("pod %s (%s) vanished", h.pods[i].Name, h.pods[i].UID)
			h.gone = append(h.gone, h.pods[i].UID)
			h.pods = slices.Delete(h.pods, i, i+1)
		case n > 0 && h.r.IntN(3) == 0:
			p := &h.pods[h.r.IntN(n)]
			if p.Checked && alive(p) && !p.Installing && h.r.IntN(2) == 0 {
				p.Ready, p.ReadyChanged = !p.Ready, h.now
				h.say("pod %s (%s) ready: %v", p.Name, p.UID, p.Ready)
			} else if !p.Installing {
				p.Exited, p.ExitCode = true, int32(h.r.IntN(2))
				h.say("pod %s (%s) exited", p.Name, p.UID)
			}
		case n > 0:
			p := &h.pods[h.r.IntN(n)]
			switch {
			case p.Installing:
				p.Installing, p.StartedAt = false, h.now
				h.say("pod %s (%s) started its process", p.Name, p.UID)
			case alive(p):
				h.register(p.Name, p.UID)
			}
		case len(h.gone) > 0:
			h.register(h.tokenHost, h.gone[h.r.IntN(len(h.gone))])
		}
	}
	h.now = h.now.Add(time.Duration(5+h.r.IntN(60)) * time.Second)
}

// register is a host's process registering with uid, as the store takes it: only the host whose
// token was last minted, and not once its release failed.
func (h *history) register(host, uid string) {
	if host != h.tokenHost || host != h.app.Host || h.app.Failed {
		return
	}
	h.registered, h.registeredPod, h.registeredAt = host, uid, h.now
	h.say("host %s registered as %s", host, uid)
}

// serving is the UIDs of the pods that may serve the app: the live host's, and the wanted host's
// when its own process registered it; either only while its readiness check, if any, passes.
func (h *history) serving(in hostplan.App) []string {
	var uids []string
	if p := h.pod(in.LiveHost); in.LiveHost != "" && alive(p) && ready(p) {
		uids = append(uids, p.UID)
	}
	if p := h.pod(in.Host); alive(p) && in.Registered(p) && ready(p) {
		uids = append(uids, p.UID)
	}
	return uids
}

// beat plans and carries the steps out, and answers an error when the app had a host to serve
// and has none that served or registered afterwards, or went live on a pod that did not register.
func (h *history) beat() error {
	in := h.input()
	before := h.serving(in)
	steps := hostplan.Plan([]hostplan.App{in}, h.pods, h.crashes, h.now)
	words := describe(steps)[shop]
	wanted := h.pod(in.Host)
	for _, w := range words {
		h.say("beat: %s", w)
		kind, host, _ := strings.Cut(w, " ")
		host, _, _ = strings.Cut(host, " ")
		switch kind {
		case "start":
			h.pods = append(h.pods, h.newPod(host))
			h.tokenHost = host
		case "revive":
			p := h.pod(host)
			h.gone = append(h.gone, p.UID)
			*p = h.newPod(host)
			h.crashes[host] = append(h.crashes[host], h.now)
		case "stop":
			h.gone = append(h.gone, h.pod(host).UID)
			h.pods = slices.DeleteFunc(h.pods, func(c hostplan.Container) bool { return c.Name == host })
		case "went_live":
			if wanted == nil || wanted.UID != in.RegisteredPod {
				return fmt.Errorf("%s went live, but its pod's own process did not register it", host)
			}
			if !ready(wanted) {
				return fmt.Errorf("%s went live while its readiness check fails", host)
			}
			h.app.LiveHost = host
		case "failed":
			h.app.Failed = true
		}
	}
	if len(before) == 0 {
		return nil
	}
	if p := h.pod(h.app.LiveHost); !alive(p) || !slices.Contains(before, p.UID) {
		return fmt.Errorf("the app had a serving host (%v) and after the beat its live host %q has none of them", before, h.app.LiveHost)
	}
	return nil
}

// TestPlanKeepsServing follows random histories of one app through many beats: while a host that
// went live, or the wanted host's own registered pod, is alive, the app has a live host after the
// beat among them, across any pod deaths, exits, readiness checks failing and passing, new
// incarnations, stale registrations and releases; and a host goes live only on its registered
// incarnation, with its check (if it has one) passing.
func TestPlanKeepsServing(t *testing.T) {
	for seed := range uint64(400) {
		h := newHistory(seed)
		for range 60 {
			h.happen()
			if err := h.beat(); err != nil {
				t.Fatalf("history %d: %v; what happened:\n%s", seed, err, strings.Join(h.log, "\n"))
			}
		}
	}
}
