package devstack

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/podspec"
)

// registrar stands in for the hosted processes of the kwok sandbox, whose pods run no code: once a
// host's pod is Running it registers the host, with the token the host finds in its Secret, at
// the URL it finds there naming the pod's UID, as the process would. A pod started again under
// the same name is another pod, registered afresh. Hosts of apps named in never (every release of
// `web`, or only release 2 as `web-r2`) are left unregistered, to see a release fail with
// never_registered.
type registrar struct {
	kc        kubernetes.Interface
	namespace string
	// unregistered holds the apps (web) and releases (web-r2) never registered.
	unregistered map[string]bool
	client       *http.Client
	log          *slog.Logger
	done         map[types.UID]bool // pods registered or whose host is no longer wanted
}

func newRegistrar(kc kubernetes.Interface, namespace string, never []string, log *slog.Logger) *registrar {
	r := &registrar{kc: kc, namespace: namespace, unregistered: map[string]bool{}, client: &http.Client{Timeout: 10 * time.Second}, log: log, done: map[types.UID]bool{}}
	for _, app := range never {
		r.unregistered[app] = true
	}
	return r
}

// run registers hosts every interval until ctx ends.
func (r *registrar) run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := r.pass(ctx); err != nil && ctx.Err() == nil {
				r.log.WarnContext(ctx, "registering hosts", "error", err)
			}
		}
	}
}

// pass registers every Running host not registered yet.
func (r *registrar) pass(ctx context.Context) error {
	pods, err := r.kc.CoreV1().Pods(r.namespace).List(ctx, metav1.ListOptions{LabelSelector: podspec.Selector()})
	if err != nil {
		return fmt.Errorf("listing hosts: %w", err)
	}
	for _, p := range pods.Items {
		if _, ours := podspec.AppOf(&p); !ours || p.Status.Phase != corev1.PodRunning || r.done[p.UID] || p.DeletionTimestamp != nil {
			continue
		}
		if r.never(&p) {
			continue
		}
		if err := r.register(ctx, p.Name, p.UID); err != nil {
			r.log.WarnContext(ctx, "registering a host", "host", p.Name, "error", err)
		}
	}
	return nil
}

// never says p is a host of an app (or release) left unregistered: neither the registrar nor
// hostrun's processes register it.
func (r *registrar) never(p *corev1.Pod) bool {
	key, _ := podspec.AppOf(p)
	_, app, _ := strings.Cut(key, "/")
	release, _ := podspec.ReleaseOf(p)
	return r.unregistered[app] || r.unregistered[fmt.Sprintf("%s-r%d", app, release)]
}

func (r *registrar) register(ctx context.Context, host string, pod types.UID) error {
	s, err := r.kc.CoreV1().Secrets(r.namespace).Get(ctx, podspec.SecretName(host), metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading the host's Secret: %w", err)
	}
	base, token := string(s.Data[podspec.EnvRegisterURL]), string(s.Data[podspec.EnvHostToken])
	if base == "" || token == "" {
		return fmt.Errorf("the host's Secret has no %s or %s", podspec.EnvRegisterURL, podspec.EnvHostToken)
	}
	url := podspec.RegisterURLOf(base, string(pod))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := r.client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK, http.StatusNoContent, http.StatusNotFound, http.StatusConflict:
		// Registered, or a host the app no longer wants: either way nothing more to do for it.
		r.done[pod] = true
		r.log.InfoContext(ctx, "registered a host in place of its process", "host", host, "status", resp.StatusCode)
		return nil
	default:
		return fmt.Errorf("POST %s answered %s", url, resp.Status)
	}
}
