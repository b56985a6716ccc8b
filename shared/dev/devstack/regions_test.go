package devstack_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dev/devstack"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dev/testenv"
)

// TestEachRegionOnItsOwnCluster: `tidegate dev --clusters 2` on stand-ins of one cluster (as `make
// test` shares them) starts a second cluster of its own and runs us-east-1 on the shared one,
// us-west-2 on its own: a job submitted to a region has its Kubernetes Job in that region's
// cluster and not in the other, on that region's flavor node there; the dev namespaces are in
// both, the apps' only in the hosting region's.
func TestEachRegionOnItsOwnCluster(t *testing.T) {
	kube := testenv.Kube(t)
	prefix := fmt.Sprintf("regions-%d", os.Getpid())
	said := &syncBuffer{}
	st := startDevSaying(t, devstack.Options{
		Addr: freeAddr(t), APIKey: "k", Beat: time.Second, Dir: t.TempDir(), Clusters: 2,
		Standins: &kube, Prefix: prefix,
	}, said)
	if got, want := st.Env[config.EnvRegions], "us-east-1=sandbox,us-west-2=sandbox-2"; got != want {
		t.Errorf("the dev stack's %s = %q, want %q", config.EnvRegions, got, want)
	}
	if len(st.Clusters) != 2 || st.Clusters[0].Kubeconfig != kube.Kubeconfig || st.Clusters[1].Name != "sandbox-2" {
		t.Fatalf("the dev stack's clusters = %+v; want the shared one (%s), then sandbox-2", st.Clusters, kube.Kubeconfig)
	}
	if !strings.Contains(said.String(), st.Clusters[1].Kubeconfig) {
		t.Errorf("tidegate dev said:\n%s\nwant the banner to name sandbox-2's kubeconfig %s", said.String(), st.Clusters[1].Kubeconfig)
	}
	clients := map[string]kubernetes.Interface{}
	for i, region := range devstack.DevRegions {
		cs, err := sandbox.KubeClient(st.Clusters[i].Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		clients[region] = cs
	}
	east, west := clients["us-east-1"], clients["us-west-2"]

	c := client{t: t, url: st.URL}
	jobs := map[string]string{
		"us-east-1": c.submitJob(t, "to-east", map[string]any{}),
		"us-west-2": c.submitJob(t, "to-west", map[string]any{"region": "us-west-2"}),
	}
	for region, id := range jobs {
		c.waitFor(id, "succeeded", time.Minute)
		if node, _ := c.placedOn(id); node != "tidegate-"+region+"-spot" {
			t.Errorf("job %s in %s ran on %q, want its region's flavor node tidegate-%s-spot", id, region, node, region)
		}
	}
	for name, in := range map[string]kubernetes.Interface{"to-east": east, "to-west": west} {
		name = fmt.Sprintf("%s-%d", name, os.Getpid())
		notIn := west
		if in == west {
			notIn = east
		}
		if _, err := in.BatchV1().Jobs("team-a").Get(context.Background(), name, metav1.GetOptions{}); err != nil {
			t.Errorf("Job %s in its region's cluster: %v", name, err)
		}
		if _, err := notIn.BatchV1().Jobs("team-a").Get(context.Background(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("Job %s in the other region's cluster: %v, want not found", name, err)
		}
	}

	for region, cs := range clients {
		for _, ns := range append(slices.Clone(devstack.DevNamespaces), prefix+"-apps") {
			_, err := cs.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
			wantIt := ns != prefix+"-apps" || region == "us-east-1"
			if wantIt && err != nil || !wantIt && !apierrors.IsNotFound(err) {
				t.Errorf("namespace %s in %s's cluster: %v; want it there: %v", ns, region, err, wantIt)
			}
		}
	}
}
