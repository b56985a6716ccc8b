package hosting_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/hosting"
	"github.com/tidegate/tidegate/shared/hostplan"
	"github.com/tidegate/tidegate/shared/keyring"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/podspec"
)

func TestMain(m *testing.M) { testenv.Main(m) }

type oneCluster struct{ kc kubernetes.Interface }

func (c oneCluster) Client(context.Context, string) (kubernetes.Interface, error) { return c.kc, nil }

// stack is a Hoster on the stand-ins with a clock the test moves.
type stack struct {
	h       *hosting.Hoster
	apps    *dynamo.AppStore
	secrets *dynamo.SecretStore
	box     *keyring.Ring
	kc      kubernetes.Interface
	ns      string
	outbox  *dynamo.OutboxStore
	now     time.Time
}

func newStack(t testing.TB) *stack {
	t.Helper()
	ns, st := testenv.Namespace(t)
	kc, err := sandbox.KubeClient(st.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return newStackOn(t, kc, ns)
}

// newStackOn is a stack of its own tables and bucket, named for its control table as
// config.Parse names one by default, whose hosts live in namespace ns of kc.
func newStackOn(t testing.TB, kc kubernetes.Interface, ns string) *stack {
	t.Helper()
	tables, db := testenv.Tables(t)
	bucket, prefix, s3c := testenv.Bucket(t)
	box := testenv.Keyring(t, db, tables.Control)
	s := &stack{
		apps: dynamo.NewAppStore(db, tables), secrets: dynamo.NewSecretStore(db, tables.Control), box: box,
		kc: kc, ns: ns, outbox: dynamo.NewOutboxStore(db, tables), now: time.Now().UTC().Truncate(time.Second),
	}
	s.h = &hosting.Hoster{
		Region: "us-east-1", Namespace: ns, Stack: tables.Control, PublicURL: "http://127.0.0.1:1",
		Apps: s.apps, Secrets: s.secrets, Box: box, Clusters: oneCluster{kc},
		Sources: hosting.S3Sources{Presign: s3.NewPresignClient(s3c), Bucket: bucket, Prefix: prefix},
		Now:     func() time.Time { return s.now },
	}
	return s
}

func (s *stack) beat(t *testing.T) {
	t.Helper()
	if err := s.h.Beat(context.Background()); err != nil {
		t.Fatalf("beat: %v", err)
	}
}

func (s *stack) release(t *testing.T, app string, c byte) apps.Release {
	t.Helper()
	r, err := s.apps.CreateRelease(context.Background(), "acme", apps.Release{App: app, SHA256: strings.Repeat(string(c), 64), Bytes: 10, CreatedAt: s.now})
	if err != nil {
		t.Fatalf("CreateRelease: %v", err)
	}
	return r
}

func (s *stack) app(t *testing.T, name string) apps.App {
	t.Helper()
	a, err := s.apps.App(context.Background(), "acme", name)
	if err != nil {
		t.Fatalf("App(%s): %v", name, err)
	}
	return a
}

// pods answers the hosts' pods that are not being deleted, by name.
func (s *stack) pods(t *testing.T) map[string]corev1.Pod {
	t.Helper()
	l, err := s.kc.CoreV1().Pods(s.ns).List(context.Background(), metav1.ListOptions{LabelSelector: podspec.Selector()})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]corev1.Pod{}
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil {
			out[p.Name] = p
		}
	}
	return out
}

// register does what the hosted process does: POST its token and its pod's UID, here straight to
// the store.
func (s *stack) register(t *testing.T, host string) {
	t.Helper()
	p, err := s.kc.CoreV1().Pods(s.ns).Get(context.Background(), host, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading host %s's pod: %v", host, err)
	}
	s.registerAs(t, host, p.UID)
}

// registerAs registers host with the token in its Secret, from the pod of UID pod.
func (s *stack) registerAs(t *testing.T, host string, pod types.UID) {
	t.Helper()
	sec, err := s.kc.CoreV1().Secrets(s.ns).Get(context.Background(), podspec.SecretName(host), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading host %s's Secret: %v", host, err)
	}
	if _, _, err := s.apps.Register(context.Background(), host, string(pod), string(sec.Data[podspec.EnvHostToken]), s.now); err != nil {
		t.Fatalf("registering %s with the token in its Secret: %v", host, err)
	}
}

// running waits until kwok reports host's pod Running with its app container started.
func (s *stack) running(t *testing.T, host string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		p, err := s.kc.CoreV1().Pods(s.ns).Get(context.Background(), host, metav1.GetOptions{})
		if err == nil && p.Status.Phase == corev1.PodRunning {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("pod %s was not Running within a minute", host)
}

// goLive releases app (sources filled with c) and beats until its host is live: started,
// running, registered, gone live. It answers the host.
func (s *stack) goLive(t *testing.T, app string, c byte) string {
	t.Helper()
	s.release(t, app, c)
	s.beat(t)
	host := s.hostOf(t, s.app(t, app))
	s.running(t, host)
	s.register(t, host)
	s.beat(t)
	if a := s.app(t, app); a.LiveHost != host {
		t.Fatalf("%s's live host = %q after its host registered, want %s", app, a.LiveHost, host)
	}
	return host
}

func (s *stack) hostOf(t *testing.T, a apps.App) string {
	t.Helper()
	digest, err := s.secrets.Digest(context.Background(), a.Org)
	if err != nil {
		t.Fatal(err)
	}
	return apps.HostName(a.Org, a.Name, a.Release, a.SHA256, digest)
}

func (s *stack) events(t *testing.T, typ outbox.Type) []outbox.Event {
	t.Helper()
	evs, _, err := s.outbox.Undelivered(context.Background(), 100, "")
	if err != nil {
		t.Fatal(err)
	}
	var out []outbox.Event
	for _, ev := range evs {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

// TestBlueGreen walks the story: release 1 goes live when its host registers; release 2's
// host starts beside it and release 1 keeps serving until release 2 registers, then is stopped; a
// release that never registers fails after 120 s and the live one stays; a changed secret rolls a
// new host the same way.
func TestBlueGreen(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()

	s.release(t, "web", 'a')
	s.beat(t)
	h1 := s.hostOf(t, s.app(t, "web"))
	pod, ok := s.pods(t)[h1]
	if !ok {
		t.Fatalf("after the first beat, no pod %s; pods: %v", h1, keys(s.pods(t)))
	}
	if pod.Spec.RuntimeClassName == nil || *pod.Spec.RuntimeClassName != "gvisor" {
		t.Errorf("pod runtimeClassName = %v, want gvisor", pod.Spec.RuntimeClassName)
	}
	if sc := pod.Spec.Containers[0].SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("app container's security context = %+v, want a read-only root filesystem", sc)
	}
	if got := s.app(t, "web").State; got != apps.StateDeploying {
		t.Errorf("state before registering = %s, want deploying", got)
	}
	s.running(t, h1)
	s.register(t, h1)
	s.beat(t)
	if a := s.app(t, "web"); a.State != apps.StateLive || a.LiveHost != h1 {
		t.Fatalf("after registering: state %s, live host %q; want live on %s", a.State, a.LiveHost, h1)
	}
	if evs := s.events(t, outbox.AppLive); len(evs) != 1 {
		t.Errorf("app.live events = %d, want 1", len(evs))
	}

	// Release 2: its host starts beside release 1's, which keeps serving until it registers.
	s.release(t, "web", 'b')
	s.beat(t)
	h2 := s.hostOf(t, s.app(t, "web"))
	s.beat(t)
	pods := s.pods(t)
	if _, ok := pods[h1]; !ok {
		t.Errorf("release 1's pod %s was stopped before release 2 registered", h1)
	}
	if _, ok := pods[h2]; !ok {
		t.Fatalf("release 2's pod %s did not start; pods: %v", h2, keys(pods))
	}
	s.running(t, h2)
	s.register(t, h2)
	s.beat(t) // went live
	s.beat(t) // stops release 1
	if a := s.app(t, "web"); a.LiveHost != h2 || a.LiveRelease != 2 {
		t.Fatalf("after release 2 registered: live host %q (release %d), want %s (2)", a.LiveHost, a.LiveRelease, h2)
	}
	pods = s.pods(t)
	if _, ok := pods[h1]; ok {
		t.Errorf("release 1's pod %s still runs after release 2 went live", h1)
	}
	if _, err := s.kc.CoreV1().Secrets(s.ns).Get(ctx, podspec.SecretName(h1), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("release 1's Secret: %v, want it removed", err)
	}

	// Release 3 never registers: 120 s after its app process started, it fails and 2 stays live.
	s.release(t, "web", 'c')
	s.beat(t)
	h3 := s.hostOf(t, s.app(t, "web"))
	s.running(t, h3)
	s.now = s.now.Add(hostplan.InstallWithin + hostplan.RegistersWithin + time.Minute)
	s.beat(t)
	a := s.app(t, "web")
	if a.State != apps.StateFailed || !strings.Contains(a.FailedWhy, string(hostplan.ReasonNeverRegistered)) {
		t.Fatalf("release 3 that never registered: state %s, failed_why %q; want failed with never_registered", a.State, a.FailedWhy)
	}
	if a.LiveHost != h2 {
		t.Errorf("live host after release 3 failed = %q, want release 2's %s", a.LiveHost, h2)
	}
	s.beat(t)
	pods = s.pods(t)
	if _, ok := pods[h3]; ok {
		t.Errorf("release 3's failed host %s still runs", h3)
	}
	if _, ok := pods[h2]; !ok {
		t.Errorf("release 2's live host %s was stopped when release 3 failed", h2)
	}
	if evs := s.events(t, outbox.AppFailed); len(evs) != 1 {
		t.Errorf("app.failed events = %d, want 1", len(evs))
	}

	// A new release after the failure, then a changed secret: each rolls a new host, blue/green.
	s.release(t, "web", 'd')
	s.beat(t)
	h4 := s.hostOf(t, s.app(t, "web"))
	s.running(t, h4)
	s.register(t, h4)
	s.beat(t)
	s.beat(t)
	sealed, err := s.box.Seal(ctx, keyring.Org("acme"), "s3cr3t-value", apps.SecretBinding("acme", "API_TOKEN"))
	if err != nil {
		t.Fatal(err)
	}
	fingerprint, err := s.box.Fingerprint(ctx, keyring.Org("acme"), "API_TOKEN", "s3cr3t-value")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.secrets.Put(ctx, "acme", "API_TOKEN", sealed, fingerprint, s.now); err != nil {
		t.Fatal(err)
	}
	h5 := s.hostOf(t, s.app(t, "web"))
	if h5 == h4 {
		t.Fatalf("the host name did not change with a new secret: %s", h5)
	}
	s.beat(t)
	pods = s.pods(t)
	if _, ok := pods[h4]; !ok {
		t.Errorf("the live host %s was stopped before the new secret's host registered", h4)
	}
	sec, err := s.kc.CoreV1().Secrets(s.ns).Get(ctx, podspec.SecretName(h5), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the new host's Secret: %v", err)
	}
	if string(sec.Data["API_TOKEN"]) != "s3cr3t-value" {
		t.Errorf("the new host's Secret holds API_TOKEN %q, want the value set", sec.Data["API_TOKEN"])
	}
	s.running(t, h5)
	s.register(t, h5)
	s.beat(t)
	s.beat(t)
	if a := s.app(t, "web"); a.LiveHost != h5 {
		t.Errorf("live host after the secret's host registered = %q, want %s", a.LiveHost, h5)
	}
	if _, ok := s.pods(t)[h4]; ok {
		t.Errorf("the old host %s still runs after the new secret's host went live", h4)
	}
}

// TestStopDeleteAndPreview: a stopped app's host is stopped; a deleted app leaves nothing running;
// the preview says what the next beat would do without doing it.
func TestStopDeleteAndPreview(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	s.release(t, "api", 'a')

	plan, err := s.h.Plan(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if len(plan) != 1 || len(plan[0].Steps) != 1 || plan[0].Steps[0].Step != "start" || plan[0].App != "api" {
		t.Fatalf("preview before the first beat = %+v, want one start for api", plan)
	}
	if len(s.pods(t)) != 0 {
		t.Fatal("the preview started a pod")
	}
	s.beat(t)
	host := s.hostOf(t, s.app(t, "api"))
	s.running(t, host)
	s.register(t, host)
	plan, err = s.h.Plan(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if len(plan) != 1 || len(plan[0].Steps) != 1 || plan[0].Steps[0].Step != "went_live" {
		t.Fatalf("preview after registering = %+v, want went_live", plan)
	}
	if other, err := s.h.Plan(ctx, "umbrella"); err != nil || len(other) != 0 {
		t.Errorf("another org's preview = %+v, %v; want nothing of acme's", other, err)
	}
	s.beat(t)

	// Each app's logs come from its own host, read by its stamp among the other apps' hosts.
	s.release(t, "web", 'b')
	s.beat(t)
	webHost := s.hostOf(t, s.app(t, "web"))
	for name, want := range map[string]string{"api": host, "web": webHost} {
		got, err := s.h.Logs(ctx, s.app(t, name), nil, 10)
		if err != nil || got.Host != want || got.From != "cluster" {
			t.Errorf("Logs(%s) came from %q (%s, %v), want its host %s in the cluster", name, got.Host, got.From, err, want)
		}
	}

	if _, err := s.apps.SetStopped(ctx, "acme", "api", true, s.now); err != nil {
		t.Fatal(err)
	}
	s.beat(t)
	if _, ok := s.pods(t)[host]; ok {
		t.Errorf("a stopped app's host %s still runs", host)
	}
	if _, err := s.apps.SetStopped(ctx, "acme", "api", false, s.now); err != nil {
		t.Fatal(err)
	}
	// kwok finishes the graceful stop in its own time: wait for the name to be free again.
	waitGone(t, s, host)
	s.beat(t)
	if _, ok := s.pods(t)[host]; !ok {
		t.Fatalf("a started app's host %s did not start again", host)
	}
	if err := s.apps.Delete(ctx, "acme", "api"); err != nil {
		t.Fatal(err)
	}
	s.beat(t)
	if p := s.pods(t); len(p) != 1 || p[webHost].Name == "" {
		t.Errorf("pods left after api was deleted: %v; want only web's %s", keys(p), webHost)
	}
	if _, err := s.kc.CoreV1().Secrets(s.ns).Get(ctx, podspec.SecretName(host), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Secret of a deleted app's host: %v, want it removed", err)
	}
}

// TestOlderHostsGetTheirOrgLabel: a host started before hosts carried their org's label is not
// in its org's plan preview, which lists by that label, until the beat labels it.
func TestOlderHostsGetTheirOrgLabel(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	host := s.goLive(t, "api", 'a')
	unlabel := []byte(`{"metadata":{"labels":{"` + podspec.OrgLabel + `":null}}}`)
	if _, err := s.kc.CoreV1().Pods(s.ns).Patch(ctx, host, types.MergePatchType, unlabel, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	steps := func() []string {
		t.Helper()
		plan, err := s.h.Plan(ctx, "acme")
		if err != nil || len(plan) != 1 {
			t.Fatalf("Plan(acme) = %+v, %v; want api's", plan, err)
		}
		var out []string
		for _, st := range plan[0].Steps {
			out = append(out, st.Step)
		}
		return out
	}
	if got := steps(); !slices.Contains(got, "start") {
		t.Errorf("preview with the live host unlabelled = %v; want a start, since the preview cannot see it", got)
	}
	s.beat(t)
	if org := s.pods(t)[host].Labels[podspec.OrgLabel]; org != "acme" {
		t.Errorf("after a beat the host's org label = %q, want acme", org)
	}
	if got := steps(); len(got) != 0 {
		t.Errorf("preview once the beat labelled the host = %v, want no step", got)
	}
}

func waitGone(t *testing.T, s *stack, pod string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		_, err := s.kc.CoreV1().Pods(s.ns).Get(context.Background(), pod, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatal(err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("pod %s still there two minutes after its stop", pod)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// exit makes host's pod look as a kubelet reports a process that ended: phase Failed, the app
// container terminated with code (and reason). kwok runs no process, so the test ends it.
func (s *stack) exit(t *testing.T, host string, code int32, reason string) {
	t.Helper()
	ctx := context.Background()
	p, err := s.kc.CoreV1().Pods(s.ns).Get(ctx, host, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	started := metav1.NewTime(s.now.Add(-time.Minute))
	p.Status.Phase = corev1.PodFailed
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: podspec.AppContainer, Image: p.Spec.Containers[0].Image,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, StartedAt: started, FinishedAt: metav1.NewTime(s.now)}},
	}}
	if _, err := s.kc.CoreV1().Pods(s.ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("ending %s's process: %v", host, err)
	}
}

// TestCrashes: a live host whose process exits is run again and its crash remembered; a new
// release's host killed for memory before it registered fails the release with oom_killed, and
// the live host keeps serving.
func TestCrashes(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	h1 := s.goLive(t, "worker", 'a')
	before, err := s.kc.CoreV1().Pods(s.ns).Get(ctx, h1, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	s.exit(t, h1, 1, "Error")
	s.beat(t)
	after, err := s.kc.CoreV1().Pods(s.ns).Get(ctx, h1, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the live host %s after its process exited: %v, want it run again", h1, err)
	}
	if after.UID == before.UID {
		t.Errorf("the live host's pod was not replaced after its process exited")
	}
	if got := s.app(t, "worker").Crashes[h1]; len(got) != 1 {
		t.Errorf("crashes recorded for %s = %v, want one", h1, got)
	}
	if a := s.app(t, "worker"); a.State != apps.StateLive || a.LiveHost != h1 {
		t.Errorf("after a revival: state %s on %q, want still live on %s", a.State, a.LiveHost, h1)
	}

	s.release(t, "worker", 'b')
	s.beat(t)
	h2 := s.hostOf(t, s.app(t, "worker"))
	s.running(t, h2)
	s.exit(t, h2, 137, "OOMKilled")
	s.beat(t)
	a := s.app(t, "worker")
	if a.State != apps.StateFailed || !strings.HasPrefix(a.FailedWhy, string(hostplan.ReasonOOMKilled)) {
		t.Fatalf("release 2 killed for memory before registering: state %s, failed_why %q; want failed, oom_killed", a.State, a.FailedWhy)
	}
	if a.LiveHost != h1 {
		t.Errorf("live host after release 2 failed = %q, want %s", a.LiveHost, h1)
	}
	if _, ok := s.pods(t)[h2]; ok {
		t.Errorf("release 2's failed host %s was not removed", h2)
	}
}

// TestRegistrationBelongsToItsPod is the story: the wanted host's pod is killed right
// after its process registered. The beat starts it again and the live host keeps serving; the new
// pod is not live on the earlier pod's registration, nor on one that names the earlier pod's UID
// with the new token; it goes live when its own process registers, and only then is the old host
// stopped. No beat leaves the app without its live host running.
func TestRegistrationBelongsToItsPod(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	h1 := s.goLive(t, "web", 'a')
	serving := func(when string) {
		t.Helper()
		if a := s.app(t, "web"); a.LiveHost != h1 {
			t.Fatalf("%s: live host %q, want %s still", when, a.LiveHost, h1)
		}
		if _, ok := s.pods(t)[h1]; !ok {
			t.Fatalf("%s: the live host %s has no pod: the app has no serving host", when, h1)
		}
	}

	s.release(t, "web", 'b')
	s.beat(t)
	h2 := s.hostOf(t, s.app(t, "web"))
	s.running(t, h2)
	first, err := s.kc.CoreV1().Pods(s.ns).Get(ctx, h2, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.register(t, h2)
	zero := int64(0)
	if err := s.kc.CoreV1().Pods(s.ns).Delete(ctx, h2, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, s, h2)

	s.beat(t) // the wanted pod is gone: started again
	serving("the beat after the registered pod vanished")
	s.running(t, h2)
	second, err := s.kc.CoreV1().Pods(s.ns).Get(ctx, h2, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the wanted host %s was not started again: %v", h2, err)
	}
	if second.UID == first.UID {
		t.Fatalf("the wanted host's pod has the vanished pod's UID %s", first.UID)
	}
	s.beat(t)
	serving("the next beat, the new pod not registered")

	// A registration naming the vanished pod, even with the new pod's token, is not the new pod's.
	s.registerAs(t, h2, first.UID)
	s.beat(t)
	serving("a beat after a registration from the vanished pod")

	s.register(t, h2)
	s.beat(t) // went live
	if a := s.app(t, "web"); a.LiveHost != h2 {
		t.Fatalf("after the new pod's own process registered: live host %q, want %s", a.LiveHost, h2)
	}
	if _, ok := s.pods(t)[h2]; !ok {
		t.Fatalf("the new live host %s has no pod", h2)
	}
	s.beat(t)
	if _, ok := s.pods(t)[h1]; ok {
		t.Errorf("the old host %s still runs after %s went live", h1, h2)
	}
}

// TestStacksShareANamespace: two deployments' beats on one namespace each list, plan and touch
// only their own hosts. Neither stops the other's host as a pod of an app it does not know; one
// that wants a host of the same name as the other's (same org, app, release, sources and secrets)
// is refused and leaves the other's Secret and pod be.
func TestStacksShareANamespace(t *testing.T) {
	a := newStack(t)
	b := newStackOn(t, a.kc, a.ns)
	ctx := context.Background()
	if podspec.StackValue(a.h.Stack) == podspec.StackValue(b.h.Stack) {
		t.Fatalf("two stacks with one label value %q", podspec.StackValue(a.h.Stack))
	}
	ha := a.goLive(t, "web", 'a')
	hb := b.goLive(t, "api", 'b')
	for range 2 {
		a.beat(t)
		b.beat(t)
	}
	pods := a.pods(t)
	for _, host := range []string{ha, hb} {
		if _, ok := pods[host]; !ok {
			t.Errorf("host %s was stopped by the other stack's beat; pods: %v", host, keys(pods))
		}
	}
	if got := pods[ha].Labels[podspec.StackLabel]; got != podspec.StackValue(a.h.Stack) {
		t.Errorf("stack a's host %s carries stack %q, want %q", ha, got, podspec.StackValue(a.h.Stack))
	}
	if plan, err := b.h.Plan(ctx, "acme"); err != nil || len(plan) != 1 || plan[0].App != "api" || len(plan[0].Steps) != 0 {
		t.Errorf("stack b's preview = %+v, %v; want api alone, with nothing to do", plan, err)
	}

	// Stack b releases web with stack a's sources: it wants stack a's host name.
	secretBefore, err := a.kc.CoreV1().Secrets(a.ns).Get(ctx, podspec.SecretName(ha), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b.release(t, "web", 'a')
	if got := b.hostOf(t, b.app(t, "web")); got != ha {
		t.Fatalf("stack b's web host = %s, want the same name as stack a's %s for this test", got, ha)
	}
	if err := b.h.Beat(ctx); !errors.Is(err, hosting.ErrHostOfAnotherStack) {
		t.Errorf("stack b's beat wanting stack a's host = %v, want ErrHostOfAnotherStack", err)
	}
	secretAfter, err := a.kc.CoreV1().Secrets(a.ns).Get(ctx, podspec.SecretName(ha), metav1.GetOptions{})
	if err != nil || secretAfter.UID != secretBefore.UID || string(secretAfter.Data[podspec.EnvHostToken]) != string(secretBefore.Data[podspec.EnvHostToken]) {
		t.Errorf("stack a's Secret for %s after stack b wanted the name: %v; want it untouched", ha, err)
	}
	a.beat(t)
	if p, ok := a.pods(t)[ha]; !ok || p.UID != pods[ha].UID || p.Labels[podspec.StackLabel] != podspec.StackValue(a.h.Stack) {
		t.Errorf("stack a's pod %s after stack b wanted the name: %v; want it untouched", ha, p.ObjectMeta)
	}
	if got := a.app(t, "web"); got.LiveHost != ha {
		t.Errorf("stack a's web is live on %q, want %s", got.LiveHost, ha)
	}
}

// TestHostsBeforeTheStackLabel: a host started before hosts carried their deployment's label is
// not in the LIST; when the plan starts it again, the Secret is replaced and the pod, already
// there, is labelled and kept, not run twice.
func TestHostsBeforeTheStackLabel(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	host := s.goLive(t, "web", 'a')
	before := s.pods(t)[host]
	unlabel := []byte(`{"metadata":{"labels":{"` + podspec.StackLabel + `":null}}}`)
	if _, err := s.kc.CoreV1().Pods(s.ns).Patch(ctx, host, types.MergePatchType, unlabel, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.kc.CoreV1().Secrets(s.ns).Patch(ctx, podspec.SecretName(host), types.MergePatchType, unlabel, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	s.beat(t)
	after, ok := s.pods(t)[host]
	if !ok || after.UID != before.UID || after.Labels[podspec.StackLabel] != podspec.StackValue(s.h.Stack) {
		t.Fatalf("the unlabelled host %s after a beat: %+v; want the same pod, labelled", host, after.ObjectMeta)
	}
	s.beat(t)
	if a := s.app(t, "web"); a.LiveHost != host || a.State != apps.StateLive {
		t.Errorf("web after its host was labelled: %s on %q, want live on %s", a.State, a.LiveHost, host)
	}
}
