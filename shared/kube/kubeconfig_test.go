package kube

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/tidegate/tidegate/shared/config"
)

// TestKubeconfigContextPerRegion: with a kubeconfig of two contexts, a region whose cluster name
// is a context's name is reached through that context, and a region whose cluster name is none
// through the current context, as every region was when a kubeconfig served them all. Regions on
// one context share one client. Nothing is dialled: only each region's configuration is read.
func TestKubeconfigContextPerRegion(t *testing.T) {
	kc := clientcmdapi.NewConfig()
	for name, server := range map[string]string{"sandbox": "https://east.example:6443", "sandbox-2": "https://west.example:7443"} {
		kc.Clusters[name] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
		kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: "token-" + name}
		kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	kc.CurrentContext = "sandbox"
	path := filepath.Join(t.TempDir(), "regions.kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	cfg := config.Config{Kubeconfig: path, Regions: map[string]string{
		"us-east-1": "sandbox", "us-west-2": "sandbox-2", "eu-west-1": "no-such-context",
	}}
	clusters, err := New(cfg, testAWSConfig())
	if err != nil {
		t.Fatalf("New with kubeconfig %s: %v", path, err)
	}
	got := map[string][2]string{}
	for region := range cfg.Regions {
		rc, err := clusters.Config(context.Background(), region)
		if err != nil {
			t.Fatalf("Config(%s): %v", region, err)
		}
		checkTuned(t, region, rc)
		got[region] = [2]string{rc.Host, rc.BearerToken}
	}
	want := map[string][2]string{
		"us-east-1": {"https://east.example:6443", "token-sandbox"},
		"us-west-2": {"https://west.example:7443", "token-sandbox-2"},
		"eu-west-1": {"https://east.example:6443", "token-sandbox"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("each region's host and token (-want +got):\n%s", diff)
	}
	east, _ := clusters.Dynamic(context.Background(), "us-east-1")
	fallback, _ := clusters.Dynamic(context.Background(), "eu-west-1")
	west, _ := clusters.Dynamic(context.Background(), "us-west-2")
	if east != fallback || east == west {
		t.Errorf("dynamic clients: us-east-1 and eu-west-1 (both on context sandbox) shared = %v, us-east-1 and us-west-2 shared = %v; want true, false", east == fallback, east == west)
	}
}

// TestKubeconfigWithoutCurrentContext: a region left to the current context of a kubeconfig that
// has none is refused at New, naming the region, rather than when its first job is dispatched.
func TestKubeconfigWithoutCurrentContext(t *testing.T) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["a"] = &clientcmdapi.Cluster{Server: "https://a.example"}
	kc.AuthInfos["a"] = &clientcmdapi.AuthInfo{Token: "t"}
	kc.Contexts["a"] = &clientcmdapi.Context{Cluster: "a", AuthInfo: "a"}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	cfg := config.Config{Kubeconfig: path, Regions: map[string]string{"us-east-1": "a", "us-west-2": "b"}}
	if _, err := New(cfg, testAWSConfig()); err == nil {
		t.Errorf("New with region us-west-2 on cluster b, no context b and no current context: no error, want one naming us-west-2")
	} else if !strings.Contains(err.Error(), "us-west-2") {
		t.Errorf("New error = %v, want it to name us-west-2", err)
	}
}
