package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/tidegate/tidegate/shared/demand"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/policy"
	"github.com/tidegate/tidegate/shared/tenancy"
	"github.com/tidegate/tidegate/shared/wake"
)

// stack is two API processes' worth of handlers on one set of tables and one dispatch queue, with
// a member key and a viewer key.
type stack struct {
	apis           [2]http.Handler
	member, viewer string
	rival          string // a member of another tenant, of another namespace
	queueURL       string
	sqs            *sqs.Client
	leases         *dynamo.LeaseStore // the drains' leases, for takeCensus; set by limitStack
}

func newStack(t *testing.T) stack {
	t.Helper()
	tables, db := testenv.Tables(t)
	queueURL, q := testenv.Queue(t, "dispatch")
	ctx := context.Background()
	store := dynamo.NewTenantStore(db, tables.Control)
	now := time.Now()
	st := stack{queueURL: queueURL, sqs: q}
	for _, tn := range []struct {
		name, org  string
		namespaces []string
		role       tenancy.Role
		key        *string
	}{
		{"ml", "acme", []string{"team-a", "team-b"}, tenancy.RoleMember, &st.member},
		{"watch", "acme", []string{"team-a", "team-b"}, tenancy.RoleViewer, &st.viewer},
		{"rival", "rivalco", []string{"team-z"}, tenancy.RoleMember, &st.rival},
	} {
		if err := store.PutTenant(ctx, tenancy.Tenant{Name: tn.name, Org: tn.org, Namespaces: tn.namespaces, Role: tn.role, CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
		*tn.key, _ = tenancy.NewKey()
		if err := store.AddKey(ctx, tn.name, *tn.key, now); err != nil {
			t.Fatal(err)
		}
	}
	for i := range st.apis {
		// The container defaults are Tidegate's own (config.DefaultContainerCPURequest and
		// DefaultContainerMemoryRequest), as the API's wiring reads them.
		checker, err := policy.NewChecker(policy.Config{ContainerDefaults: demand.Defaults{CPU: resource.MustParse("100m"), Memory: resource.MustParse("256Mi")}})
		if err != nil {
			t.Fatal(err)
		}
		st.apis[i] = served(t, httpapi.Deps{
			Principals: store, Jobs: dynamo.NewJobStore(db, tables), Templates: dynamo.NewTemplateStore(db, tables.Control),
			Policy: checker, Ringer: wake.New(q, queueURL), Regions: []string{"us-east-1", "us-west-2"},
			CheckpointBucket: "ckpt",
		})
	}
	return st
}

// do sends one request to API process i and answers the status and decoded body.
func (st stack) do(t *testing.T, i int, method, path, key, contentType, body string, header map[string]string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	st.apis[i].ServeHTTP(rec, req)
	var out map[string]any
	if rec.Body.Len() > 0 {
		dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
		dec.UseNumber()
		if err := dec.Decode(&out); err != nil {
			t.Fatalf("%s %s: body is not JSON: %q", method, path, rec.Body)
		}
	}
	return rec.Code, out
}

// restrictedJob is a Job that meets the restricted Pod Security profile; edit tweaks it first.
func restrictedJob(edit func(pod map[string]any)) map[string]any {
	pod := map[string]any{
		"restartPolicy": "Never",
		"securityContext": map[string]any{
			"runAsNonRoot": true, "runAsUser": 1000, "seccompProfile": map[string]any{"type": "RuntimeDefault"},
		},
		"containers": []any{map[string]any{
			"name": "main", "image": "busybox:1.36", "command": []any{"true"},
			"securityContext": map[string]any{"allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []any{"ALL"}}},
		}},
	}
	if edit != nil {
		edit(pod)
	}
	return map[string]any{
		"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "train"},
		"spec": map[string]any{"template": map[string]any{"spec": pod}},
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func container(pod map[string]any) map[string]any {
	return pod["containers"].([]any)[0].(map[string]any)
}

// violationFields lists the field of each violation in a 422 body.
func violationFields(body map[string]any) []string {
	var fields []string
	vs, _ := body["violations"].([]any)
	for _, v := range vs {
		fields = append(fields, v.(map[string]any)["field"].(string))
	}
	return fields
}
