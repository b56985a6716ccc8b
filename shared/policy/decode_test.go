package policy

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
)

// sameAsConverter reports how decoding doc as kind k differs from what the upstream converter
// makes of it, or "" if it does not. The decoder may refuse what the converter accepts (it
// checks integer ranges), never the other way round, and what both accept must come out equal.
func sameAsConverter(k Kind, doc map[string]any) string {
	r, ok := checkable[k]
	if !ok {
		return ""
	}
	var d decoder
	got := d.decode(doc, r.plan)
	want := reflect.New(r.plan.typ).Interface()
	err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(doc, want, true)
	switch {
	case len(d.errs) > 0:
		return ""
	case err != nil:
		return fmt.Sprintf("decoder accepted what the converter refuses (%v)", err)
	case !equality.Semantic.DeepEqual(got, want):
		return fmt.Sprintf("decoder made\n%+v\nconverter made\n%+v", got, want)
	}
	return ""
}

func TestDecodeMatchesConverter(t *testing.T) {
	var fixtures []map[string]any
	for _, w := range workloads {
		fixtures = append(fixtures, w.wrap(fromYAML(t, goodPodSpec)))
		for _, pos := range positions {
			for _, m := range containerMutations {
				fixtures = append(fixtures, w.wrap(withContainer(t, pos.name, m.mutate)))
			}
		}
		for _, m := range podMutations {
			spec := fromYAML(t, goodPodSpec)
			m.mutate(spec)
			fixtures = append(fixtures, w.wrap(spec))
		}
	}
	fixtures = append(fixtures, docs(t, `
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, labels: {a: b}, annotations: {empty: null}, creationTimestamp: "2026-01-02T03:04:05Z"}
data: {key: value}
binaryData: {blob: aGVsbG8=}
---
apiVersion: v1
kind: Secret
metadata: {name: s}
type: Opaque
data: {password: aHVudGVyMg==}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web}, ports: [{name: http, port: 80, targetPort: http}, {port: 81, targetPort: 8081}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  replicas: 3
  revisionHistoryLimit: null
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 25%, maxUnavailable: 1}}
  selector: {matchLabels: {app: d}, matchExpressions: [{key: tier, operator: In, values: [a, b]}]}
  template:
    metadata: {labels: {app: d}}
    spec:
      terminationGracePeriodSeconds: 30
      containers:
      - name: c
        image: x
        env: [{name: A, value: "1"}, {name: B, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
        resources: {limits: {cpu: 1.5, memory: 1e9}}
        readinessProbe: {httpGet: {path: /, port: 8080}, periodSeconds: 5}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: pdb}
spec: {minAvailable: 50%, selector: {matchLabels: {app: d}}}
`)...)
	for i, doc := range fixtures {
		k := Kind{doc["apiVersion"].(string), doc["kind"].(string)}
		if diff := sameAsConverter(k, doc); diff != "" {
			t.Errorf("decoding fixture %d (%s): %s", i, k, diff)
		}
	}
}

func TestDecodeReportsWhere(t *testing.T) {
	doc := fromYAML(t, `
apiVersion: v1
kind: Pod
metadata: {name: p, labels: {a: 1}}
spec:
  containers:
  - name: c
    image: x
    env: [{name: A, valu: "1"}]
    resources: {requests: {cpu: [1]}}
  volumes: 7
`)
	var d decoder
	d.decode(doc, checkable[Kind{"v1", "Pod"}].plan)
	got := map[string]string{}
	for _, e := range d.errs {
		got[e.path] = e.message
	}
	want := map[string]string{
		"metadata.labels[a]":                         "must be a string, not a number",
		"spec.containers[0].env[0].valu":             `unknown field "valu": remove it or correct its spelling`,
		"spec.containers[0].resources.requests[cpu]": `"[1]" is not a quantity: write one such as 500m, 2, 512Mi or 4Gi`,
		"spec.volumes":                               "must be a list, not a number",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoding a Pod with four errors reported %v, want %v", got, want)
	}
}

// Quantities that would make parsing or comparing them take seconds or forever are refused, fast.
func TestDecodeRefusesRuinousQuantities(t *testing.T) {
	for _, q := range []any{"1e999999999", "0e999999999", "1e-99999999", "1E+999", 1e300, "1" + strings.Repeat("0", 100)} {
		doc := map[string]any{"apiVersion": "v1", "kind": "Pod", "spec": map[string]any{"containers": []any{
			map[string]any{"name": "c", "resources": map[string]any{"limits": map[string]any{"cpu": q}}},
		}}}
		start := time.Now()
		var d decoder
		d.decode(doc, checkable[Kind{"v1", "Pod"}].plan)
		if len(d.errs) != 1 || d.errs[0].path != "spec.containers[0].resources.limits[cpu]" {
			t.Errorf("decoding cpu %v: errors %v, want one at the cpu limit", q, d.errs)
		}
		if took := time.Since(start); took > time.Second { // the ruinous ones take seconds to forever; refusing takes microseconds
			t.Errorf("decoding cpu %v took %v", q, took)
		}
	}
	for _, q := range []any{"500m", "2", 1.5, "4Gi", "1e3", "1E", "5Ei"} {
		if _, ok := parseQuantity(fmt.Sprint(q)); !ok {
			t.Errorf("parseQuantity(%v) refused a real quantity", q)
		}
	}
}
