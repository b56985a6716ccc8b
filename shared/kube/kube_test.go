package kube

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/ekstoken"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestForKubeconfigListsNodes(t *testing.T) {
	st := testenv.Kube(t)
	cfg := config.Config{Regions: map[string]string{"us-east-1": "a", "eu-west-1": "b"}, Kubeconfig: st.Kubeconfig}
	clusters, err := New(cfg, testAWSConfig())
	if err != nil {
		t.Fatalf("New with kubeconfig %s: %v", st.Kubeconfig, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, region := range []string{"us-east-1", "eu-west-1"} {
		cs, rc, err := typedFor(ctx, clusters, region)
		if err != nil {
			t.Fatalf("For(%s): %v", region, err)
		}
		checkTuned(t, region, rc)
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("For(%s): listing nodes: %v", region, err)
		}
		if len(nodes.Items) == 0 {
			t.Errorf("For(%s): the sandbox cluster lists no nodes, want kwok's", region)
		}
	}
}

func TestForUnknownRegion(t *testing.T) {
	clusters, err := New(config.Config{Regions: map[string]string{"us-east-1": "a"}}, testAWSConfig())
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if _, _, err := typedFor(context.Background(), clusters, "mars-north-1"); !errors.Is(err, ErrUnknownRegion) {
		t.Errorf("For(mars-north-1) error = %v, want ErrUnknownRegion", err)
	}
}

// TestForEKSReachesTheDescribedCluster runs the EKS path against the sandbox: DescribeCluster (on
// loopback) names the sandbox's API server and CA, and the client reaches it over TLS verified
// with that CA, signing a real token. The sandbox knows only its static tokens, so it answers 401;
// the client makes one new token (sent once more if it differs: signed in the same second, it does
// not) and reports Unauthorized.
func TestForEKSReachesTheDescribedCluster(t *testing.T) {
	st := testenv.Kube(t)
	sandbox, err := clientcmd.BuildConfigFromFlags("", st.Kubeconfig)
	if err != nil {
		t.Fatalf("reading the sandbox kubeconfig: %v", err)
	}
	stub := newEKSStub(t, map[string]stubCluster{"prod": {Status: "ACTIVE", Endpoint: sandbox.Host, CAPEM: sandbox.CAData}})
	clusters, err := New(eksConfig(stub, map[string]string{"eu-west-1": "prod"}), testAWSConfig())
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	tokens := &countingTokens{inner: clusters.tokens}
	clusters.tokens = tokens
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	cs, rc, err := typedFor(ctx, clusters, "eu-west-1")
	if err != nil {
		t.Fatalf("For(eu-west-1): %v", err)
	}
	if _, _, err := typedFor(ctx, clusters, "eu-west-1"); err != nil {
		t.Fatalf("For(eu-west-1) again: %v", err)
	}
	if diff := cmp.Diff([]string{"eu-west-1/prod"}, stub.describeCalls()); diff != "" {
		t.Errorf("DescribeCalls after two For(eu-west-1) (-want +got):\n%s", diff)
	}
	checkTuned(t, "eu-west-1", rc)
	if rc.Host != sandbox.Host || !bytes.Equal(rc.CAData, sandbox.CAData) {
		t.Errorf("For(eu-west-1) config has host %q and %d bytes of CA, want the described %q and %d", rc.Host, len(rc.CAData), sandbox.Host, len(sandbox.CAData))
	}

	_, err = cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if !apierrors.IsUnauthorized(err) {
		t.Fatalf("listing nodes with an EKS token at the sandbox: error = %v, want Unauthorized (a TLS error would mean the CA was not used)", err)
	}
	if got := tokens.count(); got != 2 {
		t.Errorf("tokens made for one refused request = %d, want 2 (the first and one after the 401)", got)
	}
}

func TestForEKSClusterNotReady(t *testing.T) {
	stub := newEKSStub(t, map[string]stubCluster{"new": {Status: "CREATING"}})
	clusters, err := New(eksConfig(stub, map[string]string{"us-east-1": "new", "us-west-2": "gone"}), testAWSConfig())
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, region := range []string{"us-east-1", "us-west-2"} {
		// Twice: a failure is not remembered, the next call describes the cluster again.
		for range 2 {
			if _, _, err := typedFor(ctx, clusters, region); err == nil {
				t.Errorf("For(%s) succeeded, want an error", region)
			}
		}
	}
	want := []string{"us-east-1/new", "us-east-1/new", "us-west-2/gone", "us-west-2/gone"}
	if diff := cmp.Diff(want, stub.describeCalls()); diff != "" {
		t.Errorf("DescribeCluster calls (-want +got):\n%s", diff)
	}
}

func TestForRespectsContext(t *testing.T) {
	stub := newEKSStub(t, nil)
	clusters, err := New(eksConfig(stub, map[string]string{"us-east-1": "prod"}), testAWSConfig())
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := typedFor(ctx, clusters, "us-east-1"); !errors.Is(err, context.Canceled) {
		t.Errorf("For(us-east-1) with a cancelled context: error = %v, want context.Canceled", err)
	}
}

func checkTuned(t *testing.T, region string, rc *rest.Config) {
	t.Helper()
	if rc.QPS != clientQPS || rc.Burst != clientBurst || rc.Timeout != requestTimeout || rc.UserAgent != userAgent {
		t.Errorf("For(%s) config has QPS %v, burst %d, timeout %v, user agent %q; want %v, %d, %v, %q",
			region, rc.QPS, rc.Burst, rc.Timeout, rc.UserAgent, float32(clientQPS), clientBurst, requestTimeout, userAgent)
	}
}

// countingTokens counts the tokens another tokenMaker makes.
type countingTokens struct {
	inner tokenMaker
	mu    sync.Mutex
	n     int
}

func (c *countingTokens) Token(ctx context.Context, region, cluster string) (ekstoken.Token, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return c.inner.Token(ctx, region, cluster)
}

func (c *countingTokens) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// typedFor is region's typed client made from its configuration, as shared/kube/typed makes it.
func typedFor(ctx context.Context, c *Clusters, region string) (kubernetes.Interface, *rest.Config, error) {
	rc, err := c.Config(ctx, region)
	if err != nil {
		return nil, nil, err
	}
	cs, err := kubernetes.NewForConfig(rc)
	return cs, rc, err
}
