package sandbox

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/tools/clientcmd"
)

// TestWriteRegionsKubeconfig: two clusters' admin kubeconfigs, as StartCluster writes them, become
// one with a context per cluster named by its Name, each reaching its own server with its own
// token, the first current; a name given twice is refused.
func TestWriteRegionsKubeconfig(t *testing.T) {
	dir := t.TempDir()
	var clusters []ClusterState
	for i, server := range []string{"https://127.0.0.1:1001", "https://127.0.0.1:1002"} {
		name := ClusterName(i)
		path := filepath.Join(dir, name+".kubeconfig")
		pki := kubePKI{caPEM: []byte("ca of " + name), adminToken: "token-" + name}
		if err := writeKubeconfig(path, server, pki); err != nil {
			t.Fatal(err)
		}
		clusters = append(clusters, ClusterState{Name: name, Kubeconfig: path, Server: server})
	}
	merged := filepath.Join(dir, "regions.kubeconfig")
	if err := WriteRegionsKubeconfig(merged, clusters); err != nil {
		t.Fatalf("WriteRegionsKubeconfig: %v", err)
	}
	got, err := clientcmd.LoadFromFile(merged)
	if err != nil {
		t.Fatalf("reading back %s: %v", merged, err)
	}
	if got.CurrentContext != "sandbox" {
		t.Errorf("current context = %q, want sandbox", got.CurrentContext)
	}
	seen := map[string][3]string{}
	for name, ctx := range got.Contexts {
		c, u := got.Clusters[ctx.Cluster], got.AuthInfos[ctx.AuthInfo]
		if c == nil || u == nil {
			t.Fatalf("context %s names cluster %q and user %q, not both in the file", name, ctx.Cluster, ctx.AuthInfo)
		}
		seen[name] = [3]string{c.Server, string(c.CertificateAuthorityData), u.Token}
	}
	want := map[string][3]string{
		"sandbox":   {"https://127.0.0.1:1001", "ca of sandbox", "token-sandbox"},
		"sandbox-2": {"https://127.0.0.1:1002", "ca of sandbox-2", "token-sandbox-2"},
	}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("contexts' server, CA and token (-want +got):\n%s", diff)
	}

	twice := []ClusterState{clusters[0], clusters[0]}
	if err := WriteRegionsKubeconfig(filepath.Join(dir, "twice"), twice); err == nil || !strings.Contains(err.Error(), `"sandbox"`) {
		t.Errorf("WriteRegionsKubeconfig with sandbox twice = %v, want a refusal naming it", err)
	}
}
