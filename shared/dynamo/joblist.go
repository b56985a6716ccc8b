package dynamo

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tidegate/tidegate/shared/jobs"
)

// listBudget is how many records one listing reads in a namespace, matching or not: DynamoDB
// filters after it reads, so a filter nothing matches (label_selector=x=nomatch) would otherwise
// read the namespace's whole partition in one request. A full page of the largest limit (1,000)
// reads no more when every record matches; past the budget the listing answers what it found and
// a cursor where it stopped, and the caller reads on with it.
const listBudget = 1000

// List answers at most limit jobs matching f, after the cursor a previous page returned. It runs
// one index query per namespace (gsi1 by time, gsi3 by priority, gsi4 by name; backwards as
// backward says), filtering region, status, name and labels in DynamoDB (and records past their
// retention), and merges them; the cursor is the last sort key returned, so every namespace
// resumes from the same point. A namespace whose reads reach the store's budget (listBudget)
// first stops where it was: the page then ends there, with fewer than limit jobs (none, it may
// be) and a cursor, so no request reads more than the budget a namespace. Manifests are not
// included.
func (s *JobStore) List(ctx context.Context, f jobs.Filter, limit int, cursor string) (jobs.Page, error) {
	index := indexGSI1
	switch {
	case f.ByPriority:
		index = indexGSI3
	case f.ByName:
		index = indexGSI4
	}
	type keyed struct {
		sk  string
		job jobs.Job
	}
	var all []keyed
	stop := "" // the earliest point, in the listing's order, where a namespace's budget ran out
	before := func(a, b string) bool {
		if backward(f) {
			return a > b
		}
		return a < b
	}
	partitions := make([]string, 0, len(f.Namespaces))
	prefix := "ns#"
	if f.Workflows {
		prefix = "workflow#"
	}
	for _, ns := range f.Namespaces {
		partitions = append(partitions, prefix+ns)
	}
	if f.Parent != "" {
		partitions = []string{"parent#" + f.Parent}
	}
	for _, ns := range partitions {
		items, stopped, err := s.queryNamespace(ctx, index, ns, f, limit+1, cursor)
		if err != nil {
			return jobs.Page{}, err
		}
		if stopped != "" && (stop == "" || before(stopped, stop)) {
			stop = stopped
		}
		for _, it := range items {
			sk := it.GSI1SK
			switch index {
			case indexGSI3:
				sk = it.GSI3SK
			case indexGSI4:
				sk = it.GSI4SK
			}
			all = append(all, keyed{sk, it.Job})
		}
	}
	slices.SortFunc(all, func(a, b keyed) int {
		if backward(f) {
			return cmp.Compare(b.sk, a.sk)
		}
		return cmp.Compare(a.sk, b.sk)
	})
	var page jobs.Page
	if stop != "" {
		// Past where a namespace stopped, the others' jobs would skip that namespace's unread ones.
		all = slices.DeleteFunc(all, func(k keyed) bool { return before(stop, k.sk) })
		page.Next = stop
	}
	if len(all) > limit {
		all = all[:limit]
		page.Next = all[limit-1].sk
	}
	page.Jobs = make([]jobs.Job, 0, len(all))
	for _, k := range all {
		page.Jobs = append(page.Jobs, k.job)
	}
	return page, nil
}

// backward reports whether f's order is its index's read backwards: gsi1 and gsi3 keep the
// newest (or highest priority) first, so their ascending orders read backwards; gsi4 keeps names
// a to z, so its descending order does.
func backward(f jobs.Filter) bool {
	return f.Ascending != f.ByName
}

// queryNamespace reads up to want matching jobs of one partition (ns#NAMESPACE, or an array's
// parent#ID) after cursor. DynamoDB filters
// after it reads, so a page of reads may match few; it reads on until it has want, runs out, or
// has read the store's budget of records, and then answers the sort key it stopped at (stopped;
// "" when it did not stop for the budget).
func (s *JobStore) queryNamespace(ctx context.Context, index, ns string, f jobs.Filter, want int, cursor string) (out []jobItem, stopped string, err error) {
	in := &dynamodb.QueryInput{
		TableName:                 &s.tables.Jobs,
		IndexName:                 aws.String(index),
		KeyConditionExpression:    aws.String(index + "pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: ns}},
		ExpressionAttributeNames:  map[string]string{},
	}
	after := ">"
	if backward(f) {
		in.ScanIndexForward, after = aws.Bool(false), "<"
	}
	if cursor != "" {
		*in.KeyConditionExpression += " AND " + index + "sk " + after + " :after"
		in.ExpressionAttributeValues[":after"] = &types.AttributeValueMemberS{Value: cursor}
	}
	// A record past its retention is gone to readers, though DynamoDB Local never deletes it
	// and DynamoDB's TTL takes up to days.
	conds := []string{notExpired}
	in.ExpressionAttributeValues[":now"] = epoch(s.now())
	add := func(cond, name, attr string, val types.AttributeValue) {
		conds = append(conds, cond)
		in.ExpressionAttributeNames[name] = attr
		in.ExpressionAttributeValues[":"+name[1:]] = val
	}
	if f.Region != "" {
		add("#region = :region", "#region", "region", &types.AttributeValueMemberS{Value: f.Region})
	}
	if f.Status != "" {
		add("#status = :status", "#status", "status", &types.AttributeValueMemberS{Value: string(f.Status)})
	}
	if prefix, ok := strings.CutSuffix(f.Name, "*"); ok {
		add("begins_with(#name, :name)", "#name", "name", &types.AttributeValueMemberS{Value: prefix})
	} else if f.Name != "" {
		add("#name = :name", "#name", "name", &types.AttributeValueMemberS{Value: f.Name})
	}
	for i, k := range slices.Sorted(maps.Keys(f.Labels)) {
		n := "l" + strconv.Itoa(i)
		conds = append(conds, fmt.Sprintf("#labels.#%s = :%s", n, n))
		in.ExpressionAttributeNames["#labels"] = "labels"
		in.ExpressionAttributeNames["#"+n] = k
		in.ExpressionAttributeValues[":"+n] = &types.AttributeValueMemberS{Value: f.Labels[k]}
	}
	in.FilterExpression = aws.String(strings.Join(conds, " AND "))
	if len(in.ExpressionAttributeNames) == 0 {
		in.ExpressionAttributeNames = nil
	}
	budget := s.listBudget
	if budget <= 0 {
		budget = listBudget
	}
	read := 0
	for {
		in.Limit = aws.Int32(int32(budget - read)) // records read, matching or not
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, "", fmt.Errorf("listing the jobs of %s: %w", ns, err)
		}
		var items []jobItem
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &items); err != nil {
			return nil, "", fmt.Errorf("decoding the jobs of %s: %w", ns, err)
		}
		out = append(out, items...)
		read += int(page.ScannedCount)
		switch {
		case len(out) >= want:
			return out[:want], "", nil
		case len(page.LastEvaluatedKey) == 0:
			return out, "", nil
		case read >= budget:
			var last string
			if err := attributevalue.Unmarshal(page.LastEvaluatedKey[index+"sk"], &last); err != nil {
				return nil, "", fmt.Errorf("reading where the listing of namespace %s stopped: %w", ns, err)
			}
			return out, last, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// HasQueued reports whether region has any queued job, its own (held by its price or backing
// off too: a drain must look at the price, or the time, to release it) or one that may run in several regions (which any
// region's drain may take), reading one item of each of its queues.
func (s *JobStore) HasQueued(ctx context.Context, region string) (bool, error) {
	for _, q := range append(WaitingQueues(region), RoamingQueue) {
		if ok, err := s.hasAny(ctx, string(q)); err != nil || ok {
			if err != nil {
				return false, fmt.Errorf("looking for queued jobs in %s: %w", region, err)
			}
			return true, nil
		}
	}
	return false, nil
}
