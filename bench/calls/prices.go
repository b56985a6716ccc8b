package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// List prices in us-east-1 as AWS publishes them, without free tiers. The newest among them is
// DynamoDB on-demand's, halved on 2024-11-01; the others are older. They are not read from AWS
// at run time: update them, and pricesAsOf, when AWS changes them.
const (
	pricesAsOf = "2024-11-01"
	// Lambda: $0.20 a million requests; $0.0000133334 a GB-second on arm64 (template.yaml's
	// Architectures), in the first 7.5 billion GB-seconds of a month; billed by the millisecond.
	lambdaPerRequest  = 0.20 / 1e6
	lambdaPerGBSecond = 0.0000133334
	// API Gateway HTTP API: $1.00 a million requests, in the first 300 million of a month.
	apiPerRequest = 1.00 / 1e6
	// DynamoDB on-demand: $0.625 a million write request units, $0.125 a million read ones.
	dynamoPerWRU = 0.625 / 1e6
	dynamoPerRRU = 0.125 / 1e6
	// SQS standard queues: $0.40 a million requests (each 64 KB of a payload one request).
	sqsPerRequest = 0.40 / 1e6
	// KMS: $0.03 for 10,000 requests.
	kmsPerRequest = 0.03 / 1e4
)

// functionNames are the functions the run invokes, by template.yaml's FunctionName suffix.
var functionNames = []string{"api", "dispatch", "reconcile", "webhook"}

// memorySizes reads each function's MemorySize (MB) from template.yaml: the line after its
// FunctionName that sets one, as the template lays each function out.
func memorySizes(path string) (map[string]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]int{}
	current := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if name, ok := strings.CutPrefix(line, "FunctionName: !Sub ${AWS::StackName}-"); ok {
			current = name
			continue
		}
		if mb, ok := strings.CutPrefix(line, "MemorySize: "); ok && current != "" {
			n, err := strconv.Atoi(strings.Fields(mb)[0])
			if err != nil {
				return nil, fmt.Errorf("%s: %s's MemorySize %q: %w", path, current, mb, err)
			}
			out[current], current = n, ""
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, name := range functionNames {
		if out[name] == 0 {
			return nil, fmt.Errorf("%s sets no MemorySize for the %s function", path, name)
		}
	}
	return out, nil
}
