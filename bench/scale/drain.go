package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/tidegate/tidegate/shared/dispatch"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/spotgate"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// room is the free slots of the drains with room, and full the active jobs that fill a region.
const (
	room = 10
	full = 10
)

// loaders are how many BatchWriteItem calls load at once.
const loaders = 4

// drains loads n queued jobs over tenants tenants and both regions, and full running jobs in
// east, and measures five drains of east: the first of a process (which counts the whole queue
// for its gauges, once a minute), one of the full region, one with room for ten more jobs, and
// two with room for ten more under quotas (a default share for every tenant); then the place in
// line of the last queued job of east, as GET /api/v1/jobs/{id} counts it.
func (e *env) drains(ctx context.Context, n int) ([]row, error) {
	name := fmt.Sprintf("q%d", n)
	t, drop, err := e.tables(ctx, name)
	if err != nil {
		return nil, err
	}
	defer drop()
	ns, dropNS, err := e.namespace(ctx, name)
	if err != nil {
		return nil, err
	}
	defer dropNS()
	store := dynamo.NewJobStore(e.db, t)
	progress("loading %d queued jobs", n)
	loadStart := time.Now()
	queued := queuedJobs(ns, n)
	if err := load(ctx, store, queued); err != nil {
		return nil, err
	}
	if err := load(ctx, store, runningJobs(ns, full, east)); err != nil {
		return nil, err
	}
	progress("loaded in %s", time.Since(loadStart).Round(time.Millisecond))

	capacity := full
	h := &dispatch.Handler{
		Regions: map[string]string{east: "sandbox", west: "sandbox"}, Capacity: func(string) int { return capacity },
		Store: store, Leases: dynamo.NewLeaseStore(e.db, t.Control), Prices: noPrices{}, Clusters: e.clusters,
		Log: e.log, Now: time.Now,
	}
	var rows []row
	step := func(op string) error {
		r, err := e.measure(op, "queued", n, func() error { return h.Drain(ctx, east) })
		rows = append(rows, r)
		return err
	}
	if err := step("drain: the minute's first, full region (census)"); err != nil {
		return rows, err
	}
	if err := step("drain: full region"); err != nil {
		return rows, err
	}
	capacity = full + room
	if err := step("drain: room for 10"); err != nil {
		return rows, err
	}
	capacity = full + 2*room
	h.Tenants, h.DefaultQuota = dynamo.NewTenantStore(e.db, t.Control), tenancy.Quota{Jobs: full}
	if err := step("drain: room for 10, quotas"); err != nil {
		return rows, err
	}
	// The first drain under quotas writes why each job it read waits; the next writes only what changed.
	capacity = full + 3*room
	if err := step("drain: room for 10, quotas, again"); err != nil {
		return rows, err
	}
	last := lastInLine(queued, east)
	r, err := e.measure("position of the last in line, counted when asked", "queued", n, func() error {
		p, err := store.QueuePosition(ctx, last)
		if want := min(n/regions-4*room, dynamo.PositionCounted+1); err == nil && p < want {
			err = fmt.Errorf("the last queued job of %s is %d in line, want at least %d", east, p, want)
		}
		return err
	})
	return append(rows, r), err
}

// lastInLine is the job of region that dispatches last among js: the lowest priority, newest.
func lastInLine(js []jobs.Job, region string) jobs.Job {
	var out jobs.Job
	for _, j := range js {
		if j.Region != region {
			continue
		}
		if out.ID == "" || j.Priority < out.Priority || j.Priority == out.Priority && j.CreatedAt.After(out.CreatedAt) {
			out = j
		}
	}
	return out
}

// queuedJobs are n queued jobs of tenants tenants, half in each region, of random priorities,
// created over the last day, each a busybox Job in ns.
func queuedJobs(ns string, n int) []jobs.Job {
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	now := time.Now()
	out := make([]jobs.Job, n)
	for i := range out {
		reg := []string{east, west}[i%regions]
		name := fmt.Sprintf("q-%06d", i)
		at := now.Add(-time.Duration(rng.Int64N(int64(24 * time.Hour))))
		out[i] = jobs.New("job-"+name, fmt.Sprintf("tenant-%02d", i%tenants), ns, reg, rng.IntN(jobs.MaxPriority+1), nil,
			[]map[string]any{batchJob(ns, name, "1h")}, at)
	}
	return out
}

// runningJobs are n jobs running in region (in their records: no cluster holds them).
func runningJobs(ns string, n int, region string) []jobs.Job {
	out := make([]jobs.Job, n)
	for i := range out {
		name := fmt.Sprintf("r-%06d", i)
		j := jobs.New("job-"+name, "tenant-00", ns, region, 50, nil, []map[string]any{batchJob(ns, name, "1h")}, time.Now())
		j.Status = jobs.StatusRunning
		out[i] = j
	}
	return out
}

// batchJob is a restricted busybox Job named name in ns, whose pod the sandbox runs for delay.
func batchJob(ns, name, delay string) map[string]any {
	return map[string]any{
		"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{"backoffLimit": 0, "template": map[string]any{
			"metadata": map[string]any{"annotations": map[string]any{delayAnnotation: delay}},
			"spec": map[string]any{
				"restartPolicy":   "Never",
				"securityContext": map[string]any{"runAsNonRoot": true, "runAsUser": 1000, "seccompProfile": map[string]any{"type": "RuntimeDefault"}},
				"containers": []any{map[string]any{"name": "main", "image": "busybox:1.36", "securityContext": map[string]any{
					"allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []any{"ALL"}}}}},
			}}},
	}
}

// delayAnnotation is how long the sandbox's kwok runs a pod before it completes
// (shared/dev/sandbox/stages/pod-complete.yaml).
const delayAnnotation = "pod-complete.stage.kwok.x-k8s.io/delay"

// load writes js with loaders BatchWriteItem streams at once.
func load(ctx context.Context, s *dynamo.JobStore, js []jobs.Job) error {
	parts := slices.Collect(slices.Chunk(js, max(len(js)/loaders, 1)))
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i, p := range parts {
		wg.Go(func() { errs[i] = s.Load(ctx, p) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// noPrices observes no spot price: the jobs here set no price cap.
type noPrices struct{}

func (noPrices) Observe(context.Context, string, string, time.Time) spotgate.Observation {
	return spotgate.Observation{}
}
