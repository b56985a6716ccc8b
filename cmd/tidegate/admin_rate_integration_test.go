package main

import (
	"context"
	"strings"
	"testing"
)

// TestTenantsPutRate: --rate and --burst land on the tenant's record; put again without them and
// the tenant is back on the default (0); a negative one is refused before anything is stored.
func TestTenantsPutRate(t *testing.T) {
	store := adminEnv(t)
	ctx := context.Background()
	put := []string{"tenants", "put", "ml", "--org", "acme", "--namespace", "ml-train"}
	if out, err := admin(t, append(put, "--rate", "2.5", "--burst", "40")...); err != nil {
		t.Fatalf("tenants put ml --rate 2.5 --burst 40 = %v\n%s", err, out)
	}
	got, err := store.Tenant(ctx, "ml")
	if err != nil {
		t.Fatal(err)
	}
	if got.RateLimit != 2.5 || got.RateBurst != 40 {
		t.Errorf("after --rate 2.5 --burst 40, tenant ml has rate %v, burst %d; want 2.5, 40", got.RateLimit, got.RateBurst)
	}
	if out, err := admin(t, put...); err != nil {
		t.Fatalf("tenants put ml = %v\n%s", err, out)
	}
	if got, _ = store.Tenant(ctx, "ml"); got.RateLimit != 0 || got.RateBurst != 0 {
		t.Errorf("after put without --rate, tenant ml has rate %v, burst %d; want 0, 0 (the default)", got.RateLimit, got.RateBurst)
	}
	_, err = admin(t, "tenants", "put", "ops", "--org", "acme", "--namespace", "ops", "--burst", "-1")
	if err == nil || !strings.Contains(err.Error(), "burst -1") {
		t.Errorf("tenants put ops --burst -1 = %v, want a refusal naming the burst", err)
	}
	if _, err := store.Tenant(ctx, "ops"); err == nil {
		t.Error("tenants put ops --burst -1 stored ops though it refused")
	}
}

// TestTenantsPutChecksQuotaRegionsAndIAM: a quota for a region Tidegate does not run jobs in, or a
// session ARN to map, is refused before anything is stored, naming what to give instead.
func TestTenantsPutChecksQuotaRegionsAndIAM(t *testing.T) {
	store := adminEnv(t)
	t.Setenv("TIDEGATE_REGIONS", "us-east-1=sandbox,eu-west-1=sandbox")
	put := []string{"tenants", "put", "ml", "--org", "acme", "--namespace", "ml-train"}
	_, err := admin(t, append(put, "--quota", "us-east-1=2", "--quota", "us-est-1=4")...)
	if err == nil || !strings.Contains(err.Error(), `region "us-est-1"`) || !strings.Contains(err.Error(), "eu-west-1, us-east-1") {
		t.Errorf("tenants put --quota us-est-1=4 = %v; want a refusal naming the region and the known ones", err)
	}
	t.Setenv("TIDEGATE_FLAVORS", `{"us-east-1": [{"name": "spot", "node_labels": {"karpenter.sh/capacity-type": "spot"}, "resources": {"cpu": "8"}},
	  {"name": "on-demand", "node_labels": {"karpenter.sh/capacity-type": "on-demand"}, "resources": {"cpu": "8"}}]}`)
	_, err = admin(t, append(put, "--quota", "us-east-1/sopt=cpu:2")...)
	if err == nil || !strings.Contains(err.Error(), `no flavor "sopt"; its flavors are spot, on-demand`) {
		t.Errorf("tenants put --quota us-east-1/sopt=cpu:2 = %v; want a refusal naming the flavor and the region's", err)
	}
	// A region the setting leaves out has one flavor, "default".
	_, err = admin(t, append(put, "--quota", "eu-west-1/spot=cpu:2")...)
	if err == nil || !strings.Contains(err.Error(), `region eu-west-1 has no flavor "spot"; its flavors are default`) {
		t.Errorf("tenants put --quota eu-west-1/spot=cpu:2 = %v; want a refusal naming its one flavor", err)
	}
	_, err = admin(t, append(put, "--iam-arn", "arn:aws:sts::123456789012:assumed-role/ci/alice")...)
	if err == nil || !strings.Contains(err.Error(), "arn:aws:iam::123456789012:role/ci") {
		t.Errorf("tenants put --iam-arn <session> = %v; want a refusal naming the role's ARN", err)
	}
	if _, err := store.Tenant(context.Background(), "ml"); err == nil {
		t.Error("a refused tenants put stored the tenant")
	}
	if out, err := admin(t, append(put, "--quota", "eu-west-1=2", "--iam-arn", "arn:aws:iam::123456789012:role/ci/ml")...); err != nil {
		t.Fatalf("tenants put with a known region and a role ARN = %v\n%s", err, out)
	}
}
