package policy

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tidegate/tidegate/shared/manifest"
)

// The benchmarks here hold the check against the straightforward way to admit the same
// manifests: encoding/json, refusing unknown fields, from each document's JSON text into the
// typed object of its kind (read first from its apiVersion and kind), then the upstream
// evaluator's EvaluatePod on each pod template. Both sides start from the request's bytes (a JSON
// array of the documents) and end with a verdict, so ours includes the strict decoder that
// hands the check its manifests. Each alternates with the straightforward side in blocks and
// reports ours/theirs as x-straight (the goal is 1.0 or less); x-upstream beside it is the same
// check against EvaluatePod alone on objects already typed.

// straightRound is one round of the straightforward admission of the documents in body: split
// the array, read each document's kind, decode it strictly into its typed object, evaluate its
// pods. It fails b if any document is refused, as none of the benchmark's is.
func straightRound(b *testing.B, body []byte) func() {
	evaluator := evaluatorOnce
	return func() {
		var docs []json.RawMessage
		if err := json.Unmarshal(body, &docs); err != nil {
			b.Fatal(err)
		}
		for _, doc := range docs {
			var tm metav1.TypeMeta
			if err := json.Unmarshal(doc, &tm); err != nil {
				b.Fatal(err)
			}
			rule, ok := checkable[Kind{tm.APIVersion, tm.Kind}]
			if !ok {
				b.Fatalf("no typed object for %s %s", tm.APIVersion, tm.Kind)
			}
			obj := reflect.New(rule.plan.typ).Interface()
			dec := json.NewDecoder(bytes.NewReader(doc))
			dec.DisallowUnknownFields()
			if err := dec.Decode(obj); err != nil {
				b.Fatalf("decoding %s: %v", tm.Kind, err)
			}
			if rule.pod == nil {
				continue
			}
			p := rule.pod(obj)
			for _, r := range evaluator.EvaluatePod(restricted, p.meta, p.spec) {
				if !r.Allowed {
					b.Fatalf("upstream refuses a benchmark pod: %s", r.ForbiddenReason)
				}
			}
		}
	}
}

// benchAgainstStraight times the strict decoder and Check on the manifests' JSON text against
// straightRound on the same text, alternating blocks of rounds so that load on the machine
// falls on both alike. ns/op, B/op and allocs/op are ours alone.
func benchAgainstStraight(b *testing.B, manifests []map[string]any) {
	body, err := json.Marshal(manifests)
	if err != nil {
		b.Fatal(err)
	}
	c := benchChecker(b)
	ours := func() {
		ms, err := manifest.DecodeJSON(body, manifest.DefaultLimits)
		if err != nil {
			b.Fatal(err)
		}
		if res := c.Check(Request{Manifests: ms, Namespaces: []string{"team-a"}, DefaultNamespace: "team-a"}); !res.Allowed() {
			b.Fatalf("the benchmark's manifests are refused: %v", res.Violations)
		}
	}
	theirs := straightRound(b, body)
	b.ReportMetric(alternate(b, max(1, podsPerBlock/len(manifests)), ours, theirs), "x-straight")
}

func BenchmarkStraightDeployment(b *testing.B) { benchAgainstStraight(b, decoded(b, benchDeployment)) }

func BenchmarkStraightBundle20(b *testing.B) { benchAgainstStraight(b, bundle20(b)) }
