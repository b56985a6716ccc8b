package dynamo

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tidegate/tidegate/shared/jobs"
)

// Queue is one gsi2 partition of queued jobs, kept in dispatch order (highest priority first,
// then oldest): a drain reads it page by page, only as far as it needs.
type Queue string

// RegionQueue is region's own queue of jobs that hold a slot when they run.
func RegionQueue(region string) Queue { return Queue("queue#" + region) }

// LongRunningQueue is region's queue of long-running jobs (Deployments', StatefulSets'): apart,
// so that a drain of a region whose slots are full, where only a slot-free long-running job may
// still start, reads them without reading the batch jobs that wait for a slot.
func LongRunningQueue(region string) Queue { return Queue("queue#" + region + longRunningSuffix) }

// HeldQueue is region's jobs held by their spot cap (Held), apart from its queues, by instance
// type and cap: read only through HeldPage, for a type whose price has come down.
func HeldQueue(region string) Queue { return Queue("held#" + region) }

// BackoffQueue is region's jobs waiting out a retry's backoff (BackingOff), apart from its
// queues, by when it ends: read only through BackoffPage, once it has.
func BackoffQueue(region string) Queue { return Queue("backoff#" + region) }

// LongHeldQueue is region's long-running jobs whose tenant has as many active there as it may
// (LongHeld), apart from its queues, by tenant: read only through LongHeldPage, for a tenant
// below its limit again.
func LongHeldQueue(region string) Queue { return Queue("lrheld#" + region) }

// WaitingQueues are every gsi2 partition of region's own queued jobs: its queues and the jobs
// waiting apart (held by their price, backing off, at their tenant's long-running limit).
func WaitingQueues(region string) []Queue {
	return []Queue{RegionQueue(region), LongRunningQueue(region), HeldQueue(region), BackoffQueue(region), LongHeldQueue(region)}
}

// RoamingQueue is the queue of jobs that wait for a region among several: every region's drain
// reads it beside its own.
const RoamingQueue Queue = roamingQueue

// longRunningSuffix marks a region's long-running queue; '#' is in no region's name.
const longRunningSuffix = "#lr"

// QueuePage is one page of a queue.
type QueuePage struct {
	Jobs []jobs.Job // without manifests, in dispatch order
	// Keys are each job's place in dispatch order, one for one with Jobs: strings that sort as
	// the jobs dispatch, the same across every queue, so a drain merges its queues by them.
	Keys []string
	// Next is where the next page starts, the last key read; "" when the queue was read to its end.
	Next string
}

// keyedJob is a queue's item with its place in it.
type keyedJob struct {
	jobs.Job
	Key string `dynamodbav:"gsi2sk"`
}

// QueuePage reads at most limit jobs of q after the key after ("" from the start). A page of
// the roaming queue reads its ids there and the jobs themselves by BatchGetItem (gsi2 does not
// project a job's regions), leaving out a job claimed since.
func (s *JobStore) QueuePage(ctx context.Context, q Queue, after string, limit int) (QueuePage, error) {
	attrs := summaryAttrs + ", gsi2sk"
	if q == RoamingQueue {
		attrs = "id, gsi2sk"
	}
	in := &dynamodb.QueryInput{
		TableName: &s.tables.Jobs, IndexName: aws.String(indexGSI2),
		KeyConditionExpression:    aws.String("gsi2pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: string(q)}},
		ProjectionExpression:      &attrs,
		Limit:                     aws.Int32(int32(max(limit, 1))),
	}
	if q != RoamingQueue {
		in.ExpressionAttributeNames = summaryNames
	}
	if after != "" {
		in.KeyConditionExpression = aws.String("gsi2pk = :pk AND gsi2sk > :after")
		in.ExpressionAttributeValues[":after"] = &types.AttributeValueMemberS{Value: after}
	}
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return QueuePage{}, fmt.Errorf("reading a page of %s: %w", q, err)
	}
	var items []keyedJob
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
		return QueuePage{}, fmt.Errorf("decoding a page of %s: %w", q, err)
	}
	var page QueuePage
	if len(out.LastEvaluatedKey) > 0 && len(items) > 0 {
		page.Next = items[len(items)-1].Key
	}
	if q == RoamingQueue {
		items, err = s.roamers(ctx, items)
		if err != nil {
			return QueuePage{}, err
		}
	}
	for _, it := range items {
		page.Jobs, page.Keys = append(page.Jobs, it.Job), append(page.Keys, it.Key)
	}
	return page, nil
}

// roamers reads the roaming jobs listed (at most statesPerRead: a page is smaller), keeping
// their order and keys and leaving out those no longer queued for a region among several.
func (s *JobStore) roamers(ctx context.Context, listed []keyedJob) ([]keyedJob, error) {
	if len(listed) == 0 {
		return nil, nil
	}
	ids := make([]string, len(listed))
	for i, it := range listed {
		ids[i] = it.ID
	}
	names := maps.Clone(summaryNames)
	names["#regions"] = "regions"
	read, err := s.readJobs(ctx, ids, summaryAttrs+", #regions, region_choice", names)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]jobs.Job, len(read))
	for _, j := range read {
		byID[j.ID] = j
	}
	var out []keyedJob
	for _, it := range listed {
		if j, ok := byID[it.ID]; ok && j.Status == jobs.StatusQueued && j.Roaming() {
			out = append(out, keyedJob{Job: j, Key: it.Key})
		}
	}
	return out, nil
}

// Census is what a queue's whole read says of it: how many jobs wait, since when the oldest, the
// instance types its capped jobs wait for, and what it holds of each tenant's jobs.
type Census struct {
	Jobs   int
	Oldest time.Time // zero when none waits
	Types  []string  // in the order first met
	// Tenants is, by tenant, what the queue holds of its jobs, each in Batch or LongRunning by its
	// kind (a region's held jobs and those backing off are of both).
	Tenants map[string]Queued
	// LongHeld are the tenants with long-running jobs held at their limit (LongHeldQueue), whom a
	// drain reads again once one is below it.
	LongHeld []string
}

// Census counts q's jobs, in all and by tenant, and finds its oldest and their capped types,
// reading every item of it projected to its tenant, kind, creation time, cap and pending reason: a
// read that grows with the queue, which drains take at most once a minute. Each page starts after the
// last key read by a key condition, as QueuePage's do.
func (s *JobStore) Census(ctx context.Context, q Queue) (Census, error) {
	c := Census{Tenants: map[string]Queued{}}
	caps := map[string]map[string]map[float64]int{} // tenant, instance type, cap: jobs
	after := ""
	for {
		in := &dynamodb.QueryInput{
			TableName: &s.tables.Jobs, IndexName: aws.String(indexGSI2),
			KeyConditionExpression:    aws.String("gsi2pk = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: string(q)}},
			ProjectionExpression:      aws.String("tenant, kind, created_at, gsi2sk, spot, pending_reason"),
		}
		if after != "" {
			in.KeyConditionExpression = aws.String("gsi2pk = :pk AND gsi2sk > :after")
			in.ExpressionAttributeValues[":after"] = &types.AttributeValueMemberS{Value: after}
		}
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return Census{}, fmt.Errorf("counting %s: %w", q, err)
		}
		var items []keyedJob
		if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
			return Census{}, fmt.Errorf("decoding %s: %w", q, err)
		}
		c.Jobs += len(items)
		for _, it := range items {
			if c.Oldest.IsZero() || it.CreatedAt.Before(c.Oldest) {
				c.Oldest = it.CreatedAt
			}
			if it.Spot != nil && !slices.Contains(c.Types, it.Spot.InstanceType) {
				c.Types = append(c.Types, it.Spot.InstanceType)
			}
			c.Tenants[it.Tenant] = c.Tenants[it.Tenant].count(it.Job)
			if sp := it.Spot; sp != nil {
				if caps[it.Tenant] == nil {
					caps[it.Tenant] = map[string]map[float64]int{}
				}
				if caps[it.Tenant][sp.InstanceType] == nil {
					caps[it.Tenant][sp.InstanceType] = map[float64]int{}
				}
				caps[it.Tenant][sp.InstanceType][sp.MaxPrice]++
			}
		}
		if len(out.LastEvaluatedKey) == 0 || len(items) == 0 {
			for t, byType := range caps {
				q := c.Tenants[t]
				q.Caps = capLists(byType)
				c.Tenants[t] = q
			}
			return c, nil
		}
		after = items[len(items)-1].Key
	}
}

// count is q with the queued job j counted, in LongRunning or Batch by its kind; its cap is
// tallied apart (capLists), by a map, since a tenant may give every job a cap of its own.
func (q Queued) count(j jobs.Job) Queued {
	if j.LongRunning() {
		q.LongRunning++
	} else {
		q.Batch++
	}
	if j.SpotGated() {
		q.Gated++
	}
	return q
}

// capLists are the jobs at each cap, by instance type, as lists lowest cap first.
func capLists(byType map[string]map[float64]int) map[string][]jobs.PriceCap {
	out := make(map[string][]jobs.PriceCap, len(byType))
	for typ, byCap := range byType {
		for _, p := range slices.Sorted(maps.Keys(byCap)) {
			out[typ] = append(out[typ], jobs.PriceCap{MaxPrice: p, Jobs: byCap[p]})
		}
	}
	return out
}

// PositionCounted is how many jobs ahead QueuePosition counts at most: about 370 read units and a
// few pages; a job further back is answered PositionCounted+1, meaning at least that.
const PositionCounted = 10_000

// QueuePosition is queued job j's place in its queue, from 1: one more than the jobs ahead of it
// in dispatch order, counted when asked (a read that grows with the place, about 27 jobs ahead
// a read unit, up to PositionCounted), so no drain writes every waiting job's place as the queue
// moves. 0 for a job not queued.
func (s *JobStore) QueuePosition(ctx context.Context, j jobs.Job) (int, error) {
	pk, sk := queueKeys(j)
	if j.Status != jobs.StatusQueued || pk == "" {
		return 0, nil
	}
	if pk == string(HeldQueue(j.Region)) || pk == string(BackoffQueue(j.Region)) {
		// Its place among the jobs the drains read, as if nothing held it.
		pk, sk = string(RegionQueue(j.Region)), dispatchSort(j)
	}
	if pk == string(LongHeldQueue(j.Region)) {
		pk, sk = string(LongRunningQueue(j.Region)), dispatchSort(j)
	}
	in := &dynamodb.QueryInput{
		TableName: &s.tables.Jobs, IndexName: aws.String(indexGSI2), Select: types.SelectCount,
		KeyConditionExpression: aws.String("gsi2pk = :pk AND gsi2sk < :sk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: pk}, ":sk": &types.AttributeValueMemberS{Value: sk}},
		Limit: aws.Int32(PositionCounted),
	}
	ahead := 0
	for {
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return 0, fmt.Errorf("counting the jobs ahead of %s: %w", j.ID, err)
		}
		ahead += int(page.Count)
		if len(page.LastEvaluatedKey) == 0 || ahead >= PositionCounted {
			return min(ahead, PositionCounted) + 1, nil
		}
		in.ExclusiveStartKey, in.Limit = page.LastEvaluatedKey, aws.Int32(int32(PositionCounted-ahead))
	}
}

// HeldPage reads at most limit of region's jobs held by their cap on instanceType whose cap is
// at or above price, after the held key after ("" from the first): those the price allows now,
// highest cap first. Keys are their places in dispatch order, as QueuePage's, so a drain merges
// them with its queues; Next is the held key to go on from.
func (s *JobStore) HeldPage(ctx context.Context, region, instanceType string, price float64, after string, limit int) (QueuePage, error) {
	// '~' sorts after '#' and every digit: the bound takes every dispatch key of the last cap.
	return s.apartPage(ctx, HeldQueue(region), instanceType+"#", instanceType+"#"+capSort(price)+"#~", after, limit,
		"the jobs held on "+instanceType+" in "+region)
}

// BackoffPage reads at most limit of region's jobs whose retry's backoff is over at now, after
// the backoff key after ("" from the first), soonest over first. Keys are their places in
// dispatch order, as QueuePage's; Next is the backoff key to go on from.
func (s *JobStore) BackoffPage(ctx context.Context, region string, now time.Time, after string, limit int) (QueuePage, error) {
	// Every backoff key starts with a digit; '~' sorts after '#': the bound takes every job whose
	// backoff ends at now.
	return s.apartPage(ctx, BackoffQueue(region), "0", fmt.Sprintf("%019d#~", now.UnixNano()), after, limit,
		"the jobs backing off in "+region)
}

// LongHeldPage reads at most limit of region's long-running jobs of tenant held at its limit, in
// dispatch order, after the key after ("" from the first). Keys are their places in dispatch
// order, as QueuePage's; Next is the key to go on from.
func (s *JobStore) LongHeldPage(ctx context.Context, region, tenant, after string, limit int) (QueuePage, error) {
	return s.apartPage(ctx, LongHeldQueue(region), tenant+"#", tenant+"#~", after, limit,
		tenant+"'s long-running jobs held in "+region)
}

// apartPage reads at most limit of the jobs waiting apart in q whose keys lie between from and to
// (both included), going on from the key after where it is set ("" from from). Keys are their
// places in dispatch order; Next is q's key to go on from. what names them in an error.
func (s *JobStore) apartPage(ctx context.Context, q Queue, from, to, after string, limit int, what string) (QueuePage, error) {
	if after != "" {
		from = after
	}
	attrs := summaryAttrs + ", gsi2sk"
	in := &dynamodb.QueryInput{
		TableName: &s.tables.Jobs, IndexName: aws.String(indexGSI2),
		KeyConditionExpression: aws.String("gsi2pk = :pk AND gsi2sk BETWEEN :from AND :to"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk":   &types.AttributeValueMemberS{Value: string(q)},
			":from": &types.AttributeValueMemberS{Value: from}, ":to": &types.AttributeValueMemberS{Value: to}},
		ProjectionExpression: &attrs, ExpressionAttributeNames: summaryNames,
		Limit: aws.Int32(int32(max(limit, 1))),
	}
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return QueuePage{}, fmt.Errorf("reading %s: %w", what, err)
	}
	var items []keyedJob
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
		return QueuePage{}, fmt.Errorf("decoding %s: %w", what, err)
	}
	var page QueuePage
	for _, it := range items {
		if after != "" && it.Key == after {
			continue // BETWEEN includes where it starts
		}
		page.Jobs, page.Keys = append(page.Jobs, it.Job), append(page.Keys, dispatchSort(it.Job))
	}
	if len(out.LastEvaluatedKey) > 0 && len(items) > 0 {
		page.Next = items[len(items)-1].Key
	}
	return page, nil
}

// AheadCounted is how many jobs ahead Ahead reads at most: their tenants and demands, a few
// hundred read units; a job further back is told the demand of these alone.
const AheadCounted = 5_000

// Waiting is a job ahead of another in a queue, as Ahead reads it: whose it is and what it asks.
type Waiting struct {
	Tenant string            `dynamodbav:"tenant"`
	Demand map[string]string `dynamodbav:"demand"`
}

// Ahead reads the jobs ahead of queued job j in its region's queue in dispatch order (for a job
// of several regions, region's queue ahead of its place), at most AheadCounted; all says whether
// every one was read.
func (s *JobStore) Ahead(ctx context.Context, j jobs.Job, region string) (ahead []Waiting, all bool, err error) {
	pk, sk := string(RegionQueue(region)), dispatchSort(j)
	if qpk, qsk := queueKeys(j); !j.Roaming() && qpk == string(LongRunningQueue(region)) {
		pk, sk = qpk, qsk
	}
	in := &dynamodb.QueryInput{
		TableName: &s.tables.Jobs, IndexName: aws.String(indexGSI2),
		KeyConditionExpression: aws.String("gsi2pk = :pk AND gsi2sk < :sk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: pk}, ":sk": &types.AttributeValueMemberS{Value: sk}},
		ProjectionExpression: aws.String("tenant, demand"),
		Limit:                aws.Int32(AheadCounted),
	}
	for {
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, false, fmt.Errorf("reading the jobs ahead of %s: %w", j.ID, err)
		}
		var got []Waiting
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &got); err != nil {
			return nil, false, fmt.Errorf("decoding the jobs ahead of %s: %w", j.ID, err)
		}
		ahead = append(ahead, got...)
		if len(page.LastEvaluatedKey) == 0 {
			return ahead, true, nil
		}
		if len(ahead) >= AheadCounted {
			return ahead[:AheadCounted], false, nil
		}
		in.ExclusiveStartKey, in.Limit = page.LastEvaluatedKey, aws.Int32(int32(AheadCounted-len(ahead)))
	}
}
