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

// roamingQueue is gsi2's partition of the queued jobs that may run in several regions and have
// not been given one: every region's drain reads it beside its own queue. "*" is in no region's
// name, so it is no region's queue.
const roamingQueue = "queue#*"

// Roaming reads every queued job that waits for a region among several, in dispatch order,
// without manifests. gsi2 does not project a job's regions (adding an attribute to an index's
// projection means building the index again), so its ids are read there and the jobs themselves
// by BatchGetItem, statesPerRead at a time, a few calls at once; a job claimed since the index
// was read is left out.
func (s *JobStore) Roaming(ctx context.Context) ([]jobs.Job, error) {
	listed, err := s.byQueueKey(ctx, roamingQueue, "id")
	if err != nil {
		return nil, err
	}
	order := make(map[string]int, len(listed))
	for i, j := range listed {
		order[j.ID] = i
	}
	names := maps.Clone(summaryNames)
	names["#regions"] = "regions"
	read, err := inChunks(slices.Collect(maps.Keys(order)), statesPerRead, func(chunk []string) ([]jobs.Job, error) {
		return s.readJobs(ctx, chunk, summaryAttrs+", #regions, region_choice", names)
	})
	if err != nil {
		return nil, err
	}
	out := slices.DeleteFunc(read, func(j jobs.Job) bool { return j.Status != jobs.StatusQueued || !j.Roaming() })
	slices.SortFunc(out, func(a, b jobs.Job) int { return order[a.ID] - order[b.ID] })
	return out, nil
}

// ClaimIn takes roaming job id for dispatch in region, as Claim takes a queued job, recording the
// region and why it was chosen in the same conditional update: it holds only while the job is
// queued, still has no region and allows this one, so of two regions' drains one wins.
// records.ErrStale when another took it or it has moved on.
func (s *JobStore) ClaimIn(ctx context.Context, id, region, flavor string, why jobs.RegionChoice, token string, now, until time.Time) (jobs.Job, error) {
	claim := jobs.Claim{Token: token, Until: until.UTC(), Flavor: flavor}
	queued := jobs.Job{ID: id, Status: jobs.StatusQueued}
	_, c, err := jobs.Move(queued, jobs.StatusDispatching, "", now)
	if err != nil {
		return jobs.Job{}, err
	}
	why.Region, why.At = region, now.UTC()
	c.NewClaim, c.Region, c.RegionChoice = &claim, region, &why
	item, err := s.apply(ctx, queued, c, types.ReturnValueAllNew)
	if err != nil {
		return jobs.Job{}, err
	}
	return decodeJob(item)
}

// regionSummaryKey is where region's summary is kept in the control table.
func regionSummaryKey(region string) (string, string) { return "regionsummary#" + region, "summary" }

type regionSummaryItem struct {
	PK string `dynamodbav:"pk"`
	SK string `dynamodbav:"sk"`
	jobs.RegionSummary
}

// PutRegionSummary keeps what a region's drain saw of it, for other regions' drains.
func (s *JobStore) PutRegionSummary(ctx context.Context, sum jobs.RegionSummary) error {
	pk, sk := regionSummaryKey(sum.Region)
	sum.At = sum.At.UTC()
	item, err := attributevalue.MarshalMap(regionSummaryItem{PK: pk, SK: sk, RegionSummary: sum})
	if err != nil {
		return fmt.Errorf("encoding %s's summary: %w", sum.Region, err)
	}
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.tables.Control, Item: item}); err != nil {
		return fmt.Errorf("keeping %s's summary: %w", sum.Region, err)
	}
	return nil
}

// RegionSummaries reads the summaries of regions (at most statesPerRead) in one BatchGetItem, by
// region; a region whose drain never kept one is left out.
func (s *JobStore) RegionSummaries(ctx context.Context, regions []string) (map[string]jobs.RegionSummary, error) {
	items, err := controlItems[regionSummaryItem](ctx, s, regions, regionSummaryKey, "summaries")
	if err != nil {
		return nil, err
	}
	out := make(map[string]jobs.RegionSummary, len(items))
	for _, it := range items {
		out[it.Region] = it.RegionSummary
	}
	return out, nil
}

// controlItems reads the control table's items of regions (at most statesPerRead), each at
// key(region), with BatchGetItem, again for any it left unprocessed, each decoded into a T; what
// names them in errors ("regions' what").
func controlItems[T any](ctx context.Context, s *JobStore, regions []string, key func(region string) (string, string), what string) ([]T, error) {
	if len(regions) > statesPerRead {
		return nil, fmt.Errorf("reading %d regions' %s: at most %d a call", len(regions), what, statesPerRead)
	}
	keys := make([]map[string]types.AttributeValue, len(regions))
	for i, r := range regions {
		keys[i] = keyOf(key(r))
	}
	out, err := batchGet[T](ctx, s.db, s.tables.Control, keys, types.KeysAndAttributes{})
	if err != nil {
		return nil, fmt.Errorf("reading regions' %s: %w", what, err)
	}
	return out, nil
}

// hasAny reports whether gsi2's partition pk holds any item, counting one: the item itself is not
// returned, so whose job it is never leaves the table.
func (s *JobStore) hasAny(ctx context.Context, pk string) (bool, error) {
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName:                 &s.tables.Jobs,
		IndexName:                 aws.String(indexGSI2),
		KeyConditionExpression:    aws.String("gsi2pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}},
		Select:                    types.SelectCount,
		Limit:                     aws.Int32(1),
	})
	if err != nil {
		return false, err
	}
	return out.Count > 0, nil
}
