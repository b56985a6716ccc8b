package policy

import (
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// Fixtures in the style of Kyverno's pod-security tests: a compliant ("good") pod spec, the
// workload kinds that carry one, and mutations that each make it "bad" in one way.

// goodPodSpec is a pod spec the restricted profile admits, in YAML.
const goodPodSpec = `
securityContext:
  runAsNonRoot: true
  seccompProfile: {type: RuntimeDefault}
containers:
- name: main
  image: ghcr.io/acme/train:1.0
  resources:
    requests: {cpu: 500m, memory: 256Mi}
    limits: {cpu: "1", memory: 512Mi}
  securityContext:
    allowPrivilegeEscalation: false
    capabilities: {drop: [ALL]}
`

// goodContainer is a compliant container for any position.
const goodContainer = `
name: extra
image: ghcr.io/acme/helper:1.0
securityContext:
  allowPrivilegeEscalation: false
  capabilities: {drop: [ALL]}
`

// workload is a kind that carries a pod spec, and where.
type workload struct {
	kind     Kind
	specPath string
	wrap     func(spec map[string]any) map[string]any
}

func meta(name string) map[string]any { return map[string]any{"name": name} }

func template(spec map[string]any) map[string]any {
	return map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "x"}}, "spec": spec}
}

var selector = map[string]any{"matchLabels": map[string]any{"app": "x"}}

var workloads = []workload{
	{Kind{"v1", "Pod"}, "spec", func(s map[string]any) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta("p"), "spec": s}
	}},
	{Kind{"batch/v1", "Job"}, "spec.template.spec", func(s map[string]any) map[string]any {
		s["restartPolicy"] = "Never"
		return map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": meta("j"), "spec": map[string]any{"template": template(s)}}
	}},
	{Kind{"batch/v1", "CronJob"}, "spec.jobTemplate.spec.template.spec", func(s map[string]any) map[string]any {
		s["restartPolicy"] = "OnFailure"
		return map[string]any{"apiVersion": "batch/v1", "kind": "CronJob", "metadata": meta("cj"), "spec": map[string]any{
			"schedule": "0 3 * * *", "jobTemplate": map[string]any{"spec": map[string]any{"template": template(s)}}}}
	}},
	{Kind{"apps/v1", "Deployment"}, "spec.template.spec", func(s map[string]any) map[string]any {
		return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta("d"), "spec": map[string]any{
			"replicas": 2.0, "selector": selector, "template": template(s)}}
	}},
	{Kind{"apps/v1", "StatefulSet"}, "spec.template.spec", func(s map[string]any) map[string]any {
		return map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta("s"), "spec": map[string]any{
			"serviceName": "s", "selector": selector, "template": template(s)}}
	}},
}

// fromYAML decodes YAML as the manifest decoder will: numbers become float64.
func fromYAML(t testing.TB, s string) map[string]any {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(s))
	if err != nil {
		t.Fatalf("fixture YAML: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		t.Fatalf("fixture JSON: %v", err)
	}
	return m
}

// docs decodes a bundle of YAML documents separated by "---".
func docs(t testing.TB, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, d := range strings.Split(s, "\n---\n") {
		out = append(out, fromYAML(t, d))
	}
	return out
}

// at walks a decoded manifest by keys and list indexes, for mutating fixtures.
func at(m map[string]any, path ...any) map[string]any {
	var cur any = m
	for _, p := range path {
		switch k := p.(type) {
		case string:
			next, ok := cur.(map[string]any)[k]
			if !ok {
				next = map[string]any{}
				cur.(map[string]any)[k] = next
			}
			cur = next
		case int:
			cur = cur.([]any)[k]
		}
	}
	return cur.(map[string]any)
}

// positions are the places a container can sit, and the index the mutated one gets there.
var positions = []struct {
	name  string
	index int
}{{"containers", 1}, {"initContainers", 0}, {"ephemeralContainers", 0}}

// withContainer returns a good pod spec with a compliant container added at position, mutated.
func withContainer(t testing.TB, position string, mutate func(c map[string]any)) map[string]any {
	spec := fromYAML(t, goodPodSpec)
	c := fromYAML(t, goodContainer)
	mutate(c)
	list, _ := spec[position].([]any)
	spec[position] = append(list, c)
	return spec
}

func tenantRequest(manifests ...map[string]any) Request {
	return Request{Manifests: manifests, Namespaces: []string{"team-a", "team-b"}, DefaultNamespace: "team-a"}
}

func mustChecker(t testing.TB, cfg Config) *Checker {
	t.Helper()
	c, err := NewChecker(cfg)
	if err != nil {
		t.Fatalf("NewChecker: %v", err)
	}
	return c
}

// fields projects violations onto what the matrix tests compare.
type located struct {
	Document int
	Field    string
}

func fieldsOf(vs []Violation) []located {
	if len(vs) == 0 {
		return nil
	}
	out := make([]located, len(vs))
	for i, v := range vs {
		out[i] = located{v.Document, v.Field}
	}
	return out
}
