// Package kube reaches each region's Kubernetes cluster: an EKS endpoint with a fresh token in AWS, a kubeconfig in dev and tests.
package kube

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/ekstoken"
)

// How every client talks to its cluster.
const (
	// A dispatch invocation drains a region's admitted jobs in one go, and a reconcile beat lists
	// and patches a region's jobs: at client-go's default 5 QPS (burst 10), 200 creates would take
	// 38 s of a Lambda's budget; at 50 QPS with a burst of 100, 2 s. Neither comes near the API
	// server's default in-flight limits (400 reads, 200 writes): at a typical 20–50 ms a request,
	// 50 QPS keeps only a few requests in flight per client.
	clientQPS   = 50
	clientBurst = 100
	// requestTimeout caps one request. API Gateway abandons the API function after 30 s, so no
	// single cluster call is worth waiting longer; the caller's context bounds everything else.
	requestTimeout = 30 * time.Second
	// userAgent names Tidegate in the API server's audit log.
	userAgent = "tidegate"
)

// ErrUnknownRegion means a region is not among Config.Regions.
var ErrUnknownRegion = errors.New("region is not configured")

// Clusters hands out a client per region. It is safe for concurrent use and meant to live as long
// as the process: each region's client, and with it its connections, its token and what
// DescribeCluster said, is made once and kept.
type Clusters struct {
	regions map[string]string // region → cluster name

	// fromKubeconfig, when set, holds every region's cluster, made from the kubeconfig of dev and
	// tests at New; regions on one cluster share its client.
	fromKubeconfig map[string]*cluster

	describe clusterDescriber
	tokens   tokenMaker
	now      func() time.Time

	mu       sync.Mutex
	byRegion map[string]*slot
}

// cluster is one cluster's dynamic client and the configuration it was made from. The typed
// client set is shared/kube/typed's: building it links every API group's registration into the
// binary, which dispatch, applying with the dynamic client alone, does without.
type cluster struct {
	dynamic dynamic.Interface
	config  *rest.Config
}

// slot holds a region's cluster once it is reached. lock is a one-place channel rather than a
// mutex so that a caller waiting behind another's DescribeCluster can give up when its context ends.
type slot struct {
	lock    chan struct{}
	cluster *cluster
}

// New returns the Clusters of cfg. With cfg.Kubeconfig set every region is reached through that
// kubeconfig, read now (kubeconfigClusters); otherwise each region's EKS cluster is described and
// authenticated with awsCfg's credentials, through cfg.Endpoints.EKS and cfg.Endpoints.STS when
// those are set.
func New(cfg config.Config, awsCfg aws.Config) (*Clusters, error) {
	c := &Clusters{regions: cfg.Regions, now: time.Now, byRegion: map[string]*slot{}}
	if cfg.Kubeconfig != "" {
		var err error
		if c.fromKubeconfig, err = kubeconfigClusters(cfg.Kubeconfig, cfg.Regions); err != nil {
			return nil, err
		}
		return c, nil
	}
	c.describe = eks.NewFromConfig(awsCfg, func(o *eks.Options) {
		if cfg.Endpoints.EKS != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoints.EKS)
		}
	})
	c.tokens = ekstoken.NewGenerator(awsCfg, cfg.Endpoints.STS)
	return c, nil
}

// kubeconfigClusters reads the kubeconfig at path and makes each region's cluster from it: a
// region whose cluster name (regions' value) names one of its contexts is reached through that
// context, so dev and tests can give each region a cluster of its own (us-west-2=sandbox-2); any
// other through its current context, as every region was before. Each context's client is made
// once, and the regions on it share it.
func kubeconfigClusters(path string, regions map[string]string) (map[string]*cluster, error) {
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: path}
	raw, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).RawConfig()
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig %s: %w", path, err)
	}
	byContext := map[string]*cluster{}
	out := map[string]*cluster{}
	for region, name := range regions {
		use := raw.CurrentContext
		if _, ok := raw.Contexts[name]; ok {
			use = name
		}
		if cl, ok := byContext[use]; ok {
			out[region] = cl
			continue
		}
		rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: use}).ClientConfig()
		if err != nil {
			which := fmt.Sprintf("its context %q", use)
			if use != name {
				which = fmt.Sprintf("no context is named %q, its cluster, so the current context %q", name, use)
			}
			return nil, fmt.Errorf("reading kubeconfig %s for region %s (%s): %w", path, region, which, err)
		}
		cl, err := newCluster(rc)
		if err != nil {
			return nil, err
		}
		byContext[use], out[region] = cl, cl
	}
	return out, nil
}

// Config is a copy of the client configuration of region's cluster, token refresh included, to
// make other clients from (shared/kube/typed's). The first call for a region in AWS describes its
// cluster; ctx bounds that, and every call made through a client takes its own context: callers
// pass the context carrying the Lambda's deadline, so nothing outlives the invocation.
func (c *Clusters) Config(ctx context.Context, region string) (*rest.Config, error) {
	cl, err := c.cluster(ctx, region)
	if err != nil {
		return nil, err
	}
	return rest.CopyConfig(cl.config), nil
}

// Dynamic is region's dynamic client: what dispatch applies manifests of any allowed kind with.
func (c *Clusters) Dynamic(ctx context.Context, region string) (dynamic.Interface, error) {
	cl, err := c.cluster(ctx, region)
	if err != nil {
		return nil, err
	}
	return cl.dynamic, nil
}

func (c *Clusters) cluster(ctx context.Context, region string) (*cluster, error) {
	name, ok := c.regions[region]
	if !ok {
		return nil, fmt.Errorf("reaching the cluster of %q: %w", region, ErrUnknownRegion)
	}
	if c.fromKubeconfig != nil {
		return c.fromKubeconfig[region], nil
	}
	s := c.slot(region)
	select {
	case s.lock <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("reaching cluster %s in %s: %w", name, region, ctx.Err())
	}
	defer func() { <-s.lock }()
	if s.cluster == nil {
		cl, err := c.reachEKS(ctx, region, name)
		if err != nil {
			return nil, err
		}
		s.cluster = cl
	}
	return s.cluster, nil
}

func (c *Clusters) slot(region string) *slot {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.byRegion[region]
	if !ok {
		s = &slot{lock: make(chan struct{}, 1)}
		c.byRegion[region] = s
	}
	return s
}

// newCluster sets the client settings every cluster shares on rc and makes its dynamic client.
func newCluster(rc *rest.Config) (*cluster, error) {
	rc.QPS, rc.Burst = clientQPS, clientBurst
	rc.Timeout = requestTimeout
	rc.UserAgent = userAgent
	dc, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("making a dynamic client for %s: %w", rc.Host, err)
	}
	return &cluster{dynamic: dc, config: rc}, nil
}
