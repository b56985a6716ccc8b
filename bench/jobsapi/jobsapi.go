// Package jobsapi is the API as the benchmarks reach it, over HTTP with the dev tenant's key:
// submitting jobs, subscribing a webhook and waiting for jobs to end.
package jobsapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/tidegate/tidegate/shared/jobs"
)

// Client calls the API at URL with the API key Key.
type Client struct {
	URL, Key string
}

// httpClient bounds each call: a stack too busy to answer in 30 s fails the run rather than hang it.
var httpClient = &http.Client{Timeout: 30 * time.Second}

// Do sends body (nil for none) as JSON with header, and answers the status and the body read.
func (c Client) Do(ctx context.Context, method, path string, body any, header map[string]string) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL+path, r)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.Key)
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

// Subscribe registers a webhook at url for events, signed with secret.
func (c Client) Subscribe(ctx context.Context, url, secret string, events []string) error {
	code, body, err := c.Do(ctx, http.MethodPost, "/api/v1/webhooks", map[string]any{"url": url, "events": events, "secret": secret}, nil)
	if err != nil {
		return fmt.Errorf("POST /api/v1/webhooks: %w", err)
	}
	if code != http.StatusCreated {
		return fmt.Errorf("POST /api/v1/webhooks = %d %s, want 201", code, body)
	}
	return nil
}

// SubmitAll submits n jobs, workers at a time, the i-th named name(i) with the body request(i)
// makes of that name, and answers their ids in order.
func (c Client) SubmitAll(ctx context.Context, n, workers int, name func(i int) string, request func(name string) map[string]any) ([]string, error) {
	ids := make([]string, n)
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				ids[i], errs[i] = c.Submit(ctx, name(i), request(name(i)))
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

// Submit posts request, with its name as the idempotency key as a careful client does, and
// answers the job's id.
func (c Client) Submit(ctx context.Context, name string, request map[string]any) (string, error) {
	code, body, err := c.Do(ctx, http.MethodPost, "/api/v1/jobs", request, map[string]string{"Idempotency-Key": name})
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

// JobRequest is the README's first job under name, in us-east-1's team-a with labels: one pod
// that meets the restricted profile and runs command, its pod template annotated with
// podAnnotations (nil for none).
func JobRequest(name string, labels, podAnnotations map[string]string, command ...string) map[string]any {
	container := map[string]any{
		"name": "main", "image": "busybox:1.36", "command": command,
		"securityContext": map[string]any{"allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []string{"ALL"}}},
	}
	pod := map[string]any{
		"restartPolicy":   "Never",
		"securityContext": map[string]any{"runAsNonRoot": true, "runAsUser": 1000, "seccompProfile": map[string]any{"type": "RuntimeDefault"}},
		"containers":      []any{container},
	}
	template := map[string]any{"spec": pod}
	if podAnnotations != nil {
		template["metadata"] = map[string]any{"annotations": podAnnotations}
	}
	return map[string]any{
		"region": "us-east-1", "namespace": "team-a", "priority": 70, "labels": labels,
		"manifest": map[string]any{
			"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": name},
			"spec": map[string]any{"template": template},
		},
	}
}

// WaitEnded polls the jobs labelled selector once a second until each of ids has ended, and
// answers each one's record as it ended. The poll's pace bounds only when the wait ends: the
// times on the records are their own.
func (c Client) WaitEnded(ctx context.Context, selector string, ids []string, deadline time.Time) (map[string]jobs.Job, error) {
	ended := map[string]jobs.Job{}
	for {
		for _, s := range []jobs.Status{jobs.StatusSucceeded, jobs.StatusFailed, jobs.StatusCancelled} {
			if err := c.listEnded(ctx, selector, s, ended); err != nil {
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

// listEnded adds the jobs labelled selector in status to ended.
func (c Client) listEnded(ctx context.Context, selector string, status jobs.Status, ended map[string]jobs.Job) error {
	cursor := ""
	for {
		q := url.Values{"status": {string(status)}, "label_selector": {selector}, "limit": {"1000"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		code, body, err := c.Do(ctx, http.MethodGet, "/api/v1/jobs?"+q.Encode(), nil, nil)
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
				ended[j.ID] = j
			}
		}
		if page.NextCursor == nil || *page.NextCursor == "" {
			return nil
		}
		cursor = *page.NextCursor
	}
}
