package dynamo

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// statesPerRead is BatchGetItem's limit of keys a call.
const statesPerRead = 100

// readsAtOnce is how many BatchGetItems a read of many keys has in flight.
const readsAtOnce = 4

// inChunks reads items in chunks of size, readsAtOnce chunks at a time, and answers what the
// reads answered, in the chunks' order.
func inChunks[T, R any](items []T, size int, read func(chunk []T) ([]R, error)) ([]R, error) {
	chunks := slices.Collect(slices.Chunk(items, size))
	parts := make([][]R, len(chunks))
	errs := make([]error, len(chunks))
	var wg sync.WaitGroup
	limit := make(chan struct{}, readsAtOnce)
	for i, chunk := range chunks {
		wg.Go(func() {
			limit <- struct{}{}
			defer func() { <-limit }()
			parts[i], errs[i] = read(chunk)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return slices.Concat(parts...), nil
}

// batchGet reads the items of table at keys (at most statesPerRead) as in asks (its Keys are
// set here), each decoded into a T, asking again for any DynamoDB left unprocessed (it does so
// under throttling) after a short backoff. Its errors are DynamoDB's or the decoder's, for the
// caller to say what it was reading.
func batchGet[T any](ctx context.Context, db *dynamodb.Client, table string, keys []map[string]types.AttributeValue, in types.KeysAndAttributes) ([]T, error) {
	var out []T
	for try := 0; len(keys) > 0; try++ {
		if err := backOff(ctx, try); err != nil {
			return nil, err
		}
		in.Keys = keys
		res, err := db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{table: in}})
		if err != nil {
			return nil, err
		}
		var items []T
		if err := attributevalue.UnmarshalListOfMaps(res.Responses[table], &items); err != nil {
			return nil, err
		}
		out = append(out, items...)
		keys = res.UnprocessedKeys[table].Keys
	}
	return out, nil
}

// backOff waits before try (from 0) of a BatchGetItem's unprocessed keys: not at all before the
// first, then 20 ms, 80 ms, 180 ms, …
func backOff(ctx context.Context, try int) error {
	if try == 0 {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Duration(try*try) * 20 * time.Millisecond):
		return nil
	}
}
