package main

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// adminEnv points `tidegate admin` at a control table of this test's own on DynamoDB Local, and
// answers its store for reading back what the commands wrote.
func adminEnv(t *testing.T) *dynamo.TenantStore {
	t.Helper()
	tables, db := testenv.Tables(t)
	st := testenv.AWS(t)
	t.Setenv(config.EnvControlTable, tables.Control)
	t.Setenv(config.EnvDynamoDBEndpoint, st.DynamoDBEndpoint)
	t.Setenv(config.EnvAppsNamespace, "")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "tidegate")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "tidegate")
	t.Setenv("AWS_PROFILE", "")
	return dynamo.NewTenantStore(db, tables.Control)
}

// admin runs `tidegate admin args…` and answers what it printed and its error.
func admin(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := root()
	var out, errOut bytes.Buffer
	cmd.SetArgs(append([]string{"admin"}, args...))
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := cmd.ExecuteContext(ctx)
	return out.String() + errOut.String(), err
}

func TestTenantsPutNamespaces(t *testing.T) {
	store := adminEnv(t)
	if out, err := admin(t, "tenants", "put", "team-a", "--org", "acme", "--namespace", "ml-train,ml-eval"); err != nil {
		t.Fatalf("tenants put team-a = %v\n%s", err, out)
	}
	refused := []struct {
		name string
		args []string
		say  []string
	}{
		{"kube-system", []string{"--namespace", "kube-system"}, []string{`"kube-system"`, "choose a namespace"}},
		{"default", []string{"--namespace", "default"}, []string{`"default"`}},
		{"the hosted apps' namespace", []string{"--namespace", config.DefaultAppsNamespace}, []string{config.DefaultAppsNamespace, "hosted apps"}},
		{"tenant A's namespace", []string{"--namespace", "b-work,ml-train"}, []string{`"ml-train"`, "tenant team-a", "--share-namespace"}},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"tenants", "put", "team-b", "--org", "other"}, tt.args...)
			_, err := admin(t, args...)
			if err == nil {
				t.Fatalf("tidegate admin %s succeeded, want a refusal", strings.Join(args, " "))
			}
			for _, s := range tt.say {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("tidegate admin %s = %q, want it to say %q", strings.Join(args, " "), err, s)
				}
			}
			if _, err := store.Tenant(context.Background(), "team-b"); err == nil {
				t.Errorf("tidegate admin %s stored team-b though it refused", strings.Join(args, " "))
			}
		})
	}

	t.Setenv(config.EnvAppsNamespace, "hosts")
	if _, err := admin(t, "tenants", "put", "team-b", "--org", "other", "--namespace", "hosts"); err == nil {
		t.Errorf("tenants put with TIDEGATE_APPS_NAMESPACE=hosts took namespace hosts")
	}

	// Saying so lets B share A's namespace; A keeps it, and putting A again is no conflict with itself.
	if out, err := admin(t, "tenants", "put", "team-b", "--org", "other", "--namespace", "ml-train", "--share-namespace"); err != nil {
		t.Fatalf("tenants put team-b --share-namespace = %v\n%s", err, out)
	}
	if out, err := admin(t, "tenants", "put", "team-a", "--org", "acme", "--namespace", "ml-eval,ml-new"); err != nil {
		t.Fatalf("tenants put team-a again = %v\n%s", err, out)
	}
	b, err := store.Tenant(context.Background(), "team-b")
	if err != nil || !b.Allows("ml-train") {
		t.Errorf("team-b after --share-namespace = %+v, %v; want it to hold ml-train", b, err)
	}
}

func TestTenantsPutLimits(t *testing.T) {
	store := adminEnv(t)
	for _, tt := range []struct {
		args []string
		say  string
	}{
		{[]string{"--max-priority", "101"}, "max priority 101 must be a whole number from 0 to 100"},
		{[]string{"--max-priority", "-1"}, "from 0 to 100"},
		{[]string{"--max-queued", "-1"}, "max queued -1 must be a whole number ≥ 0 (0: no cap)"},
		{[]string{"--quota", "us-east-1"}, "--quota: quota \"us-east-1\" is not REGION=JOBS[:GPUS]"},
		{[]string{"--quota", "us-east-1=4:x"}, "GPUS a whole number"},
		{[]string{"--quota", "us-east-1=1", "--quota", "us-east-1=2"}, "two quotas"},
		{[]string{"--quota", "us-east-1/spot=cpu"}, `"cpu" is not RESOURCE:QUANTITY`},
		{[]string{"--quota", "us-east-1/spot=cpu:lots"}, `cpu "lots" is not a quantity`},
		{[]string{"--quota", "us-east-1=4", "--quota", "us-east-1/spot=cpu:4"}, "give it one form"},
		{[]string{"--borrowing-limit", "us-east-1=4"}, "is not REGION/FLAVOR=RESOURCE:QUANTITY"},
		{[]string{"--preempt-within", "any"}, "must be lower-priority"},
	} {
		args := append([]string{"tenants", "put", "lim", "--org", "acme", "--namespace", "lim-ns"}, tt.args...)
		if _, err := admin(t, args...); err == nil || !strings.Contains(err.Error(), tt.say) {
			t.Errorf("tidegate admin %s = %v, want an error saying %q", strings.Join(args, " "), err, tt.say)
		}
	}
	if out, err := admin(t, "tenants", "put", "lim", "--org", "acme", "--namespace", "lim-ns"); err != nil {
		t.Fatalf("tenants put lim = %v\n%s", err, out)
	}
	if got, err := store.Tenant(context.Background(), "lim"); err != nil || got.PriorityLimit() != 100 || got.Quotas != nil || got.MaxQueued != nil {
		t.Errorf("tenant put without limits = %+v, %v; want max priority 100, no quotas and the deployment's cap of queued jobs", got, err)
	}
	if out, err := admin(t, "tenants", "put", "lim", "--org", "acme", "--namespace", "lim-ns", "--max-priority", "0", "--max-queued", "250",
		"--quota", "us-east-1=4:8", "--quota", "us-west-2=2"); err != nil || !strings.Contains(out, "max queued 250") {
		t.Fatalf("tenants put lim with limits = %v\n%s; want it to say max queued 250", err, out)
	}
	got, err := store.Tenant(context.Background(), "lim")
	want := map[string]tenancy.Quota{"us-east-1": {Jobs: 4, GPUs: 8}, "us-west-2": {Jobs: 2}}
	if err != nil || got.PriorityLimit() != 0 || !cmp.Equal(got.Quotas, want) || got.QueuedLimit(10000) != 250 {
		t.Errorf("tenant put with --max-priority 0, --max-queued 250 and quotas = %+v, %v; want max priority 0, max queued 250 and quotas %v", got, err, want)
	}
	if out, err := admin(t, "tenants", "put", "lim", "--org", "acme", "--namespace", "lim-ns",
		"--quota", "us-east-1/spot=cpu:32,memory:128Gi", "--quota", "us-east-1/on-demand=nvidia.com/gpu:8",
		"--borrowing-limit", "us-east-1/on-demand=nvidia.com/gpu:0", "--lending-limit", "us-east-1/spot=cpu:4"); err != nil {
		t.Fatalf("tenants put lim with quotas per flavor = %v\n%s", err, out)
	}
	got, err = store.Tenant(context.Background(), "lim")
	want = map[string]tenancy.Quota{"us-east-1": {Flavors: map[string]tenancy.FlavorQuota{
		"spot":      {Nominal: map[string]string{"cpu": "32", "memory": "128Gi"}, LendingLimit: map[string]string{"cpu": "4"}},
		"on-demand": {Nominal: map[string]string{"nvidia.com/gpu": "8"}, BorrowingLimit: map[string]string{"nvidia.com/gpu": "0"}},
	}}}
	if err != nil || !cmp.Equal(got.Quotas, want) {
		t.Errorf("tenant put with quotas per flavor = %+v, %v; want quotas %v", got.Quotas, err, want)
	}
	if out, err := admin(t, "tenants", "put", "lim", "--org", "acme", "--namespace", "lim-ns", "--preempt-within", "lower-priority"); err != nil || !strings.Contains(out, "evict its own of lower") {
		t.Fatalf("tenants put lim --preempt-within lower-priority = %v\n%s; want it to say so", err, out)
	}
	if got, err := store.Tenant(context.Background(), "lim"); err != nil || got.PreemptWithin != tenancy.PreemptLowerPriority {
		t.Errorf("tenant put with --preempt-within lower-priority = %+v, %v", got, err)
	}
}

// TestAdminActionsAreAudited: an operator's tenants put and keys create each leave one audit
// record under the tenant acted on, naming the operator and the outcome, before the change.
func TestAdminActionsAreAudited(t *testing.T) {
	adminEnv(t)
	if out, err := admin(t, "tenants", "put", "team-q", "--org", "acme", "--namespace", "q-one"); err != nil {
		t.Fatalf("tenants put = %v\n%s", err, out)
	}
	if out, err := admin(t, "keys", "create", "--tenant", "team-q"); err != nil {
		t.Fatalf("keys create = %v\n%s", err, out)
	}
	db, table, err := controlTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	recs, _, err := dynamo.NewAuditStore(db, table, 0).Audit(context.Background(), dynamo.AuditQuery{
		Tenant: "team-q", From: time.Now().Add(-time.Minute), To: time.Now().Add(time.Minute), Limit: 10,
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		if !strings.HasPrefix(r.Principal, "operator") {
			t.Errorf("record %+v: principal %q, want the operator", r, r.Principal)
		}
		got = append(got, r.Action+" "+strconv.Itoa(r.Status))
	}
	if want := []string{"admin tenants put 200", "admin keys create 200"}; !cmp.Equal(got, want) {
		t.Errorf("team-q's audit log = %v, want %v", got, want)
	}
}

// TestAdminRegionsAndHolds: an operator cordons, drains and uncordons a region and holds and lets
// go a tenant; each action is recorded on the region's or tenant's record and in the audit log.
// A region Tidegate does not run in, and a tenant that does not exist, are refused by name.
func TestAdminRegionsAndHolds(t *testing.T) {
	tenants := adminEnv(t)
	t.Setenv(config.EnvRegions, "us-east-1=a,us-west-2=b")
	t.Setenv(config.EnvDispatchQueueURL, "")
	ctx := context.Background()
	db, table, err := controlTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	health := dynamo.NewJobStore(db, dynamo.Tables{Control: table})
	for _, step := range []struct{ verb, want string }{{"cordon", dynamo.Cordoned}, {"drain", dynamo.Draining}, {"uncordon", ""}} {
		out, err := admin(t, "regions", step.verb, "us-west-2")
		if err != nil {
			t.Fatalf("regions %s = %v\n%s", step.verb, err, out)
		}
		hl, err := health.Health(ctx, []string{"us-west-2"})
		if err != nil || hl["us-west-2"].Cordon != step.want || !strings.HasPrefix(hl["us-west-2"].CordonedBy, "operator") {
			t.Errorf("after regions %s: health %+v (%v); want cordon %q by the operator", step.verb, hl["us-west-2"], err, step.want)
		}
	}
	if out, err := admin(t, "regions", "cordon", "eu-west-9"); err == nil || !strings.Contains(err.Error(), `"eu-west-9"`) || !strings.Contains(err.Error(), "us-east-1, us-west-2") {
		t.Errorf("regions cordon eu-west-9 = %v\n%s; want a refusal naming it and the regions", err, out)
	}
	if out, err := admin(t, "tenants", "put", "team-h", "--org", "acme", "--namespace", "h-one"); err != nil {
		t.Fatalf("tenants put = %v\n%s", err, out)
	}
	if out, err := admin(t, "tenants", "hold", "team-h"); err != nil || !strings.Contains(out, "held") {
		t.Fatalf("tenants hold = %v\n%s", err, out)
	}
	// A put of the tenant's other settings keeps the hold: it is the operator's apart.
	if out, err := admin(t, "tenants", "put", "team-h", "--org", "acme", "--namespace", "h-one", "--max-priority", "70"); err != nil {
		t.Fatalf("tenants put = %v\n%s", err, out)
	}
	if h, err := tenants.Tenant(ctx, "team-h"); err != nil || !h.Held {
		t.Errorf("team-h after hold and put: %+v (%v); want held", h, err)
	}
	if out, err := admin(t, "tenants", "unhold", "team-h"); err != nil {
		t.Fatalf("tenants unhold = %v\n%s", err, out)
	}
	if h, err := tenants.Tenant(ctx, "team-h"); err != nil || h.Held {
		t.Errorf("team-h after unhold: %+v (%v); want not held", h, err)
	}
	if out, err := admin(t, "tenants", "hold", "nobody"); err == nil || !strings.Contains(err.Error(), `"nobody"`) {
		t.Errorf("tenants hold nobody = %v\n%s; want a refusal naming it", err, out)
	}
	recs, _, err := dynamo.NewAuditStore(db, table, 0).Audit(ctx, dynamo.AuditQuery{From: time.Now().Add(-time.Minute), To: time.Now().Add(time.Minute), Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.Action+" "+r.Path+" "+strconv.Itoa(r.Status))
	}
	want := []string{"admin regions cordon regions/us-west-2 200", "admin regions drain regions/us-west-2 200", "admin regions uncordon regions/us-west-2 200",
		"admin tenants put tenants/team-h 200", "admin tenants hold tenants/team-h 200", "admin tenants put tenants/team-h 200",
		"admin tenants unhold tenants/team-h 200", "admin tenants hold tenants/nobody 404"}
	if !cmp.Equal(got, want) {
		t.Errorf("the operator's audit log = %v, want %v", got, want)
	}
}
