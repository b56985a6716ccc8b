package httpapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// TestSubmitHoldsWhatThePriceHolds: a capped job whose instance type's last kept price is above
// its cap is stored held, apart from the queue the drains read (202, spot_price_above_cap with
// the price it was held at); one the price allows, or one with a spot deadline, is queued as
// usual.
func TestSubmitHoldsWhatThePriceHolds(t *testing.T) {
	st, keys, js := limitStack(t, tenancy.Tenant{Name: "a", Namespaces: []string{"team-a"}})
	now := time.Now()
	if err := js.KeepSpotPrice(context.Background(), "us-east-1", "g5.xlarge", time.Minute, jobs.PricePoint{At: now.Add(-time.Minute), Price: 0.5}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		extra  map[string]any
		reason string
		held   bool
	}{
		{"capped under the price", map[string]any{"max_spot_price": 0.1, "spot_instance_type": "g5.xlarge"}, "spot_price_above_cap", true},
		{"capped over the price", map[string]any{"max_spot_price": 0.9, "spot_instance_type": "g5.xlarge"}, "", false},
		{"a type never priced", map[string]any{"max_spot_price": 0.1, "spot_instance_type": "p5.48xlarge"}, "", false},
		{"with a spot deadline", map[string]any{"max_spot_price": 0.1, "spot_instance_type": "g5.xlarge", "spot_deadline": "1h"}, "", false},
	} {
		req := map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": "team-a"}
		for k, v := range tt.extra {
			req[k] = v
		}
		status, out := st.do(t, 0, "POST", "/api/v1/jobs", keys["a"], "application/json", mustJSON(req), nil)
		job, _ := out["job"].(map[string]any)
		if status != 202 || job["pending_reason"] != nil && job["pending_reason"] != tt.reason || tt.reason != "" && job["pending_reason"] != tt.reason {
			t.Errorf("%s: POST = %d %v, want 202 with pending_reason %q", tt.name, status, out, tt.reason)
			continue
		}
		stored, err := js.Job(context.Background(), job["id"].(string))
		if err != nil {
			t.Fatal(err)
		}
		if dynamo.Held(stored) != tt.held {
			t.Errorf("%s: held %v, want %v", tt.name, dynamo.Held(stored), tt.held)
		}
	}
}
