package testenv

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tidegate/tidegate/shared/dev/sandbox"
)

// Kube is the shared sandbox with its Kubernetes cluster.
func Kube(t testing.TB) sandbox.State { return get(t, true) }

// Namespace creates a namespace only this test uses, ready for pods, and deletes it at the end.
func Namespace(t testing.TB) (string, sandbox.State) {
	t.Helper()
	st := Kube(t)
	name := uniq(t, "t")
	if len(name) > 63 {
		name = name[:63]
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := sandbox.EnsureNamespace(ctx, st.Kubeconfig, name); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		cs, err := sandbox.KubeClient(st.Kubeconfig)
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		_ = cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	})
	return name, st
}
