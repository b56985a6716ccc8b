// Package hosting runs hosted apps on the hosting region's cluster: each beat it reads the apps
// wanted and the hosts' pods (one label-selected LIST), asks shared/hostplan what to do, and does
// it — Secret then pod to start a host, a 45 s drain to stop one, the record and an outbox event
// when a host goes live or a release fails. It also answers what the next beat would do (the plan
// preview) and a host's last lines.
package hosting

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/hostplan"
	"github.com/tidegate/tidegate/shared/keyring"
	"github.com/tidegate/tidegate/shared/metrics"
	"github.com/tidegate/tidegate/shared/podspec"
)

// Apps is what the beat reads and writes of apps; dynamo.AppStore is the real one.
type Apps interface {
	Hosting(ctx context.Context, org string) ([]apps.App, error)
	MintHostToken(ctx context.Context, org, app, host string) (string, error)
	MarkLive(ctx context.Context, org, app, host string, release int, now time.Time) error
	MarkFailed(ctx context.Context, org, app string, release int, host, reason, lines string, now time.Time) error
	RecordRevive(ctx context.Context, org, app string, rv apps.Revive) error
	// RecordCrash and Release serve a live host started again after its pod was lost.
	RecordCrash(ctx context.Context, org, app, host string, at time.Time) error
	Release(ctx context.Context, org, app string, n int) (apps.Release, error)
}

// Secrets reads an org's secrets, sealed, and their digest; dynamo.SecretStore is the real one.
type Secrets interface {
	Sealed(ctx context.Context, org string) (map[string]string, error)
	Digest(ctx context.Context, org string) (string, error)
}

// Opener opens sealed secrets, each with its owner's data keys; keyring.Ring is the real one.
type Opener interface {
	Open(ctx context.Context, owner, sealed, binding string) (string, error)
}

// Presigner makes a short-lived GET URL for a release's sources, which the install fetches.
type Presigner interface {
	PresignSources(ctx context.Context, sourcesSHA256 string) (string, error)
}

// Clusters reaches each region's cluster; shared/kube's is the real one.
type Clusters interface {
	Client(ctx context.Context, region string) (kubernetes.Interface, error)
}

// Hoster carries the host plan out on the hosting region's cluster.
type Hoster struct {
	Region    string // the hosting region
	Namespace string // where hosts' pods and Secrets live
	// Stack is the deployment's name (config.Config.Stack). Its hosts carry it in their
	// podspec.StackLabel and the beat lists, plans and touches only those: two deployments sharing
	// Namespace leave each other's hosts alone.
	Stack string
	// PublicURL is the API's base URL as hosts reach it; a host registers at
	// <PublicURL>/api/v1/hosts/<host>/register.
	PublicURL string
	// Image runs hosts of apps that name no runtime; empty is podspec.DefaultImage.
	Image string
	// Runtimes are the images of the runtimes an app may name (config.Config.AppRuntimes).
	Runtimes apps.Runtimes
	// UnreadyLimit is how long a registered host's readiness check may fail before the host is
	// revived as unhealthy (config.Config.AppUnreadyLimit); 0 is hostplan.DefaultUnreadyLimit.
	UnreadyLimit time.Duration
	Apps         Apps
	Secrets      Secrets
	Box          Opener
	Sources      Presigner
	Clusters     Clusters
	Log          *slog.Logger
	Now          func() time.Time
	// Metrics counts the plan's steps carried out and the releases that failed; nil records none.
	Metrics *metrics.Recorder
}

// appWorkers bounds how many apps' steps run at once: enough that a beat with many apps to start
// finishes well within the minute, few enough to stay under the client's QPS.
const appWorkers = 16

// Beat runs one hosting beat: read, plan, do. One app's failing step is logged and returned with
// the others'; it never stops other apps' steps.
func (h *Hoster) Beat(ctx context.Context) error {
	w, err := h.read(ctx, "", "")
	if err != nil {
		return err
	}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, appWorkers)
	)
	for pod, org := range w.unlabelled {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := w.cluster.labelOrg(ctx, pod, org); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	steps := hostplan.Plan(w.plan, w.containers, w.crashes, w.now)
	for key, todo := range steps {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := h.carryOut(ctx, w, key, todo); err != nil {
				h.log().WarnContext(ctx, "hosting an app", "app", key, "error", err)
				mu.Lock()
				errs = append(errs, fmt.Errorf("app %s: %w", key, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// world is what one beat read: the apps, their plan inputs, the hosts' pods, the secrets digests.
type world struct {
	now          time.Time
	unreadyLimit time.Duration
	cluster      cluster
	apps         map[string]apps.App // by key
	plan         []hostplan.App
	containers   []hostplan.Container
	crashes      map[string][]time.Time
	digests      map[string]string
	podsByName   map[string]podInfo
	// unlabelled are hosts started before hosts carried their org's label (podspec.OrgLabel),
	// with their orgs: the beat labels them, so an org's plan preview lists them too.
	unlabelled map[string]string
}

// podInfo is what carrying out a step needs of a pod beyond the plan's view.
type podInfo struct {
	sourcesSHA256 string
	spec          podRef
}

// read reads what the plan needs: every app's and every host's, or only org's when org is set,
// or only one app's when app is set too (one app's steps never depend on another's, so an org's
// plan is the whole plan's part of it). An org's apps are one range of the apps' index; its
// hosts' pods are selected by their org label, one app's by its stamp.
func (h *Hoster) read(ctx context.Context, org, app string) (*world, error) {
	w := &world{now: h.now(), unreadyLimit: h.UnreadyLimit, apps: map[string]apps.App{},
		crashes: map[string][]time.Time{}, digests: map[string]string{}, podsByName: map[string]podInfo{}}
	kc, err := h.Clusters.Client(ctx, h.Region)
	if err != nil {
		// A cluster that cannot be reached matters only if some app is hosted there.
		all, aerr := h.Apps.Hosting(ctx, org)
		if aerr != nil || len(all) > 0 {
			return nil, errors.Join(aerr, fmt.Errorf("reaching the hosting cluster in %s: %w", h.Region, err))
		}
		return w, nil
	}
	w.cluster = cluster{kc: kc, namespace: h.Namespace, stack: h.stack()}

	// The apps and the pods are read at the same time: a beat costs the slower of the two.
	podsCh := listHosts(ctx, w.cluster, podspec.StackSelector(hostSelector(org, app), h.stack()))
	all, err := h.Apps.Hosting(ctx, org)
	l := <-podsCh
	if err != nil {
		return nil, err
	}
	if l.err != nil && len(all) == 0 {
		return w, nil // nothing is hosted, so nothing is lost by not seeing the cluster
	}
	if l.err != nil {
		return nil, l.err
	}
	if org != "" {
		l.pods = slices.DeleteFunc(l.pods, func(p podRef) bool {
			key, _ := podspec.AppOf(p.p)
			return !strings.HasPrefix(key, org+"/")
		})
	}
	if app != "" {
		all = slices.DeleteFunc(all, func(a apps.App) bool { return a.Name != app })
	}
	if w.digests, err = h.digests(ctx, all); err != nil {
		return nil, err
	}
	w.addApps(all)
	w.addPods(l.pods)
	return w, nil
}

// hostSelector selects the hosts' pods read sees: every host's, org's when org is set, or one
// app's when app is set too.
func hostSelector(org, app string) string {
	selector := podspec.Selector()
	switch {
	case app != "":
		selector += "," + podspec.AppLabel + "=" + podspec.AppStamp(podspec.AppKey(org, app))
	case org != "":
		selector = podspec.OrgSelector(org)
	}
	return selector
}

// listedHosts are the hosts' pods one list found, or why it found none.
type listedHosts struct {
	pods []podRef
	err  error
}

// listHosts lists the hosts' pods that selector selects on c while the caller reads something
// else; the answer comes on the channel, which holds it until it is read.
func listHosts(ctx context.Context, c cluster, selector string) <-chan listedHosts {
	ch := make(chan listedHosts, 1)
	go func() {
		pods, err := c.hosts(ctx, selector)
		refs := make([]podRef, len(pods))
		for i := range pods {
			refs[i] = podRef{&pods[i]}
		}
		ch <- listedHosts{refs, err}
	}()
	return ch
}

// addApps adds the apps the plan is for, with their crashes and, for each app not stopped, the
// host it wants: named for its release and its org's secrets digest, which w holds already.
func (w *world) addApps(all []apps.App) {
	for _, a := range all {
		key := podspec.AppKey(a.Org, a.Name)
		w.apps[key] = a
		for host, times := range a.Crashes {
			w.crashes[host] = times
		}
		if a.Stopped() {
			continue // its pods are nobody's now: the plan stops them
		}
		wanted := apps.HostName(a.Org, a.Name, a.Release, a.SHA256, w.digests[a.Org])
		p := hostplan.App{Key: key, Host: wanted, LiveHost: a.LiveHost, Failed: a.Failed(), UnreadyLimit: w.unreadyLimit}
		if a.Registered == wanted {
			// The plan counts it only for the pod of that UID, and judges its check from then.
			p.RegisteredPod, p.RegisteredAt = a.RegisteredPod, a.RegisteredAt
		}
		w.plan = append(w.plan, p)
	}
}

// addPods adds the hosts' pods as the plan sees them and as carrying out a step needs them, and
// notes those without their org's label, for the beat to label.
func (w *world) addPods(pods []podRef) {
	w.containers = make([]hostplan.Container, 0, len(pods))
	for _, p := range pods {
		c, info := p.container()
		w.containers = append(w.containers, c)
		w.podsByName[c.Name] = info
		if key, ok := podspec.AppOf(p.p); ok && p.p.Labels[podspec.OrgLabel] == "" {
			if w.unlabelled == nil {
				w.unlabelled = map[string]string{}
			}
			w.unlabelled[c.Name], _, _ = strings.Cut(key, "/")
		}
	}
}

// digests reads the secrets digest of every org with an app, appWorkers orgs at a time.
func (h *Hoster) digests(ctx context.Context, all []apps.App) (map[string]string, error) {
	var orgs []string
	for _, a := range all {
		orgs = append(orgs, a.Org)
	}
	slices.Sort(orgs)
	orgs = slices.Compact(orgs)
	got := make([]string, len(orgs))
	errs := make([]error, len(orgs))
	sem := make(chan struct{}, appWorkers)
	var wg sync.WaitGroup
	for i, org := range orgs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if got[i], errs[i] = h.Secrets.Digest(ctx, org); errs[i] != nil {
				errs[i] = fmt.Errorf("reading org %s's secrets digest: %w", org, errs[i])
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(orgs))
	for i, org := range orgs {
		out[org] = got[i]
	}
	return out, nil
}

// carryOut does one app's steps in order. A Start or a Revive that fails holds back nothing after
// it, for no step depends on one: the wanted host failing to start leaves the live one to be
// started again, and the other way round. Any other step that fails ends the app's steps (a
// Failed its host's Stop, a WentLive the old live host's), and so does one a record having moved
// on makes stale, which is no error: the next beat plans again from what is then true.
func (h *Hoster) carryOut(ctx context.Context, w *world, key string, steps []hostplan.Step) error {
	var errs []error
	for _, st := range steps {
		err := h.carryOutStep(ctx, w, key, st)
		switch {
		case err == nil:
			h.countStep(ctx, st)
		case errors.Is(err, errDropped):
			return errors.Join(errs...)
		case isStartOrRevive(st):
			errs = append(errs, err)
		default:
			return errors.Join(append(errs, err)...)
		}
	}
	return errors.Join(errs...)
}

// errDropped is what carryOutStep answers for a step that a record having moved on since the beat
// read it makes stale: it and the app's later steps are dropped.
var errDropped = errors.New("the step is stale")

func isStartOrRevive(st hostplan.Step) bool {
	switch st.(type) {
	case hostplan.Start, hostplan.Revive:
		return true
	}
	return false
}

// carryOutStep does one step of the app of key.
func (h *Hoster) carryOutStep(ctx context.Context, w *world, key string, st hostplan.Step) error {
	a, known := w.apps[key]
	switch s := st.(type) {
	case hostplan.Start:
		if s.Live {
			return h.startLive(ctx, w, a)
		}
		return h.start(ctx, w, a, s.App.Host)
	case hostplan.Revive:
		return h.revive(ctx, w, a, known, s.Pod.Name, s.Reason)
	case hostplan.Stop:
		return w.cluster.stop(ctx, s.Pod.Name, podspec.SecretName(s.Pod.Name))
	case hostplan.WentLive:
		return dropStale(h.Apps.MarkLive(ctx, a.Org, a.Name, s.App.Host, a.Release, h.now()))
	case hostplan.Failed:
		return dropStale(h.fail(ctx, w, a, s))
	}
	return fmt.Errorf("a step of type %T, which the beat does not know", st)
}

// dropStale answers errDropped for err that says a record moved on, and err otherwise.
func dropStale(err error) error {
	if isStale(err) {
		return errDropped
	}
	return err
}

// countStep adds a step carried out to metrics.HostPlanSteps by its kind, and a failed release to
// metrics.FailedReleases by its reason.
func (h *Hoster) countStep(ctx context.Context, st hostplan.Step) {
	kind := ""
	switch s := st.(type) {
	case hostplan.Start:
		kind = "start"
	case hostplan.Revive:
		kind = "revive"
	case hostplan.Stop:
		kind = "stop"
	case hostplan.WentLive:
		kind = "went_live"
	case hostplan.Failed:
		kind = "failed"
		if err := h.Metrics.Put(metrics.FailedReleases, []string{string(s.Reason)}, 1); err != nil {
			h.log().WarnContext(ctx, "recording a failed release's metric", "error", err)
		}
	}
	if err := h.Metrics.Put(metrics.HostPlanSteps, []string{kind}, 1); err != nil {
		h.log().WarnContext(ctx, "recording a plan step's metric", "error", err)
	}
}

// start mints the host's token, writes its Secret (the org's secrets opened, and how to
// register), then creates its pod.
func (h *Hoster) start(ctx context.Context, w *world, a apps.App, host string) error {
	env, err := h.environment(ctx, a.Org)
	if err != nil {
		return err
	}
	url, err := h.Sources.PresignSources(ctx, a.SHA256)
	if err != nil {
		return fmt.Errorf("presigning release %d's sources: %w", a.Release, err)
	}
	token, err := h.Apps.MintHostToken(ctx, a.Org, a.Name, host)
	if err != nil {
		return err
	}
	l, err := h.launch(a, host, url, token, env)
	if err != nil {
		return err
	}
	secret, err := podspec.Secret(l)
	if err != nil {
		return err
	}
	pod, err := podspec.Pod(l)
	if err != nil {
		return err
	}
	if err := w.cluster.putSecret(ctx, secret); err != nil {
		return err
	}
	h.log().InfoContext(ctx, "starting a host", "app", a.Org+"/"+a.Name, "host", host, "release", a.Release)
	return w.cluster.startPod(ctx, pod)
}

// launch is the host of a's wanted release to start: its runtime's image, its start command and
// readiness check, its sources at sourcesURL, its org's secrets env and the token it registers
// with.
func (h *Hoster) launch(a apps.App, host, sourcesURL, token string, env map[string]string) (podspec.Launch, error) {
	image, command, err := h.runsOn(a)
	if err != nil {
		return podspec.Launch{}, err
	}
	l := podspec.Launch{
		Org: a.Org, App: a.Name, Host: host, Release: a.Release, Namespace: h.Namespace, Stack: h.stack(), Image: image, Command: command,
		SourcesURL: sourcesURL, SourcesSHA256: a.SHA256, Env: env, HostToken: token, RegisterURL: h.registerURL(host),
	}
	if a.Launch != nil {
		l.Ready = a.Launch.Ready
	}
	return l, nil
}

// runsOn is the image and command a's wanted release runs with: its tidegate.json's runtime and
// start command, or the defaults.
func (h *Hoster) runsOn(a apps.App) (image string, command []string, err error) {
	if a.Launch == nil {
		return h.Image, nil, nil
	}
	image = h.Image
	if rt := a.Launch.Runtime; rt != "" {
		if image = h.Runtimes[rt]; image == "" {
			return "", nil, fmt.Errorf("release %d of %s/%s runs on runtime %q, which this deployment no longer offers (TIDEGATE_APP_RUNTIMES has %v): offer it again, or upload a release naming another", a.Release, a.Org, a.Name, rt, h.Runtimes.Names())
		}
	}
	return image, a.Launch.Start, nil
}

// revive records the crash of a host that served and exited, or that registered and turned
// unhealthy (verdict says which), then runs it again: the same pod, with a fresh URL for its
// sources (the first may have expired), beside the Secret it already has.
func (h *Hoster) revive(ctx context.Context, w *world, a apps.App, known bool, host string, verdict hostplan.Reason) error {
	info, ok := w.podsByName[host]
	if !ok || !known {
		return fmt.Errorf("host %s to revive is not among the pods read", host)
	}
	lines, _ := w.cluster.logs(ctx, host, podspec.AppContainer, lastLines, false)
	h.log().WarnContext(ctx, "a host is run again", "app", a.Org+"/"+a.Name, "host", host, "verdict", verdict, "last_lines", strings.Join(lines, "\n"))
	if err := h.recordRevive(ctx, a, info.spec, verdict, lines); err != nil {
		return err
	}
	url, err := h.Sources.PresignSources(ctx, info.sourcesSHA256)
	if err != nil {
		return fmt.Errorf("presigning the sources of %s: %w", host, err)
	}
	return w.cluster.replace(ctx, info.spec.again(url))
}

// fail fetches the failed host's last lines (the install's when the app never ran) and records the
// release failed with them.
func (h *Hoster) fail(ctx context.Context, w *world, a apps.App, f hostplan.Failed) error {
	container := podspec.AppContainer
	if f.Reason == hostplan.ReasonInstallFailed {
		container = podspec.InstallContainer
	}
	lines, err := w.cluster.logs(ctx, f.Pod.Name, container, lastLines, false)
	if err != nil {
		h.log().WarnContext(ctx, "reading a failed host's last lines", "host", f.Pod.Name, "error", err)
	}
	reason := string(f.Reason) + ": " + f.Why("")
	h.log().WarnContext(ctx, "a release failed", "app", a.Org+"/"+a.Name, "release", a.Release, "host", f.Pod.Name, "reason", f.Reason)
	return h.Apps.MarkFailed(ctx, a.Org, a.Name, a.Release, f.Pod.Name, reason, strings.Join(lines, "\n"), h.now())
}

// environment opens every secret of org, for a host's Secret.
func (h *Hoster) environment(ctx context.Context, org string) (map[string]string, error) {
	sealed, err := h.Secrets.Sealed(ctx, org)
	if err != nil {
		return nil, fmt.Errorf("reading org %s's secrets: %w", org, err)
	}
	if len(sealed) > 0 && h.Box == nil {
		return nil, fmt.Errorf("org %s has secrets and this beat has no keyring to open them: set %s to the KMS key that wraps their data keys", org, config.EnvKMSKey)
	}
	env := make(map[string]string, len(sealed))
	for name, s := range sealed {
		v, err := h.Box.Open(ctx, keyring.Org(org), s, apps.SecretBinding(org, name))
		if err != nil {
			return nil, fmt.Errorf("opening org %s's secret %s: %w", org, name, err)
		}
		env[name] = v
	}
	return env, nil
}

// stack is the label value of the Hoster's deployment.
func (h *Hoster) stack() string { return podspec.StackValue(h.Stack) }

func (h *Hoster) registerURL(host string) string {
	return h.PublicURL + "/api/v1/hosts/" + host + "/register"
}

func (h *Hoster) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

func (h *Hoster) log() *slog.Logger {
	if h.Log != nil {
		return h.Log
	}
	return slog.New(slog.DiscardHandler)
}
