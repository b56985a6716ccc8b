package dynamo

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tidegate/tidegate/shared/jobs"
)

// summaryAttrs are what a drain or a reconcile needs of a job: everything but its manifests.
var summaryAttrs = "id, tenant, #ns, #region, priority, labels, #status, created_at, updated_at, gpus, podless, spot, pending_reason, pending_resource, queue_position, spot_gate, claim, kind, not_before, demand, node_selector, flavor, attempt, shield, dispatched_at, memory_factor"

var summaryNames = map[string]string{"#ns": "namespace", "#region": "region", "#status": "status"}

// Active reads every job of region that holds capacity: dispatching, pending or running.
func (s *JobStore) Active(ctx context.Context, region string) ([]jobs.Job, error) {
	return s.byActive(ctx, region, "", summaryAttrs)
}

// activeShards spread a region's active jobs over that many gsi2 partitions: a beat reads them at
// once rather than page after page of one, and no one partition takes every state change of a
// busy region (DynamoDB caps each partition's writes).
const activeShards = 4

// activeKey is the gsi2 partition of region's active job id: one of activeShards, by the id's hash.
func activeKey(region, id string) string {
	h := fnv.New32a()
	h.Write([]byte(id))
	return "active#" + region + "#" + strconv.Itoa(int(h.Sum32()%activeShards))
}

// byActive reads every shard of region's active jobs at once (with below set, those whose sort
// key is less), and answers them in id order.
func (s *JobStore) byActive(ctx context.Context, region, below, attrs string) ([]jobs.Job, error) {
	parts := make([][]jobs.Job, activeShards)
	errs := make([]error, activeShards)
	var wg sync.WaitGroup
	for i := range activeShards {
		wg.Go(func() {
			parts[i], errs[i] = s.query(ctx, "active#"+region+"#"+strconv.Itoa(i), below, attrs)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := slices.Concat(parts...)
	slices.SortFunc(out, func(a, b jobs.Job) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// stateAttrs are what following a job needs to decide whether it changed, and its namespace,
// where a beat reads the pods of the jobs it sees end (all in gsi2's projection, and a read's
// units are the item's whole size whatever it projects).
const stateAttrs = "id, #ns, #region, #status, claim, podless, kind, attempt"

// readyAttrs are what the beat judges a dispatched job's pods by besides its state (jobs.Ready):
// read by States from the table, not from gsi2, whose projection holds none of them.
const readyAttrs = ", ready_timeout, ready_timeouts, pods_ready, demand, status_history"

// dueAttrs mark an end whose details the beat is still to add (jobs.Job.DetailsDue), which
// States reads with the rest: only an ended job has it, and no index projects it.
const dueAttrs = ", details_due"

// ActiveStates reads region's active jobs with only their id, namespace, region, status, claim,
// podless flag, kind and attempt. Read the whole job (Job) to change one.
func (s *JobStore) ActiveStates(ctx context.Context, region string) ([]jobs.Job, error) {
	return s.byActive(ctx, region, "", stateAttrs)
}

// Unlisted reads, as ActiveStates does, the active jobs of region that no LIST of its cluster
// shows: claims and podless jobs (and any record stored before the active sort keys, until it
// next moves). A beat where nothing changed reads no other record.
func (s *JobStore) Unlisted(ctx context.Context, region string) ([]jobs.Job, error) {
	return s.byActive(ctx, region, runSort, stateAttrs)
}

// States reads the records of ids as ActiveStates does (id, namespace, region, status, claim, podless),
// with what jobs.Ready judges besides, whatever their status, with consistent reads; an id without a record is left out. At most
// statesPerRead ids a call, a few calls at once. An id given twice is read once (BatchGetItem
// refuses a call that names a key twice).
func (s *JobStore) States(ctx context.Context, ids []string) ([]jobs.Job, error) {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	return inChunks(ids, statesPerRead, func(chunk []string) ([]jobs.Job, error) {
		return s.readJobs(ctx, chunk, stateAttrs+readyAttrs+dueAttrs, summaryNames)
	})
}

// Records reads the whole records of ids, as Job does, with consistent reads: a hundred a
// BatchGetItem, a few calls at once, so that the ends a watch sees together cost one read. An id
// without a record (or whose record expired) is left out.
func (s *JobStore) Records(ctx context.Context, ids []string) ([]jobs.Job, error) {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	return inChunks(ids, statesPerRead, func(chunk []string) ([]jobs.Job, error) {
		keys := make([]map[string]types.AttributeValue, len(chunk))
		for i, id := range chunk {
			keys[i] = keyOf(jobKey(id))
		}
		items, err := batchGet[jobItem](ctx, s.db, s.tables.Jobs, keys, types.KeysAndAttributes{ConsistentRead: aws.Bool(true)})
		if err != nil {
			return nil, fmt.Errorf("reading %d jobs: %w", len(chunk), err)
		}
		out := make([]jobs.Job, 0, len(items))
		for _, it := range items {
			if expired(it.Expires, s.now()) {
				continue
			}
			j, err := unpackJob(it)
			if err != nil {
				return nil, err
			}
			out = append(out, j)
		}
		return out, nil
	})
}

// readJobs reads the records of ids (at most statesPerRead) projected to attrs, whose #names
// are names, with consistent reads; an id without a record is left out.
func (s *JobStore) readJobs(ctx context.Context, ids []string, attrs string, names map[string]string) ([]jobs.Job, error) {
	keys := make([]map[string]types.AttributeValue, len(ids))
	for i, id := range ids {
		keys[i] = keyOf(jobKey(id))
	}
	out, err := batchGet[jobs.Job](ctx, s.db, s.tables.Jobs, keys, types.KeysAndAttributes{
		ConsistentRead: aws.Bool(true), ProjectionExpression: aws.String(attrs), ExpressionAttributeNames: names,
	})
	if err != nil {
		return nil, fmt.Errorf("reading %d jobs' states: %w", len(ids), err)
	}
	return out, nil
}

func (s *JobStore) byQueueKey(ctx context.Context, pk, attrs string) ([]jobs.Job, error) {
	return s.query(ctx, pk, "", attrs)
}

// query reads every page of gsi2's partition pk, projected to attrs; with below set, only the
// items whose sort key is less.
func (s *JobStore) query(ctx context.Context, pk, below, attrs string) ([]jobs.Job, error) {
	var names map[string]string // DynamoDB refuses an empty one
	for k, v := range summaryNames {
		if strings.Contains(attrs, k) {
			if names == nil {
				names = map[string]string{}
			}
			names[k] = v
		}
	}
	q := &dynamodb.QueryInput{
		TableName: &s.tables.Jobs, IndexName: aws.String(indexGSI2),
		KeyConditionExpression:    aws.String("gsi2pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}},
		ProjectionExpression:      &attrs,
		ExpressionAttributeNames:  names,
	}
	if below != "" {
		q.KeyConditionExpression = aws.String("gsi2pk = :pk AND gsi2sk < :below")
		q.ExpressionAttributeValues[":below"] = &types.AttributeValueMemberS{Value: below}
	}
	p := dynamodb.NewQueryPaginator(s.db, q)
	var out []jobs.Job
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", pk, err)
		}
		var items []jobs.Job
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &items); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", pk, err)
		}
		out = append(out, items...)
	}
	return out, nil
}
