package devstack_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/dev/devstack"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dev/testenv"
)

// jobView is what these tests read of GET /api/v1/jobs/{id}.
type jobView struct {
	Status        string `json:"status"`
	StatusHistory []struct {
		Status string    `json:"status"`
		At     time.Time `json:"at"`
		Reason string    `json:"reason"`
	} `json:"status_history"`
	Exits []struct {
		Pod       string `json:"pod"`
		Container string `json:"container"`
		ExitCode  int    `json:"exit_code"`
		Reason    string `json:"reason"`
	} `json:"exits"`
}

// at is when the job entered status, from its history.
func (j jobView) at(status string) (time.Time, bool) {
	for _, h := range j.StatusHistory {
		if h.Status == status {
			return h.At, true
		}
	}
	return time.Time{}, false
}

// TestSandboxJobsRunAWhileAndFailAsAsked is the sandbox's promise to whoever tries a flow on
// `tidegate dev`: a Job whose pod template carries kwok's pod-complete delay is running for that
// long, and one carrying the exit-code annotation ends failed, with that code on its record.
func TestSandboxJobsRunAWhileAndFailAsAsked(t *testing.T) {
	kube := testenv.Kube(t)
	opt := devstack.Options{
		Addr: freeAddr(t), APIKey: "k", Beat: time.Second, Dir: t.TempDir(),
		Standins: &kube, Prefix: fmt.Sprintf("stages-%d", os.Getpid()),
	}
	st := startDev(t, opt)
	c := client{t: t, url: st.URL}

	const delay = 20 * time.Second
	slow := c.submitExampleWith(t, "slow", map[string]string{sandbox.CompleteDelayAnnotation: delay.String()})
	failing := c.submitExampleWith(t, "exit3", map[string]string{sandbox.ExitCodeAnnotation: "3"})

	failed := c.waitFor(failing, "failed", time.Minute)
	if len(failed.Exits) != 1 || failed.Exits[0].ExitCode != 3 || failed.Exits[0].Container != "main" || failed.Exits[0].Reason != "Error" {
		t.Errorf("job %s's exits = %+v, want main's exit code 3 (Error)", failing, failed.Exits)
	}

	// While the delay runs the job is running, not finished; then it succeeds, its history
	// saying it ran for about the delay (the beat records each move within a second of it).
	running := c.waitFor(slow, "running", time.Minute)
	started, _ := running.at("running")
	time.Sleep(delay / 2)
	if mid := c.job(slow); mid.Status != "running" {
		t.Errorf("job %s is %s %s after it started, want still running (delay %s)", slow, mid.Status, time.Since(started).Round(time.Second), delay)
	}
	ended := c.waitFor(slow, "succeeded", delay+time.Minute)
	finished, _ := ended.at("succeeded")
	if ran := finished.Sub(started); ran < delay-2*time.Second || ran > delay+15*time.Second {
		t.Errorf("job %s ran %s (running %s, succeeded %s), want about %s", slow, ran, started, finished, delay)
	}
	if len(ended.Exits) != 0 {
		t.Errorf("job %s succeeded with exits %+v, want none", slow, ended.Exits)
	}
}

// job reads job id.
func (c client) job(id string) jobView {
	c.t.Helper()
	code, body := c.do("GET", "/api/v1/jobs/"+id, "")
	var j jobView
	if code != 200 || json.Unmarshal([]byte(body), &j) != nil {
		c.t.Fatalf("GET /api/v1/jobs/%s = %d %s", id, code, body)
	}
	return j
}

// waitFor waits up to within until job id has status, and answers it then.
func (c client) waitFor(id, status string, within time.Duration) jobView {
	c.t.Helper()
	var j jobView
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if j = c.job(id); j.Status == status {
			return j
		}
	}
	c.t.Fatalf("job %s was not %s within %s; last %s, history %+v", id, status, within, j.Status, j.StatusHistory)
	return j
}

// TestRefusedJobsGiveTheirRoomBack is the poison-manifest promise on `tidegate dev`: jobs whose
// manifests the policy admits but the API server refuses (a negative backoffLimit) end failed
// with rejected_by_cluster within two beats, and in a region of capacity 10, ten of them ahead of
// a compliant job do not hold it back.
func TestRefusedJobsGiveTheirRoomBack(t *testing.T) {
	kube := testenv.Kube(t)
	st := startDev(t, devstack.Options{
		Addr: freeAddr(t), APIKey: "k", Beat: time.Second, Dir: t.TempDir(), RegionCapacity: "us-east-1=10",
		Standins: &kube, Prefix: fmt.Sprintf("refused-%d", os.Getpid()),
	})
	c := client{t: t, url: st.URL}
	var refused []string
	for i := range 10 {
		refused = append(refused, c.submitExampleEdited(t, fmt.Sprintf("refused%d", i), func(m string) string {
			edited := strings.Replace(m, "backoffLimit: 0", "backoffLimit: -1", 1)
			if edited == m {
				t.Fatal("examples/job.yaml no longer sets backoffLimit: 0; update this test")
			}
			return edited
		}))
	}
	fine := c.submitExample(t, "fine")
	for _, id := range refused {
		j := c.waitFor(id, "failed", time.Minute)
		last := j.StatusHistory[len(j.StatusHistory)-1]
		if !strings.HasPrefix(last.Reason, "rejected_by_cluster: ") || !strings.Contains(last.Reason, "backoffLimit") {
			t.Errorf("job %s failed with %q, want rejected_by_cluster and the server's message", id, last.Reason)
		}
		if queued, _ := j.at("queued"); last.At.Sub(queued) > 10*time.Second {
			t.Errorf("job %s took %s from queued to failed, want a drain or two", id, last.At.Sub(queued))
		}
	}
	c.waitFor(fine, "succeeded", time.Minute)
}
