package main

import (
	"testing"
)

func TestDescribeCalls(t *testing.T) {
	got := describeCalls(map[string]int{"DynamoDB Query": 2, "DynamoDB PutItem": 1, "Kubernetes LIST pods": 1})
	if want := "DynamoDB 3 (PutItem 1, Query 2); Kubernetes 1 (LIST pods 1)"; got != want {
		t.Errorf("describeCalls = %q, want %q", got, want)
	}
	if got := describeCalls(nil); got != "none" {
		t.Errorf("describeCalls(nil) = %q, want none", got)
	}
	starts := []start{{calls: map[string]int{"SQS SendMessage": 1}}, {calls: map[string]int{"SQS SendMessage": 1}}}
	if got := callsOf(starts); got != "SQS 1 (SendMessage 1)" {
		t.Errorf("callsOf two alike runs = %q, want one description", got)
	}
	starts = append(starts, start{})
	if got := callsOf(starts); got != "SQS 1 (SendMessage 1) / or / none" {
		t.Errorf("callsOf runs that differ = %q, want both descriptions", got)
	}
}
