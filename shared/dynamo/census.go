package dynamo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tidegate/tidegate/shared/jobs"
)

// RegionCensus is what a region's drain last counted, by tenant, from the census it takes at most
// once a minute: each tenant's jobs waiting in the region's own queues, held there by their spot
// cap or backing off, and its jobs that may run in several regions and wait for one (the roaming queue). The queue stats show them and the API
// holds each tenant to its cap of queued jobs by them, so neither reads a queue whose length any
// tenant may grow.
type RegionCensus struct {
	Region string    `dynamodbav:"region"`
	At     time.Time `dynamodbav:"at"`
	// Queued is, by tenant, what the region's own queues (batch and long-running), held jobs and
	// jobs backing off hold of its jobs; a tenant with none there is left out.
	Queued map[string]Queued `dynamodbav:"queued,omitempty"`
	// Roaming counts, by tenant, the roaming jobs that allow the region.
	Roaming map[string]int `dynamodbav:"roaming,omitempty"`
	// RoamingAll counts, by tenant, every roaming job once, whatever regions it allows.
	RoamingAll map[string]int `dynamodbav:"roaming_all,omitempty"`
}

// Queued is what a census counted of one tenant's jobs waiting in a region: in its own queues,
// held by their spot cap or backing off.
type Queued struct {
	// Batch and LongRunning count its batch and long-running jobs.
	Batch       int `dynamodbav:"batch,omitempty"`
	LongRunning int `dynamodbav:"long_running,omitempty"`
	// Gated counts those of them that wait for their spot price (jobs.Job.SpotGated).
	Gated int `dynamodbav:"gated,omitempty"`
	// Caps are the spot price caps they wait with, by instance type, each type's lowest first; a
	// kept census holds at most censusCaps of them (compact).
	Caps map[string][]jobs.PriceCap `dynamodbav:"caps,omitempty"`
}

// Jobs is how many of the tenant's jobs wait in the region.
func (q Queued) Jobs() int { return q.Batch + q.LongRunning }

// Add is q and o counted together: the counts summed, and the jobs at a cap of one type added up.
func (q Queued) Add(o Queued) Queued {
	out := Queued{Batch: q.Batch + o.Batch, LongRunning: q.LongRunning + o.LongRunning, Gated: q.Gated + o.Gated}
	if len(q.Caps)+len(o.Caps) == 0 {
		return out
	}
	out.Caps = make(map[string][]jobs.PriceCap, len(q.Caps)+len(o.Caps))
	maps.Copy(out.Caps, q.Caps) // mergeCaps makes new lists: q's are not written to
	for typ, cs := range o.Caps {
		out.Caps[typ] = mergeCaps(out.Caps[typ], cs)
	}
	return out
}

// mergeCaps is the caps of a and b, each lowest first, as one list lowest first: the jobs at a
// cap both hold added up.
func mergeCaps(a, b []jobs.PriceCap) []jobs.PriceCap {
	out := make([]jobs.PriceCap, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		switch {
		case len(b) == 0 || len(a) > 0 && a[0].MaxPrice < b[0].MaxPrice:
			out, a = append(out, a[0]), a[1:]
		case len(a) == 0 || b[0].MaxPrice < a[0].MaxPrice:
			out, b = append(out, b[0]), b[1:]
		default:
			out, a, b = append(out, jobs.PriceCap{MaxPrice: a[0].MaxPrice, Jobs: a[0].Jobs + b[0].Jobs}), a[1:], b[1:]
		}
	}
	return out
}

// censusCaps bounds the caps a kept census holds of one tenant in a region, across its instance
// types: a tenant could give each of its jobs a cap of its own, and a census is one item, which
// DynamoDB holds to 400 KB for every tenant's figures together. A cap takes about 30 bytes there;
// 16 a tenant leaves room for several hundred tenants that each use all 16, and no one spreads
// its jobs over more caps than that to any purpose.
const censusCaps = 16

// compact is q with at most censusCaps of its caps, across types: those the most jobs wait with,
// the lower cap and then the type first among equals, so the queue stats show the caps that hold
// back most of the tenant's jobs.
func (q Queued) compact() Queued {
	type typed struct {
		typ string
		c   jobs.PriceCap
	}
	var all []typed
	for typ, cs := range q.Caps {
		for _, c := range cs {
			all = append(all, typed{typ, c})
		}
	}
	if len(all) <= censusCaps {
		return q
	}
	slices.SortFunc(all, func(a, b typed) int {
		return cmp.Or(-cmp.Compare(a.c.Jobs, b.c.Jobs), cmp.Compare(a.c.MaxPrice, b.c.MaxPrice), cmp.Compare(a.typ, b.typ))
	})
	q.Caps = map[string][]jobs.PriceCap{}
	for _, t := range all[:censusCaps] {
		q.Caps[t.typ] = mergeCaps(q.Caps[t.typ], []jobs.PriceCap{t.c})
	}
	return q
}

// censusKey is where region's census is kept in the control table.
func censusKey(region string) (string, string) { return "census#" + region, "roaming" }

type censusItem struct {
	PK string `dynamodbav:"pk"`
	SK string `dynamodbav:"sk"`
	RegionCensus
}

// PutCensus keeps c, replacing the region's last, with each tenant's caps compacted to
// censusCaps.
func (s *JobStore) PutCensus(ctx context.Context, c RegionCensus) error {
	pk, sk := censusKey(c.Region)
	c.At = c.At.UTC()
	if c.Queued != nil {
		queued := make(map[string]Queued, len(c.Queued))
		for t, q := range c.Queued {
			queued[t] = q.compact()
		}
		c.Queued = queued
	}
	item, err := attributevalue.MarshalMap(censusItem{PK: pk, SK: sk, RegionCensus: c})
	if err != nil {
		return fmt.Errorf("encoding %s's census: %w", c.Region, err)
	}
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.tables.Control, Item: item}); err != nil {
		return fmt.Errorf("keeping %s's census: %w", c.Region, err)
	}
	return nil
}

// Censuses reads the censuses of regions (at most statesPerRead) in one BatchGetItem, by region;
// a region whose drains never kept one is left out.
func (s *JobStore) Censuses(ctx context.Context, regions []string) (map[string]RegionCensus, error) {
	items, err := controlItems[censusItem](ctx, s, regions, censusKey, "censuses")
	if err != nil {
		return nil, err
	}
	out := make(map[string]RegionCensus, len(items))
	for _, it := range items {
		out[it.Region] = it.RegionCensus
	}
	return out, nil
}

// Waiting reports which of regions have a job waiting there (in any of WaitingQueues: their
// queues, or apart), and whether any job waits for a region among several, counting
// at most one item of each, all at once. Where none waits, what a census counted there has left
// since: a drain takes no census once its queues are empty, as nothing rings it, so only this
// tells a census's figures from an emptied queue.
func (s *JobStore) Waiting(ctx context.Context, regions []string) (map[string]bool, bool, error) {
	queues := []Queue{RoamingQueue}
	for _, r := range regions {
		queues = append(queues, WaitingQueues(r)...)
	}
	held := make([]bool, len(queues))
	errs := make([]error, len(queues))
	var wg sync.WaitGroup
	for i, q := range queues {
		wg.Go(func() { held[i], errs[i] = s.hasAny(ctx, string(q)) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, false, fmt.Errorf("looking for queued jobs: %w", err)
	}
	out := make(map[string]bool, len(regions))
	n := len(queues[1:]) / max(len(regions), 1) // each region's partitions, in order
	for i, r := range regions {
		out[r] = slices.Contains(held[1+n*i:1+n*(i+1)], true)
	}
	return out, held[0], nil
}
