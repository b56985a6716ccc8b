package devstack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tidegate/tidegate/shared/dev/devstack"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dev/testenv"
)

// retriedJob is a restricted one-pod Job in team-a whose pod runs for delay, submitted as
// POST /api/v1/jobs takes it, with retry as its policy (nil for none) and the pod annotations given.
func retriedJob(name string, retry any, annotations map[string]string) string {
	job := map[string]any{
		"apiVersion": "batch/v1", "kind": "Job",
		"metadata": map[string]any{"name": fmt.Sprintf("%s-%d", name, os.Getpid()), "namespace": "team-a"},
		"spec": map[string]any{"backoffLimit": 0, "template": map[string]any{
			"metadata": map[string]any{"annotations": annotations},
			"spec": map[string]any{
				"restartPolicy":   "Never",
				"securityContext": map[string]any{"runAsNonRoot": true, "runAsUser": 1000, "seccompProfile": map[string]any{"type": "RuntimeDefault"}},
				"containers": []any{map[string]any{"name": "main", "image": "busybox:1.36", "securityContext": map[string]any{
					"allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []any{"ALL"}}}}},
			},
		}},
	}
	body := map[string]any{"manifest": job, "region": "us-east-1", "namespace": "team-a"}
	if retry != nil {
		body["retry"] = retry
	}
	b, _ := json.Marshal(body)
	return string(b)
}

// TestRetryOnSpotInterruption is issue 15's promise on `tidegate dev`: a job with
// retry {attempts: 2, on: [spot_interruption]} whose running pod gets a DisruptionTarget
// condition (set through the sandbox's API) is queued again with spot_interrupted and then
// succeeds, its status_history showing both attempts; a pod failure without a retry policy still
// fails the job.
func TestRetryOnSpotInterruption(t *testing.T) {
	kube := testenv.Kube(t)
	opt := devstack.Options{
		Addr: freeAddr(t), APIKey: "k", Beat: time.Second, Dir: t.TempDir(),
		Standins: &kube, Prefix: fmt.Sprintf("retry-%d", os.Getpid()),
	}
	st := startDev(t, opt)
	c := client{t: t, url: st.URL}
	kc, err := sandbox.KubeClient(kube.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	submit := func(body string) string {
		code, out := c.do("POST", "/api/v1/jobs", body)
		var resp struct {
			Job struct {
				ID string `json:"id"`
			} `json:"job"`
		}
		if code != 202 || json.Unmarshal([]byte(out), &resp) != nil {
			t.Fatalf("POST /api/v1/jobs = %d %s", code, out)
		}
		return resp.Job.ID
	}
	spot := submit(retriedJob("spot", map[string]any{"attempts": 2, "on": []string{"spot_interruption"}},
		map[string]string{sandbox.CompleteDelayAnnotation: "10s"}))
	plain := submit(retriedJob("plain", nil, map[string]string{sandbox.ExitCodeAnnotation: "3"}))

	c.waitFor(spot, "running", time.Minute)
	pods, err := kc.CoreV1().Pods("team-a").List(context.Background(), metav1.ListOptions{LabelSelector: "tidegate.io/job-id=" + spot})
	if err != nil || len(pods.Items) != 1 || pods.Items[0].Status.Phase != corev1.PodRunning {
		t.Fatalf("job %s's pods: %v %+v, want one running", spot, err, pods)
	}
	patch := fmt.Sprintf(`{"status":{"conditions":[{"type":"DisruptionTarget","status":"True","reason":"TerminationByKubelet","message":"spot instance reclaimed","lastTransitionTime":%q}]}}`,
		time.Now().UTC().Format(time.RFC3339))
	if _, err := kc.CoreV1().Pods("team-a").Patch(context.Background(), pods.Items[0].Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("setting DisruptionTarget on job %s's pod: %v", spot, err)
	}

	done := c.waitFor(spot, "succeeded", 2*time.Minute)
	var raw struct {
		Attempt       int `json:"attempt"`
		StatusHistory []struct {
			Status  string `json:"status"`
			Reason  string `json:"reason"`
			Attempt int    `json:"attempt"`
		} `json:"status_history"`
		Attempts []struct {
			Attempt int    `json:"attempt"`
			Reason  string `json:"reason"`
		} `json:"attempts"`
	}
	_, body := c.do("GET", "/api/v1/jobs/"+spot, "")
	if err := json.Unmarshal([]byte(body), &raw); err != nil {
		t.Fatal(err)
	}
	// The retrying entry starts attempt 2: it and every entry after it but the claim's carry it.
	var first, second []string
	var retrying struct{ Reason string }
	for _, h := range raw.StatusHistory {
		if strings.HasPrefix(h.Reason, "retrying") {
			retrying.Reason = h.Reason
		}
		if retrying.Reason == "" {
			first = append(first, h.Status)
			continue
		}
		second = append(second, h.Status)
		if h.Attempt != 2 && h.Status != "dispatching" {
			t.Errorf("job %s: history entry %+v of the second attempt does not say so", spot, h)
		}
	}
	if raw.Attempt != 2 || len(raw.Attempts) != 1 || !strings.HasPrefix(retrying.Reason, "retrying: spot_interrupted") ||
		strings.Join(first, ",") != "queued,dispatching,pending,running" || strings.Join(second, ",") != "queued,dispatching,pending,running,succeeded" {
		t.Errorf("job %s: attempt %d, attempts %+v, history %+v (%v); want attempt 1 queued..running, a retrying entry for spot_interrupted, then attempt 2 to succeeded",
			spot, raw.Attempt, raw.Attempts, raw.StatusHistory, done.Status)
	}

	if failed := c.waitFor(plain, "failed", time.Minute); len(failed.Exits) != 1 || failed.Exits[0].ExitCode != 3 {
		t.Errorf("job %s (no retry policy) failed with exits %+v, want exit code 3", plain, failed.Exits)
	}
}
