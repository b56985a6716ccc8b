package podspec

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/jobs"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestClusterTakesTheHost creates a host's Secret and pod on the sandbox's apiserver, in a
// namespace that enforces Pod Security restricted, then finds them again with Selector.
func TestClusterTakesTheHost(t *testing.T) {
	ns, st := testenv.Namespace(t)
	cs, err := sandbox.KubeClient(st.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nsObj, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if nsObj.Labels == nil {
		nsObj.Labels = map[string]string{}
	}
	nsObj.Labels["pod-security.kubernetes.io/enforce"] = "restricted"
	nsObj.Labels["pod-security.kubernetes.io/enforce-version"] = "latest"
	if _, err := cs.CoreV1().Namespaces().Update(ctx, nsObj, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("enforcing restricted on %s: %v", ns, err)
	}

	l := fixture()
	l.Namespace = ns
	secret, err := Secret(l)
	if err != nil {
		t.Fatal(err)
	}
	pod, err := Pod(l)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the host's Secret: %v", err)
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the host's pod in a restricted namespace: %v", err)
	}

	// The namespace does refuse a pod that undoes a protection, so the create above was judged.
	loose := pod.DeepCopy()
	loose.Name += "-loose"
	loose.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = ptr.To(true)
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, loose, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("creating a pod that allows privilege escalation: %v, want Forbidden by Pod Security", err)
	}
	// A job's pod that copied the host's labels is not listed as a host.
	job := pod.DeepCopy()
	job.Name += "-job"
	job.Labels[jobs.IDKey] = "job-01"
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a job's pod: %v", err)
	}

	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: Selector()})
	if err != nil {
		t.Fatalf("listing pods by %q: %v", Selector(), err)
	}
	if len(pods.Items) != 1 || pods.Items[0].Name != pod.Name {
		t.Fatalf("pods listed by %q: %d, want only %s", Selector(), len(pods.Items), pod.Name)
	}
	if key, ok := AppOf(&pods.Items[0]); !ok || key != "acme/support-bot" {
		t.Errorf("AppOf(listed pod) = %q, %v; want acme/support-bot, true", key, ok)
	}
	secrets, err := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: Selector()})
	if err != nil {
		t.Fatalf("listing secrets by %q: %v", Selector(), err)
	}
	if len(secrets.Items) != 1 || secrets.Items[0].Name != SecretName(l.Host) {
		t.Fatalf("secrets listed by %q: %d, want only %s", Selector(), len(secrets.Items), SecretName(l.Host))
	}

	stored := secrets.Items[0]
	stored.Data[EnvHostToken] = []byte("changed")
	if _, err := cs.CoreV1().Secrets(ns).Update(ctx, &stored, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("updating the host's Secret: %v, want Invalid: it is immutable", err)
	}
}
