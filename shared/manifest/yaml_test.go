package manifest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// yamlJob is a minimal valid manifest in YAML; extra fields go under metadata, two spaces in.
const yamlJob = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\n"

// withMeta is a Job manifest whose metadata also holds extra.
func withMeta(extra map[string]any) map[string]any {
	meta := map[string]any{"name": "train"}
	for k, v := range extra {
		meta[k] = v
	}
	return map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": meta}
}

func TestDecodeYAMLAccepts(t *testing.T) {
	n := func(s string) json.Number { return json.Number(s) }
	tests := []struct {
		name string
		in   string
		want []map[string]any
	}{
		{"one document", yamlJob, []map[string]any{withMeta(nil)}},
		{"empty and comment-only documents skipped", "---\n" + yamlJob + "---\n---\n# nothing here\n---\n" + yamlJob + "---\n",
			[]map[string]any{withMeta(nil), withMeta(nil)}},
		{"JSON is YAML", strings.Replace(job, "%s", "", 1), []map[string]any{withMeta(nil)}},
		{"numbers keep their literal", yamlJob + "  n: [1, 1.5, 1e3, -0, 12345678901234567890, 99999999999999999999999]\n",
			[]map[string]any{withMeta(map[string]any{"n": []any{n("1"), n("1.5"), n("1e3"), n("-0"), n("12345678901234567890"), n("99999999999999999999999")}})}},
		{"YAML-only numbers become decimal", yamlJob + "  n: [0777, 0o17, 0x1F, 0b101, +12, 1_000, .5, 1., 08]\n",
			[]map[string]any{withMeta(map[string]any{"n": []any{n("511"), n("15"), n("31"), n("5"), n("12"), n("1000"), n("0.5"), n("1"), n("8")}})}},
		{"quoted stays a string", yamlJob + "  s:\n  - '1'\n  - \"yes\"\n  - !!str on\n  - \"0777\"\n  - |\n    text\n",
			[]map[string]any{withMeta(map[string]any{"s": []any{"1", "yes", "on", "0777", "text\n"}})}},
		{"booleans and nulls", yamlJob + "  b: [true, False, TRUE, null, ~, ]\n",
			[]map[string]any{withMeta(map[string]any{"b": []any{true, false, true, nil, nil}})}},
		{"timestamps stay text", yamlJob + "  at: 2001-12-14t21:59:43.10-05:00\n",
			[]map[string]any{withMeta(map[string]any{"at": "2001-12-14t21:59:43.10-05:00"})}},
		{"a << value is text", yamlJob + "  x: <<\n",
			[]map[string]any{withMeta(map[string]any{"x": "<<"})}},
		{"dotted and quoted keys", yamlJob + "  labels:\n    app.kubernetes.io/name: x\n    \"1\": z\n",
			[]map[string]any{withMeta(map[string]any{"labels": map[string]any{"app.kubernetes.io/name": "x", "1": "z"}})}},
		{"YAML 1.1 boolean words as keys", yamlJob + "  on: x\n  n: 1\n  NO: 2\n",
			[]map[string]any{withMeta(map[string]any{"on": "x", "n": json.Number("1"), "NO": json.Number("2")})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeYAML([]byte(tt.in), DefaultLimits)
			if err != nil {
				t.Fatalf("DecodeYAML(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DecodeYAML(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestDecodeYAMLRefuses(t *testing.T) {
	deep := yamlJob + "  d: " + strings.Repeat("[", 70) + strings.Repeat("]", 70) + "\n"
	tests := []struct {
		name   string
		in     string
		limits Limits
		want   Error // Problem is matched as a prefix
	}{
		{"duplicate top-level key", yamlJob + "kind: Pod\n", Limits{},
			Error{Document: 0, Path: "kind", Line: 5, Problem: `duplicate key "kind" (first at line 2)`}},
		{"duplicate nested key", yamlJob + "---\n" + yamlJob + "  labels:\n    app: a\n    app: b\n", Limits{},
			Error{Document: 1, Path: "metadata.labels.app", Line: 12, Problem: `duplicate key "app" (first at line 11)`}},
		{"anchor", yamlJob + "  a: &x {b: 1}\n", Limits{},
			Error{Document: 0, Path: "metadata.a", Line: 5, Problem: "YAML anchors (&x) are not accepted"}},
		{"merge key", yamlJob + "  a:\n    <<: {b: 1}\n", Limits{},
			Error{Document: 0, Path: "metadata.a", Line: 6, Problem: "YAML merge keys (<<) are not accepted"}},
		{"custom tag", yamlJob + "  a: !secret x\n", Limits{},
			Error{Document: 0, Path: "metadata.a", Line: 5, Problem: "YAML tag !secret is not accepted"}},
		{"binary tag", yamlJob + "  a: !!binary aGk=\n", Limits{},
			Error{Document: 0, Path: "metadata.a", Line: 5, Problem: "YAML tag !!binary is not accepted"}},
		{"set tag", yamlJob + "  a: !!set {x: null}\n", Limits{},
			Error{Document: 0, Path: "metadata.a", Line: 5, Problem: "YAML tag !!set is not accepted"}},
		{"number key", yamlJob + "  1: x\n", Limits{},
			Error{Document: 0, Path: "metadata", Line: 5, Problem: `the key "1" is read as a number`}},
		{"bool key", yamlJob + "  true: x\n", Limits{},
			Error{Document: 0, Path: "metadata", Line: 5, Problem: `the key "true" is read as a boolean`}},
		{"object key", yamlJob + "  ? {a: 1}\n  : x\n", Limits{},
			Error{Document: 0, Path: "metadata", Line: 5, Problem: "a key must be a string"}},
		{"YAML 1.1 boolean value", yamlJob + "  enabled: yes\n", Limits{},
			Error{Document: 0, Path: "metadata.enabled", Line: 5, Problem: `"yes" is a boolean in YAML 1.1`}},
		{"YAML 1.1 boolean in a list", yamlJob + "  flags: [true, Off]\n", Limits{},
			Error{Document: 0, Path: "metadata.flags[1]", Line: 5, Problem: `"Off" is a boolean in YAML 1.1`}},
		{"infinity", yamlJob + "  n: .inf\n", Limits{},
			Error{Document: 0, Path: "metadata.n", Line: 5, Problem: `".inf" is not a number JSON can hold`}},
		{"out of range", yamlJob + "  n: 1e400\n", Limits{},
			Error{Document: 0, Path: "metadata.n", Line: 5, Problem: "the number 1e400 is out of range"}},
		{"too deep", deep, Limits{},
			Error{Document: 0, Path: "metadata.d" + strings.Repeat("[0]", 62), Line: 5, Problem: "nested deeper than 64 levels"}},
		{"too many values", yamlJob + "  d: [1, 2, 3]\n", Limits{MaxNodes: 7},
			Error{Document: 0, Path: "metadata.d[1]", Line: 5, Problem: "more than 7 values"}},
		{"too many documents", strings.Repeat(yamlJob+"---\n", 3) + "---\n" + yamlJob, Limits{MaxDocuments: 3},
			Error{Document: -1, Line: 17, Problem: "more than 3 manifests"}},
		{"too many empty documents", strings.Repeat("---\n", 7) + yamlJob, Limits{MaxDocuments: 3},
			Error{Document: -1, Line: 7, Problem: "more than 6 YAML documents, empty ones included"}},
		{"only empty documents", "---\n---\n# hi\n", Limits{}, Error{Document: -1, Problem: "no manifests"}},
		{"null document", yamlJob + "---\n~\n", Limits{}, Error{Document: 1, Line: 6, Problem: "a manifest must be an object, not null"}},
		{"a list", "- " + strings.Replace(job, "%s", "", 1) + "\n", Limits{},
			Error{Document: 0, Line: 1, Problem: "a manifest must be an object, not an array"}},
		{"no kind", "apiVersion: v1\nmetadata: {name: a}\n", Limits{},
			Error{Document: 0, Path: "kind", Line: 1, Problem: "kind is missing; set it (for example Job)"}},
		{"syntax", yamlJob + "  a: [\n", Limits{}, Error{Document: 0, Line: 5, Problem: "invalid YAML: did not find expected node content"}},
		{"not UTF-8", yamlJob + "  a: \xff\n", Limits{}, Error{Document: -1, Line: 5, Problem: "the input is not valid UTF-8 (at byte 60)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := DecodeYAML([]byte(tt.in), tt.limits)
			checkRefusal(t, "DecodeYAML", tt.in, docs, err, tt.want)
		})
	}
}

// billionLaughs is the classic alias bomb: nine references to nine references, nine levels
// deep, 9⁹ (387 million) "lol"s once expanded, from a few hundred bytes.
func billionLaughs() string {
	var b strings.Builder
	b.WriteString(yamlJob + "  a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	for c := 'b'; c <= 'i'; c++ {
		refs := strings.Repeat(fmt.Sprintf("*%c,", c-1), 9)
		fmt.Fprintf(&b, "  %c: &%c [%s]\n", c, c, refs[:len(refs)-1])
	}
	return b.String()
}

func TestDecodeYAMLRefusesAliasBombFast(t *testing.T) {
	// The "well under a second"; the refusal itself takes microseconds, and the bound
	// leaves room for a loaded CI machine.
	const budget = 500 * time.Millisecond
	for _, in := range []string{
		billionLaughs(),
		// The same bomb as the last of a hundred manifests.
		strings.Repeat(yamlJob+"---\n", 99) + billionLaughs(),
	} {
		start := time.Now()
		docs, err := DecodeYAML([]byte(in), DefaultLimits)
		took := time.Since(start)
		if err == nil {
			t.Fatalf("DecodeYAML(alias bomb) = %d documents; want it refused", len(docs))
		}
		if !strings.Contains(err.Error(), "YAML a") || took > budget {
			t.Errorf("DecodeYAML(alias bomb) = %v after %v; want an anchor or alias refusal within %v", err, took, budget)
		}
	}
}
