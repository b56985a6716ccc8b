package dispatch

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
)

// TestTallyRoaming: a region's census counts each tenant's roaming jobs that allow it, and every
// roaming job of the tenant once; a job with a region of its own is no roaming job.
func TestTallyRoaming(t *testing.T) {
	job := func(tenant, own string, regions ...string) jobs.Job {
		return jobs.Job{Tenant: tenant, Region: own, Regions: regions}
	}
	all := []jobs.Job{
		job("a", "", "us-east-1", "us-west-2"),
		job("a", "", "eu-west-1", "us-west-2"),
		job("b", "", "us-east-1", "eu-west-1"),
		job("b", "us-east-1", "us-east-1", "eu-west-1"), // claimed since it was listed
	}
	got := tallyRoaming("us-east-1", all)
	want := dynamo.RegionCensus{Region: "us-east-1", Roaming: map[string]int{"a": 1, "b": 1}, RoamingAll: map[string]int{"a": 2, "b": 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tallyRoaming(us-east-1) (-want +got):\n%s", diff)
	}
}
