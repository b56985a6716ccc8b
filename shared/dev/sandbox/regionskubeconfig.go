package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// WriteRegionsKubeconfig writes to path one kubeconfig reaching every one of clusters: each
// cluster's admin kubeconfig's current context, cluster and credentials under the cluster's Name,
// the first cluster's the current context. shared/kube reaches a region through the context named
// by the region's cluster name (TIDEGATE_REGIONS' us-west-2=sandbox-2), and kubectl, handed it as
// KUBECONFIG, reaches the first cluster, or another with --context.
func WriteRegionsKubeconfig(path string, clusters []ClusterState) error {
	if len(clusters) == 0 {
		return errors.New("writing the regions' kubeconfig: no clusters given")
	}
	merged := clientcmdapi.NewConfig()
	for _, c := range clusters {
		if _, dup := merged.Contexts[c.Name]; dup {
			return fmt.Errorf("writing the regions' kubeconfig: two clusters are named %q; name each once", c.Name)
		}
		one, err := clientcmd.LoadFromFile(c.Kubeconfig)
		if err != nil {
			return fmt.Errorf("reading cluster %s's kubeconfig %s: %w", c.Name, c.Kubeconfig, err)
		}
		ctx, ok := one.Contexts[one.CurrentContext]
		if !ok {
			return fmt.Errorf("cluster %s's kubeconfig %s has no current context %q", c.Name, c.Kubeconfig, one.CurrentContext)
		}
		cluster, user := one.Clusters[ctx.Cluster], one.AuthInfos[ctx.AuthInfo]
		if cluster == nil || user == nil {
			return fmt.Errorf("cluster %s's kubeconfig %s: context %q names a cluster or user it does not hold", c.Name, c.Kubeconfig, one.CurrentContext)
		}
		merged.Clusters[c.Name] = cluster
		merged.AuthInfos[c.Name] = user
		merged.Contexts[c.Name] = &clientcmdapi.Context{Cluster: c.Name, AuthInfo: c.Name, Namespace: ctx.Namespace}
	}
	merged.CurrentContext = clusters[0].Name
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("making the folder of the regions' kubeconfig: %w", err)
	}
	if err := clientcmd.WriteToFile(*merged, path); err != nil {
		return fmt.Errorf("writing the regions' kubeconfig %s: %w", path, err)
	}
	return nil
}
