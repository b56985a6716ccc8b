package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/hosting"
)

// Making an app live through the stores is three transactions, and DynamoDB Local runs
// transactions one at a time: about 20 apps a second here, so 10,000 apps would take most of the
// half hour. So each org's first app is made live through the stores (its template), and every
// other app of the org is a copy of its template's items, its name and its pod's UID put in,
// written with BatchWriteItem. The host's name is the app's name and a hash of the org, the
// sources and the secrets (apps.HostName), the same within an org, so the copy is what the
// stores would have written but for its token's hash, which only registration reads.
const (
	seeders      = 16 // apps whose pods are created at once
	batchWriters = 4  // BatchWriteItem calls at once
	batchItems   = 25 // the most one BatchWriteItem takes
)

// appName is app i's name; fixed width, so no app's name is part of another's.
func appName(i int) string { return fmt.Sprintf("app-%05d", i) }

// liveApps makes a apps live, app i in org i mod tenants, printing progress every tenth.
func (e *env) liveApps(ctx context.Context, h *hosting.Hoster, t dynamo.Tables, ns string, a int) error {
	store := dynamo.NewAppStore(e.db, t)
	kc, err := e.clusters.Client(ctx, east)
	if err != nil {
		return err
	}
	orgs := min(a, tenants)
	uids := make([]string, orgs)
	for i := range orgs {
		if uids[i], err = live(ctx, store, kc, h, ns, orgOf(i), appName(i)); err != nil {
			return fmt.Errorf("making %s/%s live: %w", orgOf(i), appName(i), err)
		}
	}
	templates, err := e.templates(ctx, t.Control, orgs)
	if err != nil {
		return err
	}
	items := make(chan map[string]types.AttributeValue, batchItems*batchWriters)
	var done atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, seeders+batchWriters)
	work := make(chan int)
	for w := range seeders {
		wg.Go(func() {
			for i := range work {
				tmpl := i % tenants
				uid, err := hostPod(ctx, kc, h, ns, orgOf(i), appName(i), hostOf(templates[tmpl], appName(tmpl), appName(i)), 1)
				if err != nil {
					errs[w] = errors.Join(errs[w], fmt.Errorf("creating %s's pod: %w", appName(i), err))
					continue
				}
				for _, it := range templates[tmpl] {
					items <- substitute(it, strings.NewReplacer(appName(tmpl), appName(i), uids[tmpl], uid))
				}
				if n := done.Add(1); n%int64(max(a/10, 1)) == 0 {
					progress("%d of %d apps live", n+int64(orgs), a)
				}
			}
		})
	}
	var writers sync.WaitGroup
	for w := range batchWriters {
		writers.Go(func() { errs[seeders+w] = e.writeItems(ctx, t.Control, items) })
	}
	for i := orgs; i < a; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	close(items)
	writers.Wait()
	return errors.Join(errs...)
}

func orgOf(i int) string { return fmt.Sprintf("org-%02d", i%tenants) }

// templates reads the control table's items of each org's first app (every item with the app's
// name in one of its strings), by org.
func (e *env) templates(ctx context.Context, table string, orgs int) ([][]map[string]types.AttributeValue, error) {
	out := make([][]map[string]types.AttributeValue, orgs)
	p := dynamodb.NewScanPaginator(e.db, &dynamodb.ScanInput{TableName: &table})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading the template apps: %w", err)
		}
		for _, it := range page.Items {
			for i := range orgs {
				if mentions(it, appName(i)) {
					out[i] = append(out[i], it)
				}
			}
		}
	}
	for i, its := range out {
		if len(its) == 0 {
			return nil, fmt.Errorf("no item of the template app %s", appName(i))
		}
	}
	return out, nil
}

// hostOf is the host of app named like the template's host, with app's name in place.
func hostOf(items []map[string]types.AttributeValue, tmpl, app string) string {
	for _, it := range items {
		if v, ok := it["live_host"].(*types.AttributeValueMemberS); ok {
			return strings.Replace(v.Value, tmpl, app, 1)
		}
	}
	return ""
}

// mentions reports whether one of v's strings, at any depth, contains s.
func mentions(item map[string]types.AttributeValue, s string) bool {
	for _, v := range item {
		if mentionsValue(v, s) {
			return true
		}
	}
	return false
}

func mentionsValue(v types.AttributeValue, s string) bool {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return strings.Contains(v.Value, s)
	case *types.AttributeValueMemberM:
		return mentions(v.Value, s)
	case *types.AttributeValueMemberL:
		return slices.ContainsFunc(v.Value, func(x types.AttributeValue) bool { return mentionsValue(x, s) })
	case *types.AttributeValueMemberSS:
		return slices.ContainsFunc(v.Value, func(x string) bool { return strings.Contains(x, s) })
	}
	return false
}

// substitute is a copy of item with r applied to every string at any depth.
func substitute(item map[string]types.AttributeValue, r *strings.Replacer) map[string]types.AttributeValue {
	out := make(map[string]types.AttributeValue, len(item))
	for k, v := range item {
		out[k] = substituteValue(v, r)
	}
	return out
}

func substituteValue(v types.AttributeValue, r *strings.Replacer) types.AttributeValue {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return &types.AttributeValueMemberS{Value: r.Replace(v.Value)}
	case *types.AttributeValueMemberM:
		return &types.AttributeValueMemberM{Value: substitute(v.Value, r)}
	case *types.AttributeValueMemberL:
		l := make([]types.AttributeValue, len(v.Value))
		for i, x := range v.Value {
			l[i] = substituteValue(x, r)
		}
		return &types.AttributeValueMemberL{Value: l}
	case *types.AttributeValueMemberSS:
		ss := make([]string, len(v.Value))
		for i, x := range v.Value {
			ss[i] = r.Replace(x)
		}
		return &types.AttributeValueMemberSS{Value: ss}
	}
	return v
}

// writeItems writes the items it is sent to table, batchItems a BatchWriteItem, until the channel
// closes; it goes on draining the channel after an error, so the senders never block.
func (e *env) writeItems(ctx context.Context, table string, items <-chan map[string]types.AttributeValue) error {
	var batch []types.WriteRequest
	var err error
	flush := func() {
		for try := 0; len(batch) > 0 && err == nil; try++ {
			var out *dynamodb.BatchWriteItemOutput
			if out, err = e.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: batch}}); err == nil {
				batch = out.UnprocessedItems[table]
			}
		}
		batch = batch[:0]
	}
	for it := range items {
		batch = append(batch, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
		if len(batch) == batchItems {
			flush()
		}
	}
	flush()
	return err
}
