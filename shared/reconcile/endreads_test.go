package reconcile_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/kube"
)

// TestEndsOfAPassReadTheirPodsTogether: a pass that sees many jobs end reads their pods with one
// LIST for each hundred, not one each (which the API server answers by scanning the namespace's
// every pod, so a beat where 1% of M jobs end would cost M²/100), and keeps their batch Jobs from
// its own LIST without reading them again; each record still keeps its pods' placement and its
// Jobs.
func TestEndsOfAPassReadTheirPodsTogether(t *testing.T) {
	const ended = 120 // past one hundred: two LISTs
	ctx := context.Background()
	tables, db := testenv.Tables(t)
	ns, kst := testenv.Namespace(t)
	reads := &getCounter{}
	kc := countedClient(t, kst.Kubeconfig, reads)
	store := dynamo.NewJobStore(db, tables)
	for i := range ended {
		if err := setupJob(ctx, store, kc, ns, i); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("bench-%04d", i)
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-pod", Namespace: ns, Labels: map[string]string{
				jobs.IDKey: benchID(ns, i), batchv1.JobNameLabel: name,
			}},
			Spec: corev1.PodSpec{NodeName: "kwok-node-0", Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
		}
		if _, err := kc.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	h := followRig{tables: tables, db: db, ns: ns, kc: kc, store: store}.instance(store, &ringCounter{}, time.Now)
	if err := h.HandleBeat(ctx, events.EventBridgeEvent{ID: "before"}); err != nil {
		t.Fatal(err)
	}
	for i := range ended {
		complete(t, kc, ns, fmt.Sprintf("bench-%04d", i))
	}

	reads.reset()
	if err := h.HandleBeat(ctx, events.EventBridgeEvent{ID: "ends"}); err != nil {
		t.Fatal(err)
	}
	perJob, together, jobLists := reads.count(ns)
	if perJob != 0 || jobLists != 0 {
		t.Errorf("recording %d ends read %d pod LISTs and %d Job LISTs of one job each, want none", ended, perJob, jobLists)
	}
	if together != 2 {
		t.Errorf("recording %d ends read their pods in %d LISTs, want 2 (a hundred jobs each)", ended, together)
	}
	for i := range ended {
		j, err := store.Job(ctx, benchID(ns, i))
		if err != nil {
			t.Fatal(err)
		}
		if j.Status != jobs.StatusSucceeded {
			t.Fatalf("%s is %s after its Job completed, want succeeded", j.ID, j.Status)
		}
		if len(j.Placement) == 0 || len(j.ClusterJobs) != 1 || j.ClusterJobs[0].Succeeded != 1 {
			t.Fatalf("%s ended with placement %v and Jobs %+v, want its pod's placement and its one succeeded Job",
				j.ID, j.Placement, j.ClusterJobs)
		}
	}
}

// getCounter notes the GETs of pods and Jobs a client sends with a label selector.
type getCounter struct {
	mu   sync.Mutex
	gets []string // "pods <selector>" or "jobs <selector>", of one namespace's URLs
}

func (c *getCounter) reset() { c.mu.Lock(); c.gets = nil; c.mu.Unlock() }

// count answers, of the GETs in namespace ns: pod LISTs of one job id, pod LISTs of a set of
// them, and Job LISTs of one job id.
func (c *getCounter) count(ns string) (perJob, together, jobLists int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range c.gets {
		switch {
		case strings.HasPrefix(g, "/api/v1/namespaces/"+ns+"/pods ") && strings.Contains(g, " in ("):
			together++
		case strings.HasPrefix(g, "/api/v1/namespaces/"+ns+"/pods ") && strings.Contains(g, jobs.IDKey+"="):
			perJob++
		case strings.HasPrefix(g, "/apis/batch/v1/namespaces/"+ns+"/jobs ") && strings.Contains(g, jobs.IDKey+"="):
			jobLists++
		}
	}
	return perJob, together, jobLists
}

func (c *getCounter) RoundTrip(next http.RoundTripper, r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet {
		c.mu.Lock()
		c.gets = append(c.gets, r.URL.Path+" "+r.URL.Query().Get("labelSelector"))
		c.mu.Unlock()
	}
	return next.RoundTrip(r)
}

// countedClient is a client made from the production rest.Config whose GETs c notes.
func countedClient(t *testing.T, kubeconfig string, c *getCounter) kubernetes.Interface {
	t.Helper()
	clusters, err := kube.New(config.Config{Regions: map[string]string{benchRegion: "sandbox"}, Kubeconfig: kubeconfig}, aws.Config{})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := clusters.Config(context.Background(), benchRegion)
	if err != nil {
		t.Fatal(err)
	}
	wrap := rc.WrapTransport
	rc.WrapTransport = func(next http.RoundTripper) http.RoundTripper {
		if wrap != nil {
			next = wrap(next)
		}
		return roundTripFunc(func(r *http.Request) (*http.Response, error) { return c.RoundTrip(next, r) })
	}
	kc, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return kc
}

// roundTripFunc is a function as an http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
