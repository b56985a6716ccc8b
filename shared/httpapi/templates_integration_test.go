package httpapi_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// templateJob is a Job whose image tag, parallelism and a command argument are parameters.
func templateJob() map[string]any {
	j := restrictedJob(func(pod map[string]any) {
		c := container(pod)
		c["image"] = "busybox:{{ tag }}"
		c["command"] = []any{"echo", "{{ message }}"}
	})
	j["spec"].(map[string]any)["parallelism"] = "{{ workers }}"
	return j
}

func TestTemplates(t *testing.T) {
	st := newStack(t)
	create := mustJSON(map[string]any{"name": "train", "description": "a training run", "manifest": templateJob(), "parameters": map[string]any{"tag": "1.36"}})
	if status, out := st.do(t, 0, "POST", "/api/v1/templates", st.member, "application/json", create, nil); status != 201 {
		t.Fatalf("POST /api/v1/templates = %d %v, want 201", status, out)
	}
	if status, out := st.do(t, 0, "POST", "/api/v1/templates", st.member, "application/json", create, nil); status != 409 {
		t.Errorf("creating it again = %d %v, want 409", status, out)
	}
	if status, out := st.do(t, 1, "GET", "/api/v1/templates/train", st.viewer, "", "", nil); status != 404 {
		t.Errorf("another tenant's GET = %d %v, want 404: templates are per tenant", status, out)
	}

	injection := `"}}, {"privileged": true} \" \\ {{ tag }}`
	run := mustJSON(map[string]any{"name": "train-1", "namespace": "team-a", "region": "us-east-1", "priority": 80,
		"parameters": map[string]any{"workers": 4, "message": injection}})
	status, out := st.do(t, 1, "POST", "/api/v1/templates/train/jobs", st.member, "application/json", run, nil)
	if status != 202 {
		t.Fatalf("POST /api/v1/templates/train/jobs = %d %v, want 202", status, out)
	}
	m := out["job"].(map[string]any)["manifests"].([]any)[0].(map[string]any)
	spec := m["spec"].(map[string]any)
	if spec["parallelism"] != json.Number("4") {
		t.Errorf("parallelism = %#v, want the number 4", spec["parallelism"])
	}
	c := spec["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	if c["image"] != "busybox:1.36" {
		t.Errorf("image = %v, want busybox:1.36 from the default", c["image"])
	}
	if cmd := c["command"].([]any); cmd[1] != injection {
		t.Errorf("command[1] = %q, want exactly %q", cmd[1], injection)
	}
	if _, ok := c["securityContext"].(map[string]any)["privileged"]; ok {
		t.Errorf("a parameter value injected a field: %v", c["securityContext"])
	}
	if m["metadata"].(map[string]any)["name"] != "train-1" {
		t.Errorf("metadata.name = %v, want train-1", m["metadata"])
	}

	tests := []struct {
		name       string
		params     map[string]any
		wantFields []string
	}{
		{"missing", map[string]any{"workers": 1}, []string{"parameters.message"}},
		{"unknown", map[string]any{"workers": 1, "message": "x", "colour": "red"}, []string{"parameters.colour"}},
		{"both", map[string]any{"colour": "red"}, []string{"parameters.message", "parameters.workers", "parameters.colour"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := mustJSON(map[string]any{"name": "x", "namespace": "team-a", "region": "us-east-1", "parameters": tt.params})
			status, out := st.do(t, 0, "POST", "/api/v1/templates/train/jobs", st.member, "application/json", body, nil)
			if status != 400 {
				t.Fatalf("= %d %v, want 400", status, out)
			}
			var got []string
			for _, f := range out["fields"].([]any) {
				got = append(got, f.(map[string]any)["field"].(string))
			}
			for _, w := range tt.wantFields {
				if !slices.Contains(got, w) {
					t.Errorf("fields %v do not name %s", got, w)
				}
			}
		})
	}

	// A template's run takes a job's spot settings, the deadline's included.
	spotRun := map[string]any{"name": "train-spot", "namespace": "team-a", "region": "us-east-1", "parameters": map[string]any{"workers": 1, "message": "x"},
		"max_spot_price": 0.4, "spot_instance_type": "g5.xlarge", "spot_deadline": "1h", "on_deadline": "on_demand"}
	status, out = st.do(t, 0, "POST", "/api/v1/templates/train/jobs", st.member, "application/json", mustJSON(spotRun), nil)
	if spot, _ := out["job"].(map[string]any)["spot"].(map[string]any); status != 202 || spot["on_deadline"] != "on_demand" || spot["deadline"] == nil {
		t.Errorf("a template run with a spot deadline = %d %v, want 202 and the deadline on the job", status, out)
	}
	delete(spotRun, "max_spot_price")
	spotRun["name"] = "train-spot-2"
	status, out = st.do(t, 0, "POST", "/api/v1/templates/train/jobs", st.member, "application/json", mustJSON(spotRun), nil)
	if fields, _ := out["fields"].([]any); status != 400 || !slices.ContainsFunc(fields, func(f any) bool { return f.(map[string]any)["field"] == "spot_deadline" }) {
		t.Errorf("a template run with a deadline and no cap = %d %v, want 400 naming spot_deadline", status, out)
	}

	replace := mustJSON(map[string]any{"manifest": templateJob(), "parameters": map[string]any{"tag": "1.37", "workers": 2, "message": "hi"}})
	if status, out := st.do(t, 0, "PUT", "/api/v1/templates/train", st.member, "application/json", replace, nil); status != 200 {
		t.Errorf("PUT = %d %v, want 200", status, out)
	}
	if status, out := st.do(t, 0, "GET", "/api/v1/templates", st.member, "", "", nil); status != 200 || len(out["items"].([]any)) != 1 {
		t.Errorf("GET /api/v1/templates = %d %v, want one", status, out)
	}
	if status, _ := st.do(t, 0, "DELETE", "/api/v1/templates/train", st.member, "", "", nil); status != 204 {
		t.Errorf("DELETE = %d, want 204", status)
	}
	if status, _ := st.do(t, 0, "GET", "/api/v1/templates/train", st.member, "", "", nil); status != 404 {
		t.Errorf("GET after DELETE = %d, want 404", status)
	}
}

// TestSeedTemplateExample: a template as the seed API's own example writes it, its object named
// {{name}} and a default (image) that no placeholder uses, is saved with a warning about the
// default and makes a job named as the request says; a parameter called name, or a default for it,
// is refused naming it.
func TestSeedTemplateExample(t *testing.T) {
	st := newStack(t)
	manifest := templateJob()
	manifest["metadata"] = map[string]any{"name": "{{name}}"}
	create := mustJSON(map[string]any{"name": "gpu-training-template", "description": "Template for GPU training jobs", "manifest": manifest,
		"parameters": map[string]any{"image": "pytorch/pytorch:latest", "tag": "1.36", "workers": 1, "message": "hi"}})
	status, out := st.do(t, 0, "POST", "/api/v1/templates", st.member, "application/json", create, nil)
	if status != 201 {
		t.Fatalf("POST the seed's template = %d %v, want 201", status, out)
	}
	if w, _ := out["warnings"].([]any); len(w) != 1 || !strings.Contains(w[0].(string), "parameters.image") {
		t.Errorf("warnings = %v, want one naming parameters.image, which no placeholder uses", out["warnings"])
	}
	run := mustJSON(map[string]any{"name": "my-training-job", "namespace": "team-a", "region": "us-east-1"})
	status, out = st.do(t, 1, "POST", "/api/v1/templates/gpu-training-template/jobs", st.member, "application/json", run, nil)
	if status != 202 {
		t.Fatalf("a job from the seed's template = %d %v, want 202", status, out)
	}
	m := out["job"].(map[string]any)["manifests"].([]any)[0].(map[string]any)
	if m["metadata"].(map[string]any)["name"] != "my-training-job" {
		t.Errorf("metadata.name = %v, want my-training-job from {{name}}", m["metadata"])
	}

	named := mustJSON(map[string]any{"name": "j2", "namespace": "team-a", "region": "us-east-1", "parameters": map[string]any{"name": "other"}})
	status, out = st.do(t, 1, "POST", "/api/v1/templates/gpu-training-template/jobs", st.member, "application/json", named, nil)
	if status != 400 || !strings.Contains(fmt.Sprint(out["fields"]), "parameters.name") {
		t.Errorf("a job giving a parameter name = %d %v, want 400 naming parameters.name", status, out)
	}
	withName := mustJSON(map[string]any{"name": "named", "manifest": manifest, "parameters": map[string]any{"name": "x", "tag": "1", "workers": 1, "message": "m"}})
	status, out = st.do(t, 0, "POST", "/api/v1/templates", st.member, "application/json", withName, nil)
	if status != 400 || !strings.Contains(fmt.Sprint(out["fields"]), "parameters.name") {
		t.Errorf("a template defaulting name = %d %v, want 400 naming parameters.name", status, out)
	}
}
