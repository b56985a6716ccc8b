package hosting

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/podspec"
)

const (
	// stopGrace is how long a stopped host has to drain before it is killed: the seed runner's
	// DRAIN_S, long enough for a call in progress to finish.
	stopGrace = 45 * time.Second
	// listPage is one LIST page of hosts: the apiserver's default chunk size for kubectl.
	listPage = 500
	// lastLines is how many of a host's last log lines a failure keeps and /logs answers by default.
	lastLines = 50
	// logBytes bounds one log read, whatever the lines' length.
	logBytes = 64 << 10
	// goneWithin bounds the wait for a revived host's old pod to disappear before it is created again.
	goneWithin = 30 * time.Second
)

// cluster carries out steps on the hosting cluster's namespace, for the deployment whose hosts
// carry stack (podspec.StackLabel).
type cluster struct {
	kc        kubernetes.Interface
	namespace string
	stack     string
}

// hosts LISTs every pod of ours in the namespace, page by page.
func (c cluster) hosts(ctx context.Context, selector string) ([]corev1.Pod, error) {
	var out []corev1.Pod
	opts := metav1.ListOptions{LabelSelector: selector, Limit: listPage}
	for {
		l, err := c.kc.CoreV1().Pods(c.namespace).List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("listing hosts in namespace %s: %w", c.namespace, err)
		}
		out = append(out, l.Items...)
		if opts.Continue = l.Continue; opts.Continue == "" {
			return out, nil
		}
	}
}

// labelOrg gives host pod its org's label (podspec.OrgLabel), which hosts started before it lack.
// A pod gone meanwhile is no error.
func (c cluster) labelOrg(ctx context.Context, pod, org string) error {
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:%q}}}`, podspec.OrgLabel, org)
	_, err := c.kc.CoreV1().Pods(c.namespace).Patch(ctx, pod, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("labelling host %s with its org: %w", pod, err)
	}
	return nil
}

// putSecret creates the host's Secret, replacing one of the same name (a Start after a crash
// between the Secret and the pod, or a token minted again) unless another deployment's.
func (c cluster) putSecret(ctx context.Context, s *corev1.Secret) error {
	_, err := c.kc.CoreV1().Secrets(c.namespace).Create(ctx, s, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		old, gerr := c.kc.CoreV1().Secrets(c.namespace).Get(ctx, s.Name, metav1.GetOptions{})
		if gerr == nil {
			if err := c.notOthers(&old.ObjectMeta, "Secret"); err != nil {
				return err
			}
		}
		// An immutable Secret cannot be updated: delete it and create it again.
		if err = c.kc.CoreV1().Secrets(c.namespace).Delete(ctx, s.Name, metav1.DeleteOptions{}); err == nil || apierrors.IsNotFound(err) {
			_, err = c.kc.CoreV1().Secrets(c.namespace).Create(ctx, s, metav1.CreateOptions{})
		}
	}
	if err != nil {
		return fmt.Errorf("writing Secret %s: %w", s.Name, err)
	}
	return nil
}

// startPod creates the host's pod. One already there under the name is the same host, started by
// an earlier beat that did not finish recording it, or by this deployment before hosts carried
// its label, which it is given so that the next LIST sees it; another deployment's is refused.
func (c cluster) startPod(ctx context.Context, p *corev1.Pod) error {
	_, err := c.kc.CoreV1().Pods(c.namespace).Create(ctx, p, metav1.CreateOptions{})
	if err == nil {
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating pod %s: %w", p.Name, err)
	}
	old, err := c.kc.CoreV1().Pods(c.namespace).Get(ctx, p.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading pod %s, which is already there: %w", p.Name, err)
	}
	if err := c.notOthers(&old.ObjectMeta, "pod"); err != nil || old.Labels[podspec.StackLabel] == c.stack {
		return err
	}
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:%q},"resourceVersion":%q}}`, podspec.StackLabel, c.stack, old.ResourceVersion)
	if _, err := c.kc.CoreV1().Pods(c.namespace).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("labelling pod %s, started before hosts carried their deployment, with it: %w", p.Name, err)
	}
	return nil
}

// notOthers answers ErrHostOfAnotherStack for an object that another deployment's label claims:
// two deployments sharing a namespace that want a host of the same name (the same org, app,
// release, sources and secrets digest) cannot both run it, and the second leaves the first's be.
func (c cluster) notOthers(m *metav1.ObjectMeta, kind string) error {
	if other := m.Labels[podspec.StackLabel]; other != "" && other != c.stack {
		return fmt.Errorf("%s %s in namespace %s belongs to deployment %s: %w", kind, m.Name, c.namespace, other, ErrHostOfAnotherStack)
	}
	return nil
}

// ErrHostOfAnotherStack is a host this deployment wants whose name another deployment sharing
// the namespace has taken: the step is refused, and the other's host left running.
var ErrHostOfAnotherStack = errors.New("the host is another deployment's")

// stop deletes a host's pod with a grace period to drain, and its Secret. Either being gone
// already is no error: a stop may be repeated by the next beat.
func (c cluster) stop(ctx context.Context, pod, secret string) error {
	grace := int64(stopGrace / time.Second)
	err := c.kc.CoreV1().Pods(c.namespace).Delete(ctx, pod, metav1.DeleteOptions{GracePeriodSeconds: &grace})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("stopping pod %s: %w", pod, err)
	}
	if secret == "" {
		return nil
	}
	err = c.kc.CoreV1().Secrets(c.namespace).Delete(ctx, secret, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("removing Secret %s: %w", secret, err)
	}
	return nil
}

// replace deletes an exited pod at once and, when it is gone, creates it again under its name.
func (c cluster) replace(ctx context.Context, p *corev1.Pod) error {
	zero := int64(0)
	err := c.kc.CoreV1().Pods(c.namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("removing exited pod %s: %w", p.Name, err)
	}
	deadline := time.Now().Add(goneWithin)
	for {
		_, err := c.kc.CoreV1().Pods(c.namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if err != nil {
			return fmt.Errorf("waiting for pod %s to go: %w", p.Name, err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pod %s was still there %s after its deletion; the next beat tries again", p.Name, goneWithin)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return c.startPod(ctx, p)
}

// logs answers a container's last lines, the previous run's if previous; a pod or container
// without logs answers none, which is no error.
func (c cluster) logs(ctx context.Context, pod, container string, lines int, previous bool) ([]string, error) {
	n := int64(lines)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	rc, err := c.kc.CoreV1().Pods(c.namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container, TailLines: &n, Previous: previous}).Stream(ctx)
	if err != nil {
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading logs of %s: %w", pod, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, logBytes))
	if err != nil {
		return nil, fmt.Errorf("reading logs of %s: %w", pod, err)
	}
	text := strings.TrimRight(string(b), "\n")
	if text == "" {
		return nil, nil
	}
	return strings.Split(text, "\n"), nil
}
