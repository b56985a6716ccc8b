package policy

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	psa "k8s.io/pod-security-admission/policy"
)

// FuzzCheck feeds the policy arbitrary JSON manifests (one object, or a list of them) and
// holds it to three things: it never panics; whatever its decoder accepts, the upstream
// converter decodes to the same object; and whatever it admits, the upstream Pod Security
// evaluator admits too, for every pod in it, decoded by the upstream converter.
func FuzzCheck(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed)
	}
	c := mustChecker(f, Config{Kinds: checkableKinds()})
	evaluator, err := psa.NewEvaluator(psa.DefaultChecks(), nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if json.Unmarshal(data, &v) != nil {
			return
		}
		var manifests []map[string]any
		switch v := v.(type) {
		case map[string]any:
			manifests = []map[string]any{v}
		case []any:
			for _, d := range v {
				m, _ := d.(map[string]any)
				manifests = append(manifests, m)
			}
		default:
			return
		}
		res := c.Check(Request{Manifests: manifests, Namespaces: []string{"team-a"}, DefaultNamespace: "team-a"})
		if len(res.Manifests) != len(manifests) {
			t.Fatalf("Check returned %d manifests for %d", len(res.Manifests), len(manifests))
		}
		for i, m := range res.Manifests {
			k, ok := kindOf(m)
			if !ok {
				continue
			}
			if diff := sameAsConverter(k, m); diff != "" {
				t.Errorf("document %d (%s): %s", i, k, diff)
			}
			if !res.Allowed() {
				continue
			}
			r := checkable[k]
			obj := reflect.New(r.plan.typ).Interface()
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(m, obj, true); err != nil {
				t.Fatalf("Check admitted document %d (%s), which the upstream converter refuses: %v", i, k, err)
			}
			if r.pod == nil {
				continue
			}
			p := r.pod(obj)
			for _, cr := range evaluator.EvaluatePod(restricted, p.meta, p.spec) {
				if !cr.Allowed {
					t.Fatalf("Check admitted document %d (%s), which the upstream evaluator refuses: %s (%s)", i, k, cr.ForbiddenReason, cr.ForbiddenDetail)
				}
			}
		}
	})
}

func kindOf(m map[string]any) (Kind, bool) {
	av, _ := m["apiVersion"].(string)
	k, _ := m["kind"].(string)
	_, ok := checkable[Kind{av, k}]
	return Kind{av, k}, ok
}

// fuzzSeeds are the fixtures as JSON: good and bad pods and controllers, and a bundle.
func fuzzSeeds(tb testing.TB) [][]byte {
	var seeds [][]byte
	add := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	for _, w := range workloads {
		add(w.wrap(fromYAML(tb, goodPodSpec)))
		for _, pos := range positions {
			add(w.wrap(withContainer(tb, pos.name, containerMutations[0].mutate)))
		}
	}
	// Every bad container and bad pod, once, in the smallest wrapper.
	pod := workloads[0]
	for _, m := range containerMutations {
		add(pod.wrap(withContainer(tb, "containers", m.mutate)))
	}
	for _, m := range podMutations {
		spec := fromYAML(tb, goodPodSpec)
		m.mutate(spec)
		add(pod.wrap(spec))
	}
	for _, m := range podFieldCases(tb) {
		spec := fromYAML(tb, goodPodSpec)
		m.mutate(spec)
		add(pod.wrap(spec))
	}
	add(bundle20(tb))
	add(bundle20(tb)[:3])
	add([]any{map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": meta("s"), "spec": map[string]any{"type": "NodePort"}}, nil})
	return seeds
}
