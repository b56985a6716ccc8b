// Package typed provides each region's typed Kubernetes client set, made from shared/kube's
// configuration for the region: what the API and the beat list and read pods, Jobs, events and
// logs with. It is apart from kube because the client set registers every API group when the
// program starts, a cost dispatch (the dynamic client alone) should not pay.
package typed

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/kube"
)

// Clusters is kube's Clusters with a typed client per region, made on first use and kept.
type Clusters struct {
	*kube.Clusters

	mu       sync.Mutex
	clients  map[string]kubernetes.Interface
	watchers map[string]kubernetes.Interface
}

// New adds typed clients to c.
func New(c *kube.Clusters) *Clusters {
	return &Clusters{Clusters: c, clients: map[string]kubernetes.Interface{}, watchers: map[string]kubernetes.Interface{}}
}

// Client is region's typed client set, sharing the dynamic client's settings and token refresh.
func (c *Clusters) Client(ctx context.Context, region string) (kubernetes.Interface, error) {
	return c.client(ctx, region, c.clients, false)
}

// Watching is region's typed client set for watches: Client's, without the timeout on each
// request, which counts a watch's whole stream and would cut it off. A watch is bounded by its
// own timeoutSeconds and context instead.
func (c *Clusters) Watching(ctx context.Context, region string) (kubernetes.Interface, error) {
	return c.client(ctx, region, c.watchers, true)
}

// client is region's client set in kept, made on first use; untimed drops the request timeout.
func (c *Clusters) client(ctx context.Context, region string, kept map[string]kubernetes.Interface, untimed bool) (kubernetes.Interface, error) {
	c.mu.Lock()
	cs, ok := kept[region]
	c.mu.Unlock()
	if ok {
		return cs, nil
	}
	rc, err := c.Config(ctx, region)
	if err != nil {
		return nil, err
	}
	if untimed {
		rc.Timeout = 0
	}
	if cs, err = kubernetes.NewForConfig(rc); err != nil {
		return nil, fmt.Errorf("making a client for %s: %w", rc.Host, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := kept[region]; ok {
		return prev, nil
	}
	kept[region] = cs
	return cs, nil
}
