package dynamo

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tidegate/tidegate/shared/jobs"
)

// A region's spot price history for one instance type is one item of the control table, its
// points in attributes slotPrefix+N, N a ring slot (jobs.PriceSlot): a point is one UpdateItem,
// never a read, and the item never holds more than jobs.PriceSlots points. The item expires a
// ring after its last point, so an instance type no job caps any more leaves nothing behind.

// slotPrefix begins the name of each attribute holding a point.
const slotPrefix = "p"

// spotPricesKey is where region's history of instanceType is kept in the control table.
func spotPricesKey(region, instanceType string) (string, string) {
	return "spotprices#" + region + "#" + instanceType, "history"
}

// KeepSpotPrice writes one point of region's history of instanceType, kept at step, into its
// slot, over whatever an earlier turn of the ring left there.
func (s *JobStore) KeepSpotPrice(ctx context.Context, region, instanceType string, step time.Duration, p jobs.PricePoint) error {
	if step <= 0 {
		step = jobs.DefaultPriceStep
	}
	step = max(step.Round(time.Second), time.Second)
	point, err := attributevalue.MarshalMap(jobs.PricePoint{At: p.At.UTC(), Price: p.Price})
	if err != nil {
		return fmt.Errorf("encoding a spot price: %w", err)
	}
	expires := p.At.Add(jobs.PriceSlots * step).Unix()
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:        &s.tables.Control,
		Key:              keyOf(spotPricesKey(region, instanceType)),
		UpdateExpression: aws.String("SET #slot = :p, step_seconds = :step, #exp = :exp"),
		ExpressionAttributeNames: map[string]string{
			"#slot": slotPrefix + strconv.Itoa(jobs.PriceSlot(p.At, step)), "#exp": attrExpires,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":p":    &types.AttributeValueMemberM{Value: point},
			":step": &types.AttributeValueMemberN{Value: strconv.FormatInt(int64(step/time.Second), 10)},
			":exp":  &types.AttributeValueMemberN{Value: strconv.FormatInt(expires, 10)},
		},
	})
	if err != nil {
		return fmt.Errorf("keeping %s's spot price of %s: %w", region, instanceType, err)
	}
	return nil
}

// SpotPriceHistories reads region's histories of instanceTypes (at most statesPerRead) in one
// BatchGetItem, each oldest point first as of now; a type with no history is left out.
func (s *JobStore) SpotPriceHistories(ctx context.Context, region string, instanceTypes []string, now time.Time) (map[string][]jobs.PricePoint, error) {
	out := map[string][]jobs.PricePoint{}
	if len(instanceTypes) == 0 {
		return out, nil
	}
	if len(instanceTypes) > statesPerRead {
		instanceTypes = instanceTypes[:statesPerRead]
	}
	keys := make([]map[string]types.AttributeValue, len(instanceTypes))
	byPK := map[string]string{}
	for i, t := range instanceTypes {
		pk, sk := spotPricesKey(region, t)
		keys[i], byPK[pk] = keyOf(pk, sk), t
	}
	for try := 0; len(keys) > 0; try++ {
		if try > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(try*try) * 20 * time.Millisecond):
			}
		}
		res, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
			s.tables.Control: {Keys: keys},
		}})
		if err != nil {
			return nil, fmt.Errorf("reading %s's spot price histories: %w", region, err)
		}
		for _, item := range res.Responses[s.tables.Control] {
			pk, _ := item[attrPK].(*types.AttributeValueMemberS)
			if pk == nil {
				continue
			}
			points, err := decodeHistory(item, now)
			if err != nil {
				return nil, fmt.Errorf("decoding %s's spot price history of %s: %w", region, byPK[pk.Value], err)
			}
			out[byPK[pk.Value]] = points
		}
		keys = res.UnprocessedKeys[s.tables.Control].Keys
	}
	return out, nil
}

// decodeHistory reads the points of one history item, as of now.
func decodeHistory(item map[string]types.AttributeValue, now time.Time) ([]jobs.PricePoint, error) {
	var step time.Duration
	if n, ok := item["step_seconds"].(*types.AttributeValueMemberN); ok {
		secs, err := strconv.ParseInt(n.Value, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("step_seconds %q: %w", n.Value, err)
		}
		step = time.Duration(secs) * time.Second
	}
	slots := map[int]jobs.PricePoint{}
	for name, v := range item {
		n, ok := strings.CutPrefix(name, slotPrefix)
		slot, err := strconv.Atoi(n)
		if !ok || err != nil {
			continue
		}
		var p jobs.PricePoint
		if err := attributevalue.Unmarshal(v, &p); err != nil {
			return nil, fmt.Errorf("slot %d: %w", slot, err)
		}
		slots[slot] = p
	}
	return jobs.PriceHistory(slots, step, now), nil
}
