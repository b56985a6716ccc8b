package samcheck

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/awslabs/goformation/v7/cloudformation/dynamodb"
	"github.com/awslabs/goformation/v7/cloudformation/policies"
)

// checkTables checks that every table bills on demand, is encrypted and point-in-time
// recoverable, survives stack deletion and replacement, and that Tidegate's tables have the schema
// shared/dynamo writes to.
func checkTables(t *Template) []Problem {
	var ps []Problem
	all := t.CFN.GetAllDynamoDBTableResources()
	for _, id := range slices.Sorted(maps.Keys(tables)) {
		if _, ok := all[id]; !ok {
			ps = append(ps, problem(RuleTable, id, "missing: shared/dynamo stores in this %s", typeTable))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(all)) {
		tb := all[id]
		if firstString(tb.BillingMode) != "PAY_PER_REQUEST" {
			ps = append(ps, problem(RuleTable, id, "BillingMode is %q; use PAY_PER_REQUEST: load follows job submissions, which no fixed capacity fits", firstString(tb.BillingMode)))
		}
		if p := tb.PointInTimeRecoverySpecification; p == nil || p.PointInTimeRecoveryEnabled == nil || !*p.PointInTimeRecoveryEnabled {
			ps = append(ps, problem(RuleTable, id, "has no point-in-time recovery; set PointInTimeRecoverySpecification.PointInTimeRecoveryEnabled: true"))
		}
		if s := tb.SSESpecification; s == nil || !s.SSEEnabled {
			ps = append(ps, problem(RuleTable, id, "SSESpecification.SSEEnabled is not true; encrypt it with a KMS key"))
		}
		if tb.AWSCloudFormationDeletionPolicy != policies.DeletionPolicy("Retain") || tb.AWSCloudFormationUpdateReplacePolicy != policies.UpdateReplacePolicy("Retain") {
			ps = append(ps, problem(RuleTable, id, "needs DeletionPolicy: Retain and UpdateReplacePolicy: Retain, so deleting or replacing the stack keeps the data"))
		}
		if gsis, ok := tables[id]; ok {
			ps = append(ps, checkSchema(id, tb, gsis)...)
		}
	}
	return ps
}

// checkSchema checks id's keys, TTL and indexes against the shared schema.
func checkSchema(id string, tb *dynamodb.Table, gsis []string) []Problem {
	var ps []Problem
	types := map[string]string{}
	for _, a := range tb.AttributeDefinitions {
		types[a.AttributeName] = a.AttributeType
	}
	keys := func(ks []dynamodb.Table_KeySchema) string {
		var parts []string
		for _, k := range ks {
			parts = append(parts, fmt.Sprintf("%s %s %s", k.AttributeName, types[k.AttributeName], k.KeyType))
		}
		return strings.Join(parts, ", ")
	}
	want := func(prefix string) string { return fmt.Sprintf("%spk S HASH, %ssk S RANGE", prefix, prefix) }
	if got := keys(tb.KeySchema); got != want("") {
		ps = append(ps, problem(RuleTable, id, "is keyed %q; the shared schema keys every table %q", got, want("")))
	}
	if ttl := tb.TimeToLiveSpecification; ttl == nil || !ttl.Enabled || firstString(ttl.AttributeName) != ttlAttribute {
		ps = append(ps, problem(RuleTable, id, "needs TimeToLiveSpecification on %s, enabled; items the code marks to expire would stay forever", ttlAttribute))
	}
	got := map[string]dynamodb.Table_GlobalSecondaryIndex{}
	for _, g := range tb.GlobalSecondaryIndexes {
		got[g.IndexName] = g
	}
	for _, name := range gsis {
		g, ok := got[name]
		if !ok {
			ps = append(ps, problem(RuleTable, id, "has no global secondary index %s (%s); shared/dynamo queries it", name, want(name)))
			continue
		}
		if k := keys(g.KeySchema); k != want(name) {
			ps = append(ps, problem(RuleTable, id, "index %s is keyed %q; the shared schema says %q", name, k, want(name)))
		}
		if attrs, ok := includes[id][name]; ok {
			if g.Projection == nil || firstString(g.Projection.ProjectionType) != "INCLUDE" || !slices.Equal(g.Projection.NonKeyAttributes, attrs) {
				ps = append(ps, problem(RuleTable, id, "index %s must project INCLUDE %v, as shared/dynamo reads it", name, attrs))
			}
		} else if g.Projection == nil || firstString(g.Projection.ProjectionType) != "ALL" {
			ps = append(ps, problem(RuleTable, id, "index %s must project ALL attributes; the stores read whole items from it", name))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(got)) {
		if !slices.Contains(gsis, name) {
			ps = append(ps, problem(RuleTable, id, "has index %s, which the shared schema does not; add it to shared/dynamo and wiring.go, or remove it", name))
		}
	}
	return ps
}
