package testenv

import (
	"context"
	"errors"
	"os"
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

// OwnCluster starts a sandbox cluster for this test alone, in a folder of its own, and stops it
// when the test ends: a test that stops and starts its API server (Cluster.StopAPIServer) to see a
// region fail must not take the shared cluster from the tests running beside it. It costs the
// test the cluster's start, about 10 s on two cores (bench/clusters).
func OwnCluster(t testing.TB) *sandbox.Cluster {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	c, err := sandbox.StartCluster(ctx, dir, sandbox.ClusterName(0), nil)
	if err != nil {
		if errors.Is(err, sandbox.ErrNotInstalled) && os.Getenv("CI") == "" {
			t.Skipf("the Kubernetes sandbox is not installed (run `make tools`): %v", err)
		}
		t.Fatalf("starting a cluster of the test's own: %v", err)
	}
	// Registered after t.TempDir's removal, so it runs before it: the servers stop before their
	// folder goes.
	t.Cleanup(c.Stop)
	return c
}
