package spotprices

import (
	"net/url"
	"testing"
	"time"
)

// FuzzParseQuery feeds the parser bodies no SDK would send: it must answer an error or a query
// that answer can page through, and never panic.
func FuzzParseQuery(f *testing.F) {
	for _, seed := range []string{
		"Action=DescribeSpotPriceHistory&Version=2016-11-15&InstanceType.1=g5.xlarge&ProductDescription.1=Linux%2FUNIX",
		"Filter.1.Name=instance-type&Filter.1.Value.1=m5.large&Filter.1.Value.2=g5.xlarge&MaxResults=1",
		"AvailabilityZone=us-east-1b&StartTime=2026-01-01T00:00:00Z&EndTime=2026-01-02T00:00:00.5Z",
		"NextToken=dXMtZWFzdC0xYQptNS5sYXJnZQ&MaxResults=2",
		"Filter.01.Name=x&InstanceType.-1=y&Filter.1.Value=z",
	} {
		f.Add(seed)
	}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	prices := []Price{
		{Region: "us-east-1", InstanceType: "g5.xlarge", Price: 0.42, SetAt: at},
		{Region: "us-east-1", InstanceType: "m5.large", Price: 0.031, SetAt: at},
		{Region: "us-west-2", InstanceType: "g5.xlarge", Price: 0.55, SetAt: at},
	}
	f.Fuzz(func(t *testing.T, body string) {
		form, err := url.ParseQuery(body)
		if err != nil {
			return
		}
		q, aerr := parseQuery("us-east-1", form)
		if aerr != nil {
			if _, ok := statusOf[aerr.Code]; !ok || aerr.Message == "" {
				t.Fatalf("parseQuery(%q) = %+v, want a mapped code and a message", body, aerr)
			}
			return
		}
		if q.maxResults < 1 || q.maxResults > maxResultsLimit {
			t.Fatalf("parseQuery(%q).maxResults = %d, want 1 to %d", body, q.maxResults, maxResultsLimit)
		}
		page, next := answer(prices, q)
		if len(page) > q.maxResults {
			t.Fatalf("answer to %q has %d rows, over MaxResults %d", body, len(page), q.maxResults)
		}
		if next != "" {
			if _, ok := decodeToken(next); !ok {
				t.Fatalf("answer to %q issued NextToken %q that it cannot read back", body, next)
			}
		}
	})
}
