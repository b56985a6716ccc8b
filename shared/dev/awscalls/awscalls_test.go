package awscalls_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/dev/awscalls"
	"github.com/tidegate/tidegate/shared/dev/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// counted is a DynamoDB client on the stand-in made from an instrumented copy of db's config, as
// the functions' clients are made from theirs.
func counted(db *dynamodb.Client, c *awscalls.Counter) *dynamodb.Client {
	o := db.Options()
	cfg := aws.Config{Region: o.Region, Credentials: o.Credentials}
	c.Instrument(&cfg)
	return dynamodb.NewFromConfig(cfg, func(d *dynamodb.Options) { d.BaseEndpoint = o.BaseEndpoint })
}

// TestCounterCountsEachCallByFunctionAndOperation: a PutItem inside an invocation and two
// GetItems outside one are counted under their function and operation, with the capacity
// DynamoDB Local answered; the caller's input is left without ReturnConsumedCapacity.
func TestCounterCountsEachCallByFunctionAndOperation(t *testing.T) {
	tables, db := testenv.Tables(t)
	c := &awscalls.Counter{}
	client := counted(db, c)
	ctx := context.Background()
	key := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "job#1"}, "sk": &types.AttributeValueMemberS{Value: "job"}}

	put := &dynamodb.PutItemInput{TableName: aws.String(tables.Jobs), Item: key}
	ictx, done := c.Invoke(ctx, "api")
	if _, err := client.PutItem(ictx, put); err != nil {
		t.Fatalf("PutItem: %v", err)
	}
	done()
	if put.ReturnConsumedCapacity != "" {
		t.Errorf("PutItem's input has ReturnConsumedCapacity %q after the call; the counter must ask on a copy", put.ReturnConsumedCapacity)
	}
	for range 2 {
		if _, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tables.Jobs), Key: key}); err != nil {
			t.Fatalf("GetItem: %v", err)
		}
	}

	got := c.Calls()
	want := map[awscalls.Key]int{
		{Function: "api", Service: "DynamoDB", Operation: "PutItem"}:            1,
		{Function: awscalls.Outside, Service: "DynamoDB", Operation: "GetItem"}: 2,
	}
	counts := map[awscalls.Key]int{}
	for k, tally := range got {
		counts[k] = tally.Calls
	}
	if diff := cmp.Diff(want, counts); diff != "" {
		t.Errorf("Calls() counts (-want +got):\n%s", diff)
	}
	if p := got[awscalls.Key{Function: "api", Service: "DynamoDB", Operation: "PutItem"}]; p.WriteUnits <= 0 || p.ReadUnits != 0 {
		t.Errorf("PutItem consumed %v write and %v read units; want some write units and no read units", p.WriteUnits, p.ReadUnits)
	}
	if g := got[awscalls.Key{Function: awscalls.Outside, Service: "DynamoDB", Operation: "GetItem"}]; g.ReadUnits <= 0 || g.WriteUnits != 0 {
		t.Errorf("two GetItems consumed %v read and %v write units; want some read units and no write units", g.ReadUnits, g.WriteUnits)
	}
	if inv := c.Invocations()["api"]; inv.Count != 1 || len(inv.Durations) != 1 || inv.Durations[0] <= 0 {
		t.Errorf("Invocations()[api] = %+v, want one invocation with its duration", inv)
	}
}

// TestCounterCountsFailedAttempts: a call DynamoDB refuses is counted, as an error.
func TestCounterCountsFailedAttempts(t *testing.T) {
	_, db := testenv.Tables(t)
	c := &awscalls.Counter{}
	client := counted(db, c)
	_, err := client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String("no-such-table-" + t.Name()),
		Key:       map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "x"}},
	})
	if err == nil {
		t.Fatal("GetItem on a table that does not exist succeeded")
	}
	got := c.Calls()[awscalls.Key{Function: awscalls.Outside, Service: "DynamoDB", Operation: "GetItem"}]
	if got.Calls != 1 || got.Errors != 1 {
		t.Errorf("a refused GetItem counted %d calls and %d errors, want 1 and 1", got.Calls, got.Errors)
	}
}

// TestCounterSumsUnitsAsOnDemandBills: the costs `make bench` gives rest on DynamoDB Local
// answering capacity as DynamoDB bills it: a transactional write of a small item is 2 write
// units, and a write that also lands in two indexes is 3.
func TestCounterSumsUnitsAsOnDemandBills(t *testing.T) {
	tables, db := testenv.Tables(t)
	c := &awscalls.Counter{}
	client := counted(db, c)
	ctx := context.Background()
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	_, err := client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(tables.Jobs), Item: map[string]types.AttributeValue{"pk": s("job#1"), "sk": s("job")}}},
	}})
	if err != nil {
		t.Fatalf("TransactWriteItems: %v", err)
	}
	// The item carries the keys of gsi1 and gsi2, so each index is written too.
	indexed := map[string]types.AttributeValue{"pk": s("job#2"), "sk": s("job"), "gsi1pk": s("ns#a"), "gsi1sk": s("1"), "gsi2pk": s("queue#r"), "gsi2sk": s("1")}
	if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tables.Jobs), Item: indexed}); err != nil {
		t.Fatalf("PutItem: %v", err)
	}
	got := c.Calls()
	if u := got[awscalls.Key{Function: awscalls.Outside, Service: "DynamoDB", Operation: "TransactWriteItems"}].WriteUnits; u != 2 {
		t.Errorf("a transaction of one small item consumed %v write units, want 2", u)
	}
	if u := got[awscalls.Key{Function: awscalls.Outside, Service: "DynamoDB", Operation: "PutItem"}].WriteUnits; u != 3 {
		t.Errorf("a small item written with keys of two indexes consumed %v write units, want 3", u)
	}

	// DynamoDB Local answers the same few units for a transaction of ten items of 1.5 KB; DynamoDB
	// bills each of them 4.
	c.Reset()
	var ten []types.TransactWriteItem
	for i := range 10 {
		ten = append(ten, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(tables.Jobs), Item: map[string]types.AttributeValue{
			"pk": s(fmt.Sprintf("job#t%d", i)), "sk": s("job"), "body": s(strings.Repeat("x", 1500)),
		}}})
	}
	if _, err := client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: ten}); err != nil {
		t.Fatalf("TransactWriteItems of ten: %v", err)
	}
	if u := c.Calls()[awscalls.Key{Function: awscalls.Outside, Service: "DynamoDB", Operation: "TransactWriteItems"}].WriteUnits; u != 40 {
		t.Errorf("a transaction of ten 1.5 KB items consumed %v write units, want 40", u)
	}
}

func TestTransactWriteUnits(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	put := func(item map[string]types.AttributeValue) types.TransactWriteItem {
		return types.TransactWriteItem{Put: &types.Put{Item: item}}
	}
	tests := []struct {
		name  string
		items []types.TransactWriteItem
		want  float64
	}{
		{"none", nil, 0},
		{"a small put", []types.TransactWriteItem{put(map[string]types.AttributeValue{"pk": s("a")})}, 2},
		{"a put of exactly 1 KB", []types.TransactWriteItem{put(map[string]types.AttributeValue{"pk": s(strings.Repeat("x", 1022))})}, 2},
		{"a put of 1 KB and a byte", []types.TransactWriteItem{put(map[string]types.AttributeValue{"pk": s(strings.Repeat("x", 1023))})}, 4},
		{"a put of 2.5 KB", []types.TransactWriteItem{put(map[string]types.AttributeValue{"b": &types.AttributeValueMemberB{Value: make([]byte, 2559)}})}, 6},
		{"a map's names and elements count", []types.TransactWriteItem{put(map[string]types.AttributeValue{
			"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": s(strings.Repeat("x", 1019))}},
		})}, 4}, // 1 (its name) + 3 + 1 (the key) + 1 + 1,019 = 1,025 bytes; the string alone would fit 1 KB
		{"an update, a delete and a check count as small items", []types.TransactWriteItem{
			{Update: &types.Update{}}, {Delete: &types.Delete{}}, {ConditionCheck: &types.ConditionCheck{}},
		}, 6},
	}
	for _, tt := range tests {
		if got := awscalls.TransactWriteUnits(tt.items); got != tt.want {
			t.Errorf("%s: TransactWriteUnits = %v, want %v", tt.name, got, tt.want)
		}
	}
}
