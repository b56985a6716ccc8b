package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// RegionCensus is what a region's drain last counted, by tenant, of the jobs that may run in
// several regions and wait for one (the roaming queue), from the census it takes at most once a
// minute: what the queue stats show of them, so the stats never read that queue.
type RegionCensus struct {
	Region string    `dynamodbav:"region"`
	At     time.Time `dynamodbav:"at"`
	// Roaming counts, by tenant, the roaming jobs that allow the region.
	Roaming map[string]int `dynamodbav:"roaming,omitempty"`
	// RoamingAll counts, by tenant, every roaming job once, whatever regions it allows.
	RoamingAll map[string]int `dynamodbav:"roaming_all,omitempty"`
}

// censusKey is where region's census is kept in the control table.
func censusKey(region string) (string, string) { return "census#" + region, "roaming" }

type censusItem struct {
	PK string `dynamodbav:"pk"`
	SK string `dynamodbav:"sk"`
	RegionCensus
}

// PutCensus keeps c, replacing the region's last.
func (s *JobStore) PutCensus(ctx context.Context, c RegionCensus) error {
	pk, sk := censusKey(c.Region)
	c.At = c.At.UTC()
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

// HasRoaming reports whether any job waits for a region among several, reading one item.
func (s *JobStore) HasRoaming(ctx context.Context) (bool, error) {
	ok, err := s.hasAny(ctx, roamingQueue)
	if err != nil {
		return false, fmt.Errorf("looking for roaming jobs: %w", err)
	}
	return ok, nil
}
