package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/policy"
	"github.com/tidegate/tidegate/shared/wake"
)

// TestSubmitRegions: a job submitted with regions is queued with no region of its own and every
// one of them is rung; region and regions together, a region not configured, one listed twice
// and an empty list are each a 400 naming the field; one region given as regions is that region.
func TestSubmitRegions(t *testing.T) {
	st := newStack(t)
	submit := func(fields map[string]any) (int, map[string]any) {
		t.Helper()
		body := map[string]any{"manifest": restrictedJob(nil), "namespace": "team-a"}
		for k, v := range fields {
			body[k] = v
		}
		return st.do(t, 0, "POST", "/api/v1/jobs", st.member, "application/json", mustJSON(body), nil)
	}
	status, out := submit(map[string]any{"regions": []string{"us-east-1", "us-west-2"}})
	if status != 202 {
		t.Fatalf("POST /api/v1/jobs with regions = %d %v, want 202", status, out)
	}
	job := out["job"].(map[string]any)
	if job["region"] != "" || !slices.Equal(strs(job["regions"]), []string{"us-east-1", "us-west-2"}) || job["status"] != "queued" {
		t.Errorf("job = %v; want queued, no region yet, regions [us-east-1 us-west-2]", job)
	}
	var rung []string
	for len(rung) < 2 {
		msgs, err := st.sqs.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &st.queueURL, WaitTimeSeconds: 1, MaxNumberOfMessages: 10})
		if err != nil || len(msgs.Messages) == 0 {
			break
		}
		for _, m := range msgs.Messages {
			rung = append(rung, aws.ToString(m.Body))
		}
	}
	slices.Sort(rung)
	if want := []string{`{"region":"us-east-1"}`, `{"region":"us-west-2"}`}; !slices.Equal(rung, want) {
		t.Errorf("dispatch rung %v; want each region once %v", rung, want)
	}

	status, out = submit(map[string]any{"regions": []string{"us-west-2"}})
	if job, _ := out["job"].(map[string]any); status != 202 || job["region"] != "us-west-2" {
		t.Errorf("regions [us-west-2] = %d %v; want 202, a job of us-west-2", status, out)
	}
	for _, tc := range []struct {
		name   string
		fields map[string]any
		field  string
	}{
		{"both", map[string]any{"region": "us-east-1", "regions": []string{"us-east-1", "us-west-2"}}, "regions"},
		{"not configured", map[string]any{"regions": []string{"us-east-1", "eu-west-1"}}, "regions[1]"},
		{"twice", map[string]any{"regions": []string{"us-west-2", "us-west-2"}}, "regions[1]"},
		{"empty", map[string]any{"regions": []string{}}, "regions"},
		{"neither", map[string]any{}, "region"},
		{"a choice of its own", map[string]any{"regions": []string{"us-east-1", "us-west-2"}, "region_choice": map[string]any{"region": "us-west-2"}}, ""},
	} {
		status, out := submit(tc.fields)
		if status != 400 {
			t.Errorf("%s: POST /api/v1/jobs = %d %v, want 400", tc.name, status, out)
			continue
		}
		if tc.field != "" && !slices.Contains(problemFields(out), tc.field) {
			t.Errorf("%s: 400 names fields %v, want %s", tc.name, problemFields(out), tc.field)
		}
	}
}

// TestRegionsHostileTenant: another tenant cannot name a region the deployment does not allow,
// cannot read, retry, cancel or move a roaming job of another tenant, and no route shows the
// regions' summaries (room and queue length, which drains keep beside the tenants' records).
func TestRegionsHostileTenant(t *testing.T) {
	tables, db := testenv.Tables(t)
	queueURL, q := testenv.Queue(t, "dispatch")
	tenants := dynamo.NewTenantStore(db, tables.Control)
	store := dynamo.NewJobStore(db, tables)
	checker, err := policy.NewChecker(policy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	api := served(t, httpapi.Deps{
		Principals: tenants, Jobs: store, Templates: dynamo.NewTemplateStore(db, tables.Control),
		Policy: checker, Ringer: wake.New(q, queueURL), Regions: []string{"us-east-1", "us-west-2"},
	})
	st := stack{apis: [2]http.Handler{api, api}}
	owner := memberKey(t, tenants, "owner", "acme", "team-a")
	rival := memberKey(t, tenants, "rival", "evil", "team-z")
	status, out := st.do(t, 0, "POST", "/api/v1/jobs", owner, "application/json",
		mustJSON(map[string]any{"manifest": restrictedJob(nil), "namespace": "team-a", "regions": []string{"us-east-1", "us-west-2"}}), nil)
	if status != 202 {
		t.Fatalf("owner's POST = %d %v", status, out)
	}
	id := out["job"].(map[string]any)["id"].(string)
	if err := store.PutRegionSummary(context.Background(), jobs.RegionSummary{Region: "us-east-1", Room: true, Queue: 7, At: time.Now()}); err != nil {
		t.Fatal(err)
	}

	status, out = st.do(t, 0, "POST", "/api/v1/jobs", rival, "application/json",
		mustJSON(map[string]any{"manifest": restrictedJob(nil), "namespace": "team-z", "regions": []string{"us-east-1", "ap-south-1"}}), nil)
	if status != 400 || !slices.Contains(problemFields(out), "regions[1]") {
		t.Errorf("rival naming ap-south-1 = %d %v; want 400 on regions[1]", status, out)
	}
	status, out = st.do(t, 0, "POST", "/api/v1/jobs", rival, "application/json",
		mustJSON(map[string]any{"manifest": restrictedJob(nil), "namespace": "team-a", "regions": []string{"us-east-1", "us-west-2"}}), nil)
	if status < 400 || status >= 500 {
		t.Errorf("rival submitting into the owner's namespace = %d %v; want a 4xx", status, out)
	}
	for _, r := range []struct{ method, path string }{
		{"GET", "/api/v1/jobs/" + id}, {"POST", "/api/v1/jobs/" + id + "/retry"}, {"DELETE", "/api/v1/jobs/" + id},
		{"GET", "/api/v1/jobs/" + id + "/pods"},
		{"GET", "/api/v1/jobs/" + url.PathEscape("regionsummary#us-east-1")},
	} {
		if status, out := st.do(t, 0, r.method, r.path, rival, "", "", nil); status != 404 {
			t.Errorf("rival %s %s = %d %v; want 404", r.method, r.path, status, out)
		}
	}
	if j, err := store.Job(context.Background(), id); err != nil || j.Status != jobs.StatusQueued || j.Region != "" {
		t.Errorf("owner's job after the rival's tries = %+v, %v; want it queued with no region", j, err)
	}
	for _, path := range []string{"/api/v1/jobs", "/api/v1/queue/stats", "/api/v1/jobs?region=us-east-1"} {
		status, out := st.do(t, 0, "GET", path, rival, "", "", nil)
		b, _ := json.Marshal(out)
		if status != 200 || strings.Contains(string(b), "regionsummary") || strings.Contains(string(b), `"room"`) || strings.Contains(string(b), id) {
			t.Errorf("rival GET %s = %d %s; want 200 with no summary and none of the owner's jobs", path, status, b)
		}
	}
}

func strs(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, s := range l {
		out = append(out, s.(string))
	}
	return out
}

// problemFields lists the fields a 400 names.
func problemFields(body map[string]any) []string {
	var out []string
	fs, _ := body["fields"].([]any)
	for _, f := range fs {
		out = append(out, f.(map[string]any)["field"].(string))
	}
	return out
}
