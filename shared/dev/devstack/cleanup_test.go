package devstack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tidegate/tidegate/shared/dev/devstack"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/jobs"
)

// TestFinishedJobsGoAfterTheirTTL is the clean-up promise on `tidegate dev`: the Kubernetes Job
// of a finished job is deleted by the cluster's TTL-after-finished controller once the TTL
// dispatch gave it has run (after the beat recorded the end, never before), and the job's record
// keeps what it showed: its status, placement and last log lines.
func TestFinishedJobsGoAfterTheirTTL(t *testing.T) {
	kube := testenv.Kube(t)
	const beat, ttl = time.Second, 6 * time.Second
	st := startDev(t, devstack.Options{
		Addr: freeAddr(t), APIKey: "k", Beat: beat, JobTTL: ttl, Dir: t.TempDir(),
		Standins: &kube, Prefix: fmt.Sprintf("ttl-%d", os.Getpid()),
	})
	c := client{t: t, url: st.URL}
	cs, err := sandbox.KubeClient(kube.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	id := c.submitExample(t, "ttl")
	sel := metav1.ListOptions{LabelSelector: jobs.IDKey + "=" + id}
	ended := c.waitFor(id, "succeeded", time.Minute)
	done, _ := ended.at("succeeded")

	l, err := cs.BatchV1().Jobs("team-a").List(context.Background(), sel)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 1 || l.Items[0].Spec.TTLSecondsAfterFinished == nil || *l.Items[0].Spec.TTLSecondsAfterFinished != int32(ttl/time.Second) {
		t.Fatalf("job %s's Jobs in the cluster when it ended = %d, want one with ttlSecondsAfterFinished %d", id, len(l.Items), int(ttl/time.Second))
	}

	// The controller deletes the Job ttl after its completion time; the margin is for a loaded
	// machine, and the Job may go a moment before the beat's record of the end says it did.
	const margin = 30 * time.Second
	for {
		l, err := cs.BatchV1().Jobs("team-a").List(context.Background(), sel)
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Items) == 0 {
			if gone := time.Since(done); gone < ttl-2*beat {
				t.Errorf("job %s's Job was gone %s after the recorded end, before its TTL of %s", id, gone.Round(time.Second), ttl)
			}
			t.Logf("job %s's Job was gone %s after the recorded end (TTL %s)", id, time.Since(done).Round(100*time.Millisecond), ttl)
			break
		}
		if time.Since(done) > ttl+margin {
			t.Fatalf("job %s's Job is still in the cluster %s after it ended; its TTL is %s (is the TTL-after-finished controller running?)",
				id, time.Since(done).Round(time.Second), ttl)
		}
		time.Sleep(250 * time.Millisecond)
	}

	// Past a few more beats the record is as it was: the beat does not take the Job's going
	// for a failure.
	time.Sleep(3 * beat)
	code, body := c.do("GET", "/api/v1/jobs/"+id, "")
	var kept struct {
		Status    string         `json:"status"`
		Placement map[string]any `json:"placement"`
		LogTail   []string       `json:"log_tail"`
		// The batch Job's status as the beat saw it at the end.
		ClusterJobs []struct {
			Name           string     `json:"name"`
			BackoffLimit   *int       `json:"backoff_limit"`
			Completions    *int       `json:"completions"`
			Succeeded      int        `json:"succeeded"`
			Failed         int        `json:"failed"`
			StartTime      *time.Time `json:"start_time"`
			CompletionTime *time.Time `json:"completion_time"`
			Conditions     []struct{ Type, Status string }
		} `json:"cluster_jobs"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &kept) != nil {
		t.Fatalf("GET /api/v1/jobs/%s after its Job was deleted = %d %s", id, code, body)
	}
	if kept.Status != "succeeded" || kept.Placement["node_name"] == nil || len(kept.LogTail) == 0 {
		t.Errorf("job %s after its Job was deleted = %s, placement %v, log tail %q; want succeeded with its placement and last lines",
			id, kept.Status, kept.Placement, kept.LogTail)
	}
	if len(kept.ClusterJobs) != 1 {
		t.Fatalf("job %s's cluster_jobs after its Job was deleted = %+v, want the one Job as it ended", id, kept.ClusterJobs)
	}
	cj := kept.ClusterJobs[0]
	complete := slices.ContainsFunc(cj.Conditions, func(c struct{ Type, Status string }) bool { return c.Type == "Complete" && c.Status == "True" })
	if cj.Name != fmt.Sprintf("ttl-%d", os.Getpid()) || cj.BackoffLimit == nil || *cj.BackoffLimit != 0 || cj.Completions == nil || *cj.Completions != 1 ||
		cj.Succeeded != 1 || cj.Failed != 0 || cj.StartTime == nil || cj.CompletionTime == nil || cj.CompletionTime.Before(*cj.StartTime) || !complete {
		t.Errorf("job %s's kept cluster_jobs = %+v; want its Job with backoff_limit 0, completions 1, 1 succeeded, its times and Complete", id, cj)
	}
}
