package devstack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dev/devstack"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
)

// envOutage sets TestRegionOutageOnDev to the full size: 200 jobs, the region's API server
// stopped for 12 minutes with TIDEGATE_REGION_LOST_AFTER=5m. `make test` runs it scaled down
// (the same shape, in well under two minutes).
const envOutage = "TIDEGATE_OUTAGE_FULL"

// outageSize is how big TestRegionOutageOnDev runs.
type outageSize struct {
	jobs           int
	lostAfter, out time.Duration
	run            string // how long each job's pod runs (kwok's pod-complete delay)
}

func sizeOfOutage() outageSize {
	if os.Getenv(envOutage) != "" {
		return outageSize{jobs: 200, lostAfter: 5 * time.Minute, out: 12 * time.Minute, run: "90s"}
	}
	return outageSize{jobs: 24, lostAfter: 15 * time.Second, out: 40 * time.Second, run: "20s"}
}

// outageJob is what TestRegionOutageOnDev reads of a job.
type outageJob struct {
	ID            string   `json:"id"`
	Status        string   `json:"status"`
	Region        string   `json:"region"`
	Regions       []string `json:"regions"`
	Attempt       int      `json:"attempt"`
	OnRegionLost  string   `json:"on_region_lost"`
	PendingReason string   `json:"pending_reason"`
	StatusHistory []struct {
		Status  string `json:"status"`
		Reason  string `json:"reason"`
		Attempt int    `json:"attempt"`
	} `json:"status_history"`
}

// TestRegionOutageOnDev is issue 33's outage on the stand-ins with two clusters: jobs running and
// queued across both regions, us-west-2's API server stopped for longer than
// TIDEGATE_REGION_LOST_AFTER, then started again. Every job ends exactly once (one terminal
// entry, succeeded); the jobs with on_region_lost requeue that ran in us-west-2 finish in
// us-east-1 as attempt 2; the others wait for us-west-2 and finish there; the fenced attempts'
// Jobs are gone from us-west-2's cluster within a few beats of its return, and it admits again.
func TestRegionOutageOnDev(t *testing.T) {
	size := sizeOfOutage()
	kube := testenv.Kube(t)
	west := testenv.OwnCluster(t) // its API server is this test's to stop
	standins := kube
	standins.Clusters = []sandbox.ClusterState{kube.KubeClusters()[0], {Name: sandbox.ClusterName(1), Kubeconfig: west.Kubeconfig, Server: west.Server}}
	standins.RegionsKubeconfig = filepath.Join(t.TempDir(), "regions.kubeconfig")
	if err := sandbox.WriteRegionsKubeconfig(standins.RegionsKubeconfig, standins.Clusters); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{config.EnvRegionLostAfter: size.lostAfter.String()}
	st := startDev(t, devstack.Options{
		// It reads every job each second: a budget well above the default's 20 a second.
		RateLimit: 2000, RateBurst: 4000,
		Addr: freeAddr(t), APIKey: "k", Beat: time.Second, Dir: t.TempDir(), Clusters: 2, Standins: &standins,
		Prefix: fmt.Sprintf("outage-%d", os.Getpid()), Env: func(k string) string { return env[k] },
	})
	c := client{t: t, url: st.URL}
	health := dynamo.NewJobStore(kube.DynamoDB(), dynamo.Tables{Control: st.Env[config.EnvControlTable]})
	ctx := context.Background()

	// us-east-1 cordoned while they are submitted, so the roaming jobs go to us-west-2 and those
	// pinned to us-east-1 queue; uncordoned once they run.
	if err := health.SetCordon(ctx, "us-east-1", dynamo.Cordoned, "operator:test", time.Now()); err != nil {
		t.Fatal(err)
	}
	ids := submitOutageJobs(t, c, size)
	waitWest(t, c, ids, size)
	if err := health.SetCordon(ctx, "us-east-1", "", "operator:test", time.Now()); err != nil {
		t.Fatal(err)
	}

	t.Logf("stopping us-west-2's API server for %s (lost after %s)", size.out, size.lostAfter)
	if err := west.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	moved := waitMoved(t, c, ids, stopped.Add(size.out))
	time.Sleep(time.Until(stopped.Add(size.out)))
	if err := west.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	t.Logf("us-west-2 is back after %s; %d jobs had moved to us-east-1", back.Sub(stopped).Round(time.Second), len(moved))

	checkFencedGone(t, west, moved, health, back)
	ended := waitEnded(t, c, ids, 3*time.Minute+size.out)
	checkOutage(t, ended, moved)
}

// submitOutageJobs submits size.jobs jobs, each running size.run: a quarter pinned to each region,
// a quarter allowed in both with on_region_lost requeue, a quarter allowed in both without.
func submitOutageJobs(t *testing.T, c client, size outageSize) []string {
	t.Helper()
	var ids []string
	for i := range size.jobs {
		body := map[string]any{}
		switch i % 4 {
		case 0:
			body["region"] = "us-east-1"
		case 1:
			body["region"] = "us-west-2"
		case 2:
			body["regions"], body["on_region_lost"] = []string{"us-east-1", "us-west-2"}, "requeue"
		case 3:
			body["regions"] = []string{"us-east-1", "us-west-2"}
		}
		ids = append(ids, c.submitRunning(t, fmt.Sprintf("outage-%03d", i), size.run, body))
	}
	return ids
}

// submitRunning submits, to team-a with body's other fields, a one-pod Job named name (made
// unique) whose pod runs for run (kwok's pod-complete delay) asking little, and answers its id.
func (c client) submitRunning(t *testing.T, name, run string, body map[string]any) string {
	t.Helper()
	return c.submitEdited(t, name, body, func(template map[string]any) {
		template["metadata"] = map[string]any{"annotations": map[string]any{"pod-complete.stage.kwok.x-k8s.io/delay": run}}
		main := template["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
		main["resources"] = map[string]any{"requests": map[string]any{"cpu": "10m", "memory": "16Mi"}, "limits": map[string]any{"memory": "16Mi"}}
	})
}

// getJob reads job id as outageJob.
func (c client) getJob(id string) outageJob {
	c.t.Helper()
	code, body := c.do("GET", "/api/v1/jobs/"+id, "")
	var j outageJob
	if code != 200 || json.Unmarshal([]byte(body), &j) != nil {
		c.t.Fatalf("GET /api/v1/jobs/%s = %d %s", id, code, body)
	}
	return j
}

// waitWest waits until every job allowed in us-west-2 runs there.
func waitWest(t *testing.T, c client, ids []string, size outageSize) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		running := 0
		want := 0
		for i, id := range ids {
			if i%4 == 0 {
				continue
			}
			want++
			if j := c.getJob(id); j.Region == "us-west-2" && j.Status == "running" {
				running++
			}
		}
		if running == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of the %d jobs allowed in us-west-2 run there after 2 minutes", running, want)
		}
	}
}

// waitMoved waits, until by, for the jobs that asked to be queued again elsewhere to be running
// in us-east-1, and answers them.
func waitMoved(t *testing.T, c client, ids []string, by time.Time) map[string]bool {
	t.Helper()
	moved := map[string]bool{}
	for ; time.Now().Before(by); time.Sleep(time.Second) {
		for i, id := range ids {
			if i%4 == 2 && !moved[id] {
				if j := c.getJob(id); j.Region == "us-east-1" && j.Attempt == 2 {
					moved[id] = true
				}
			}
		}
		if len(moved) == len(ids)/4 {
			return moved
		}
	}
	t.Errorf("%d of the %d jobs with on_region_lost requeue moved to us-east-1 while us-west-2 was out", len(moved), len(ids)/4)
	return moved
}

// waitEnded waits up to within for every job to end, and answers them.
func waitEnded(t *testing.T, c client, ids []string, within time.Duration) []outageJob {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var out []outageJob
		left := 0
		for _, id := range ids {
			j := c.getJob(id)
			out = append(out, j)
			if j.Status != "succeeded" && j.Status != "failed" && j.Status != "cancelled" {
				left++
			}
		}
		if left == 0 {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d jobs have not ended %s after us-west-2 came back", left, len(ids), within)
		}
		time.Sleep(time.Second)
	}
}

// checkOutage holds every job to one end, succeeded, and where it should have run.
func checkOutage(t *testing.T, ended []outageJob, moved map[string]bool) {
	t.Helper()
	for i, j := range ended {
		terminal := 0
		var seen []string
		for _, h := range j.StatusHistory {
			seen = append(seen, h.Status)
			if h.Status == "succeeded" || h.Status == "failed" || h.Status == "cancelled" {
				terminal++
			}
		}
		wantRegion, wantAttempt := map[int]string{0: "us-east-1", 1: "us-west-2", 2: "us-east-1", 3: "us-west-2"}[i%4], 1
		if i%4 == 2 {
			wantAttempt = 2
		}
		if j.Status != "succeeded" || terminal != 1 || j.Region != wantRegion || max(j.Attempt, 1) != wantAttempt {
			t.Errorf("job %s (%d) = %s in %s attempt %d, %d ends, history %s; want succeeded once in %s, attempt %d",
				j.ID, i%4, j.Status, j.Region, j.Attempt, terminal, strings.Join(seen, " → "), wantRegion, wantAttempt)
		}
		if i%4 == 2 && !moved[j.ID] {
			t.Errorf("job %s asked to be queued again elsewhere and was not seen moving while us-west-2 was out", j.ID)
		}
	}
}

// checkFencedGone: within a minute of us-west-2's return, the moved jobs' Jobs are gone from its
// cluster, no fence is left, and it admits again (5–21 s measured on two busy cores).
func checkFencedGone(t *testing.T, west *sandbox.Cluster, moved map[string]bool, health *dynamo.JobStore, back time.Time) {
	t.Helper()
	cs, err := sandbox.KubeClient(west.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for deadline := back.Add(time.Minute); ; time.Sleep(time.Second) {
		left := 0
		for id := range moved {
			l, err := cs.BatchV1().Jobs("team-a").List(ctx, metav1.ListOptions{LabelSelector: "tidegate.io/job-id=" + id})
			if err != nil && !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
			if err == nil {
				for _, k := range l.Items {
					if k.DeletionTimestamp == nil {
						left++
					}
				}
			}
		}
		hl, err := health.Health(ctx, []string{"us-west-2"})
		if err != nil {
			t.Fatal(err)
		}
		if left == 0 && hl["us-west-2"].Closed() == "" {
			t.Logf("the fenced attempts' Jobs were gone and us-west-2 admitting %s after its return", time.Since(back).Round(time.Second))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute after us-west-2's return: %d fenced Jobs left there, its health %+v", left, hl["us-west-2"])
		}
	}
}
