package reconcile

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/jobobjects"
)

// nodeFresh is how long a node read for an end's placement and cost serves the ends after it.
// Its labels (instance type, zone, capacity type) last as long as it does; a node whose name is
// given to another after it goes (an EC2 host name, reused) is read afresh within a minute. Ten
// ends a second on twenty nodes cost twenty reads a minute, not six hundred.
const nodeFresh = time.Minute

// nodeCache keeps the nodes ended jobs' pods ran on, by region and name, with when each was read.
type nodeCache struct {
	mu   sync.Mutex
	kept map[nodeKey]keptNode
}

type nodeKey struct{ region, name string }

type keptNode struct {
	node corev1.Node
	read time.Time
}

// of is the nodes pods of region ran on, each from the cache while it is fresh, the rest read
// through kc and kept. A node that cannot be read is left out.
func (c *nodeCache) of(ctx context.Context, kc kubernetes.Interface, region string, pods []corev1.Pod, now time.Time) map[string]corev1.Node {
	out := map[string]corev1.Node{}
	var unread []corev1.Pod
	c.mu.Lock()
	for _, p := range pods {
		name := p.Spec.NodeName
		if name == "" {
			continue
		}
		if k, ok := c.kept[nodeKey{region, name}]; ok && now.Sub(k.read) < nodeFresh {
			out[name] = k.node
		} else {
			unread = append(unread, p)
		}
	}
	c.mu.Unlock()
	if len(unread) == 0 {
		return out
	}
	read, _ := jobobjects.Nodes(ctx, kc.CoreV1().RESTClient(), unread)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kept == nil {
		c.kept = map[nodeKey]keptNode{}
	}
	for name, n := range read {
		// What placement and cost read of a node is its labels and capacity: its images and
		// field managers are not kept.
		n.Status.Images, n.ManagedFields = nil, nil
		c.kept[nodeKey{region, name}] = keptNode{node: n, read: now}
		out[name] = n
	}
	for k, n := range c.kept {
		if now.Sub(n.read) >= nodeFresh {
			delete(c.kept, k)
		}
	}
	return out
}
