package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/tidegate/tidegate/shared/signing"
)

// receiver is the webhook's loopback endpoint: it takes every delivery and notes, by job, the
// events it has had (a delivery attempted twice is noted once).
type receiver struct {
	srv        *http.Server
	addr       string
	mu         sync.Mutex
	seen       map[string]map[string]bool // job id → event types
	deliveries int
	failed     int
}

func startReceiver() (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the webhook: %w", err)
	}
	r := &receiver{addr: ln.Addr().String(), seen: map[string]map[string]bool{}}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.take), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

func (r *receiver) url() string { return "http://" + r.addr + "/hook" }

func (r *receiver) take(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	var ev struct {
		Type string `json:"type"`
		Data struct {
			JobID string `json:"job_id"`
		} `json:"data"`
	}
	if req.Header.Get(signing.HeaderSignature) == "" || json.Unmarshal(body, &ev) != nil || ev.Data.JobID == "" {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.deliveries++
	if ev.Type == "job.failed" {
		r.failed++
	}
	if r.seen[ev.Data.JobID] == nil {
		r.seen[ev.Data.JobID] = map[string]bool{}
	}
	r.seen[ev.Data.JobID][ev.Type] = true
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// waitAll waits until every job in ids has had each of jobEvents, and fails at once if one failed.
func (r *receiver) waitAll(ctx context.Context, ids []string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		missing, failed := r.missing(ids)
		switch {
		case failed > 0:
			return fmt.Errorf("%d jobs failed; the run counts jobs that succeed", failed)
		case missing == 0:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("%d of %d events not delivered within %s", missing, len(ids)*len(jobEvents), timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (r *receiver) missing(ids []string) (missing, failed int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		for _, e := range jobEvents {
			if !r.seen[id][e] {
				missing++
			}
		}
	}
	return missing, r.failed
}

// counts is how many deliveries the receiver has taken, attempts of one event counted each.
func (r *receiver) counts() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.deliveries
}

func (r *receiver) Close() { _ = r.srv.Close() }
