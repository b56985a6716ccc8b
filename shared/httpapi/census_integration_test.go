package httpapi_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/dispatch"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/spotgate"
)

// takeCensus drains each of regions once with no room to dispatch anything, as the dispatch
// function does when rung: each drain counts its region's queues and keeps the census that the
// queue stats and the caps of queued jobs read.
func takeCensus(t *testing.T, js *dynamo.JobStore, leases *dynamo.LeaseStore, regions ...string) {
	t.Helper()
	clusters := map[string]string{}
	for _, r := range regions {
		clusters[r] = "none"
	}
	d := &dispatch.Handler{Regions: clusters, Capacity: func(string) int { return 0 }, Store: js, Leases: leases,
		Prices: unknownPrices{}, Log: slog.New(slog.DiscardHandler), Now: time.Now}
	for _, r := range regions {
		if err := d.Drain(context.Background(), r); err != nil {
			t.Fatalf("Drain(%s): %v", r, err)
		}
	}
}

// unknownPrices knows no spot price: a full region's drain asks for the types its census found
// waiting, and keeps none.
type unknownPrices struct{}

func (unknownPrices) Observe(_ context.Context, _, instanceType string, now time.Time) spotgate.Observation {
	return spotgate.Observation{InstanceType: instanceType, CheckedAt: now}
}
