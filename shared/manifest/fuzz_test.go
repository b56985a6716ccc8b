package manifest

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fuzzBudget is the most one fuzz input may take to decode. Fuzz inputs are small (the
// engine's default cap is 1 MB, mostly far less); a decode that is linear in its input
// finishes them in well under a millisecond, so a second flags only runaway work, even on a
// loaded 2-core machine running the rest of the suite beside it.
const fuzzBudget = time.Second

// roundTripLimits re-decode what a decoder accepted: JSON's escapes can make the re-encoding
// longer than the input (a control character becomes \u0000), so its size is not bounded.
var roundTripLimits = Limits{MaxBytes: 1 << 30}

func FuzzDecodeYAML(f *testing.F) {
	for _, seed := range []string{
		yamlJob,
		"---\n" + yamlJob + "---\n---\n" + yamlJob + "  n: [1, 1.5, 1e3, 0777, 0x1F, .5, 12345678901234567890]\n",
		yamlJob + "  labels: {a: '1', b: \"\\u00e9\\t\", c: ~, d: true}\n",
		yamlJob + "  a: &x [1]\n  b: *x\n",
		yamlJob + "  <<: {c: 1}\n",
		yamlJob + "  kind: twice\n",
		yamlJob + "  s: |\n    line\n  t: >-\n    folded\n",
		yamlJob + "  x: !custom 1\n  y: yes\n  z: .inf\n",
		billionLaughs(),
		strings.Repeat("[", 200),
		"- a\n- b\n",
		"",
		"\ufeff" + yamlJob,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		start := time.Now()
		docs, err := DecodeYAML(b, DefaultLimits)
		checkDecoded(t, "DecodeYAML", b, docs, err, time.Since(start))
	})
}

func FuzzDecodeJSON(f *testing.F) {
	for _, seed := range []string{
		strings.Replace(job, "%s", "", 1),
		"[" + strings.Replace(job, "%s", `,"n":[1,1.5,1e3,-0,12345678901234567890]`, 1) + "," + strings.Replace(job, "%s", "", 1) + "]",
		strings.Replace(job, "%s", `,"labels":{"a":"\u00e9\t\"","b":null,"c":true,"d":{}}`, 1),
		strings.Replace(job, "%s", `,"a":1,"a":2`, 1),
		strings.Replace(job, "%s", `,"n":1e400`, 1),
		strings.Repeat("[", 200),
		`[]`,
		`{} {}`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		start := time.Now()
		docs, err := DecodeJSON(b, DefaultLimits)
		checkDecoded(t, "DecodeJSON", b, docs, err, time.Since(start))
	})
}

// checkDecoded holds what fn's result must satisfy for any input: done within the budget;
// refused with an *Error, or accepted as manifests that re-encode as JSON and decode back
// to the same values, numbers included.
func checkDecoded(t *testing.T, fn string, in []byte, docs []map[string]any, err error, took time.Duration) {
	t.Helper()
	if took > fuzzBudget {
		t.Errorf("%s(%d bytes) took %v; the budget is %v", fn, len(in), took, fuzzBudget)
	}
	if err != nil {
		var e *Error
		if !errors.As(err, &e) || docs != nil {
			t.Fatalf("%s(%q) = %v, %v (%T); want nil and an *Error", fn, in, docs, err, err)
		}
		return
	}
	if len(docs) == 0 {
		t.Fatalf("%s(%q) accepted no manifests", fn, in)
	}
	out, err := json.Marshal(docs)
	if err != nil {
		t.Fatalf("%s(%q) accepted what does not encode as JSON: %v", fn, in, err)
	}
	again, err := DecodeJSON(out, roundTripLimits)
	if err != nil {
		t.Fatalf("DecodeJSON(json.Marshal(%s(%q))) = %v", fn, in, err)
	}
	if diff := cmp.Diff(docs, again); diff != "" {
		t.Errorf("%s(%q) does not survive a JSON round trip (-decoded +re-decoded):\n%s", fn, in, diff)
	}
}

// TestDecodeLargeInputsWithinBudget feeds each decoder inputs at the size limit that are
// worst cases for a parser, refused and accepted. Linear decoding takes tens of milliseconds
// here when the machine is idle; the budget is generous so that a loaded CI machine does not
// fail it, while a quadratic or worse decoder (minutes at this size) still does.
func TestDecodeLargeInputsWithinBudget(t *testing.T) {
	const budget = 5 * time.Second
	size := DefaultLimits.MaxBytes
	many := func(item string) string { return strings.Repeat(item, (size-200)/len(item)) }
	yamlList := yamlJob + "  l:\n" + many("  - 1\n")
	tests := []struct {
		name   string
		decode func([]byte, Limits) ([]map[string]any, error)
		in     string
	}{
		{"JSON opening brackets", DecodeJSON, strings.Repeat("[", size)},
		{"JSON flat array past MaxNodes", DecodeJSON, strings.Replace(job, "%s", `,"l":[`+many("1,")+"1]", 1)},
		{"JSON long string", DecodeJSON, strings.Replace(job, "%s", `,"s":"`+many("a")+`"`, 1)},
		{"YAML opening brackets", DecodeYAML, strings.Repeat("[", size)},
		{"YAML flat list past MaxNodes", DecodeYAML, yamlList},
		{"YAML many empty documents", DecodeYAML, many("---\n")},
		{"YAML long plain scalar", DecodeYAML, yamlJob + "  s: " + many("a")},
		{"YAML flow mappings", DecodeYAML, yamlJob + "  m: " + many("{a: ") + "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := tt.decode([]byte(tt.in), DefaultLimits)
			if took := time.Since(start); took > budget {
				t.Errorf("decoding %d bytes took %v (error %v); want under %v", len(tt.in), took, err, budget)
			}
		})
	}
}
