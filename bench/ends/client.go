package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/tidegate/tidegate/shared/jobs"
)

// client is the API as a client reaches it: over HTTP, with the dev tenant's key.
type client struct {
	url, key string
}

var httpClient = &http.Client{Timeout: 30 * time.Second}

// runLabel marks the run's jobs, so that listing them finds no other run's.
var runLabel = fmt.Sprintf("ends-%d", os.Getpid())

func (c client) do(ctx context.Context, method, path string, body any) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url+path, r)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

// submitAll submits n jobs whose pod runs for run, workers at a time, and answers their ids.
func (c client) submitAll(ctx context.Context, n, workers int, run time.Duration) ([]string, error) {
	ids := make([]string, n)
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				ids[i], errs[i] = c.submit(ctx, i, run)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return ids, nil
}

func (c client) submit(ctx context.Context, i int, run time.Duration) (string, error) {
	code, body, err := c.do(ctx, http.MethodPost, "/api/v1/jobs", jobRequest(fmt.Sprintf("%s-%d", runLabel, i), run))
	if err != nil {
		return "", fmt.Errorf("POST /api/v1/jobs: %w", err)
	}
	var out struct {
		Job struct {
			ID string `json:"id"`
		} `json:"job"`
	}
	if code != http.StatusAccepted || json.Unmarshal(body, &out) != nil || out.Job.ID == "" {
		return "", fmt.Errorf("POST /api/v1/jobs = %d %s, want 202 with the job", code, body)
	}
	return out.Job.ID, nil
}

// jobRequest is the README's first job, its pod running for run on the sandbox.
func jobRequest(name string, run time.Duration) map[string]any {
	container := map[string]any{
		"name": "main", "image": "busybox:1.36", "command": []string{"sleep", "1"},
		"securityContext": map[string]any{"allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []string{"ALL"}}},
	}
	pod := map[string]any{
		"restartPolicy":   "Never",
		"securityContext": map[string]any{"runAsNonRoot": true, "runAsUser": 1000, "seccompProfile": map[string]any{"type": "RuntimeDefault"}},
		"containers":      []any{container},
	}
	return map[string]any{
		"region": "us-east-1", "namespace": "team-a", "priority": 70, "labels": map[string]string{"run": runLabel},
		"manifest": map[string]any{
			"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": name},
			"spec": map[string]any{"template": map[string]any{
				// kwok ends the pod this long after it runs (shared/dev/sandbox/stages/pod-complete.yaml).
				"metadata": map[string]any{"annotations": map[string]string{"pod-complete.stage.kwok.x-k8s.io/delay": run.String()}},
				"spec":     pod,
			}},
		},
	}
}

// end is a job's last status and when its record says it moved there.
type end struct {
	status jobs.Status
	at     time.Time
}

// waitEnded polls the run's jobs once a second until each of ids has ended, and answers each one's
// end as its record has it. The poll's pace moves only when the wait ends: the times are the
// records' own.
func (c client) waitEnded(ctx context.Context, ids []string, deadline time.Time) (map[string]end, error) {
	ended := map[string]end{}
	for {
		for _, s := range []string{"succeeded", "failed"} {
			if err := c.listEnded(ctx, s, ended); err != nil {
				return nil, err
			}
		}
		left := 0
		for _, id := range ids {
			if _, ok := ended[id]; !ok {
				left++
			}
		}
		if left == 0 {
			return ended, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%d of %d jobs had not ended by the deadline", left, len(ids))
		}
		time.Sleep(time.Second)
	}
}

// listEnded adds the run's jobs in status to ended.
func (c client) listEnded(ctx context.Context, status string, ended map[string]end) error {
	cursor := ""
	for {
		q := url.Values{"status": {status}, "label_selector": {"run=" + runLabel}, "limit": {"1000"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		code, body, err := c.do(ctx, http.MethodGet, "/api/v1/jobs?"+q.Encode(), nil)
		if err != nil || code != http.StatusOK {
			return fmt.Errorf("GET /api/v1/jobs = %d %s: %v", code, body, err)
		}
		var page struct {
			Items      []jobs.Job `json:"items"`
			NextCursor *string    `json:"next_cursor"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			return fmt.Errorf("reading GET /api/v1/jobs: %w", err)
		}
		for _, j := range page.Items {
			if h := j.StatusHistory; len(h) > 0 && h[len(h)-1].Status.Terminal() {
				ended[j.ID] = end{status: j.Status, at: h[len(h)-1].At}
			}
		}
		if page.NextCursor == nil || *page.NextCursor == "" {
			return nil
		}
		cursor = *page.NextCursor
	}
}
