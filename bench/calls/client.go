package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
)

// jobEvents are the events of a job that runs to success, each delivered to the run's webhook.
var jobEvents = []string{"job.queued", "job.dispatched", "job.started", "job.completed"}

// hookSecret signs the deliveries: 32 bytes, as whsec_ base64.
var hookSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("tidegate-calls-benchmark-secret!"))

// client is the API as a client reaches it: over HTTP, with the dev tenant's key.
type client struct {
	url, key string
}

var httpClient = &http.Client{Timeout: 30 * time.Second}

func (c client) post(ctx context.Context, path string, body any, header map[string]string) (int, []byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+path, bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

// subscribe registers a webhook for every event of a job that succeeds or fails.
func (c client) subscribe(ctx context.Context, url string) error {
	events := append(append([]string{}, jobEvents...), "job.failed")
	code, body, err := c.post(ctx, "/api/v1/webhooks", map[string]any{"url": url, "events": events, "secret": hookSecret}, nil)
	if err != nil {
		return fmt.Errorf("POST /api/v1/webhooks: %w", err)
	}
	if code != http.StatusCreated {
		return fmt.Errorf("POST /api/v1/webhooks = %d %s, want 201", code, body)
	}
	return nil
}

// submitAll submits n jobs, workers at a time, and answers their ids.
func (c client) submitAll(ctx context.Context, n, workers int) ([]string, error) {
	ids := make([]string, n)
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				ids[i], errs[i] = c.submit(ctx, i)
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

// submit posts the README's example job under a name of the run's own, with an idempotency key,
// as a careful client does.
func (c client) submit(ctx context.Context, i int) (string, error) {
	name := fmt.Sprintf("calls-%d-%d", os.Getpid(), i)
	code, body, err := c.post(ctx, "/api/v1/jobs", jobRequest(name), map[string]string{"Idempotency-Key": name})
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

// jobRequest is the README's first job: one pod that meets the restricted profile.
func jobRequest(name string) map[string]any {
	container := map[string]any{
		"name": "main", "image": "busybox:1.36", "command": []string{"echo", "hi"},
		"securityContext": map[string]any{"allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []string{"ALL"}}},
	}
	pod := map[string]any{
		"restartPolicy":   "Never",
		"securityContext": map[string]any{"runAsNonRoot": true, "runAsUser": 1000, "seccompProfile": map[string]any{"type": "RuntimeDefault"}},
		"containers":      []any{container},
	}
	return map[string]any{
		"region": "us-east-1", "namespace": "team-a", "priority": 70, "labels": map[string]string{"team": "ml"},
		"manifest": map[string]any{
			"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": name},
			"spec": map[string]any{"template": map[string]any{"spec": pod}},
		},
	}
}
