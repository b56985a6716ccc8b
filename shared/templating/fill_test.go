package templating

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// field is a one-manifest template whose spec.f is v.
func field(v any) []map[string]any {
	return []map[string]any{{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "j"}, "spec": map[string]any{"f": v}}}
}

func TestFill(t *testing.T) {
	obj := map[string]any{"cpu": "1", "n": json.Number("2")}
	tests := []struct {
		name     string
		template any // spec.f
		params   map[string]any
		defaults map[string]any
		want     any // spec.f filled
	}{
		{"whole: json.Number stays a number", "{{ n }}", map[string]any{"n": json.Number("12345678901234567890")}, nil, json.Number("12345678901234567890")},
		{"whole: float64 stays a number", "{{n}}", map[string]any{"n": 1.5}, nil, 1.5},
		{"whole: int stays a number", "{{ n }}", map[string]any{"n": 3}, nil, 3},
		{"whole: bool stays a bool", "{{ b }}", map[string]any{"b": false}, nil, false},
		{"whole: null stays null", "{{ v }}", map[string]any{"v": nil}, nil, nil},
		{"whole: object stays an object", "{{ r }}", map[string]any{"r": obj}, nil, obj},
		{"whole: array stays an array", "{{ a }}", map[string]any{"a": []any{"x", json.Number("1")}}, nil, []any{"x", json.Number("1")}},
		{"whole: string stays the string", "{{ s }}", map[string]any{"s": "1"}, nil, "1"},
		{"inside: string", "img:{{ tag }}", map[string]any{"tag": "v1.2"}, nil, "img:v1.2"},
		{"inside: json.Number keeps its literal", "n={{ n }}", map[string]any{"n": json.Number("1e3")}, nil, "n=1e3"},
		{"inside: float64 as JSON spells it", "{{a}},{{b}},{{c}}", map[string]any{"a": 1e21, "b": 0.000001, "c": 2.0}, nil, "1e+21,0.000001,2"},
		{"inside: bool", "debug={{ d }}", map[string]any{"d": true}, nil, "debug=true"},
		{"blanks around make it text", " {{ n }}", map[string]any{"n": json.Number("7")}, nil, " 7"},
		{"same parameter twice", "{{x}}-{{ x }}", map[string]any{"x": "a"}, nil, "a-a"},
		{"default fills a missing parameter", "{{ x }}", nil, map[string]any{"x": json.Number("5")}, json.Number("5")},
		{"parameter wins over default", "{{ x }}", map[string]any{"x": "p"}, map[string]any{"x": "d"}, "p"},
		{"unused default is not an error", "{{ x }}", map[string]any{"x": "p"}, map[string]any{"y": "d"}, "p"},
		{"not a placeholder stays", "{{ .Values.x }} {{ a-b }}", nil, nil, "{{ .Values.x }} {{ a-b }}"},
		{"in arrays and objects", []any{map[string]any{"k": "{{ x }}"}, "{{x}}!"}, map[string]any{"x": json.Number("1")}, nil,
			[]any{map[string]any{"k": json.Number("1")}, "1!"}},
		{"keys are not filled", map[string]any{"{{ x }}": "{{ x }}"}, map[string]any{"x": "v"}, nil, map[string]any{"{{ x }}": "v"}},
		// A value is written once and never read again as template text.
		{"injection: closing braces and a quote", "a={{ x }}", map[string]any{"x": `"}}`}, nil, `a="}}`},
		{"injection: escaped quote", "{{ x }}", map[string]any{"x": `\"`}, nil, `\"`},
		{"injection: JSON fragment stays a string", "{{ x }}", map[string]any{"x": `{"a":1}`}, nil, `{"a":1}`},
		{"injection: JSON fragment inside", `{"k":"{{ x }}"}`, map[string]any{"x": `","b":"2`}, nil, `{"k":"","b":"2"}`},
		{"injection: a placeholder as a value", "{{ x }}/{{ y }}", map[string]any{"x": "{{ y }}", "y": "{{ x }}"}, nil, "{{ y }}/{{ x }}"},
		{"injection: own placeholder keeps it literal", "{{ x }}", map[string]any{"x": "{{ x }}"}, nil, "{{ x }}"},
		{"injection: control characters and newlines", "{{ x }}", map[string]any{"x": "a\x00\n\\n\u2028"}, nil, "a\x00\n\\n\u2028"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Fill(field(tt.template), "job", tt.params, tt.defaults)
			if err != nil {
				t.Fatalf("Fill(%#v, %v, %v): %v", tt.template, tt.params, tt.defaults, err)
			}
			if diff := cmp.Diff(field(tt.want), got); diff != "" {
				t.Errorf("Fill(%#v, %v, %v) (-want +got):\n%s", tt.template, tt.params, tt.defaults, diff)
			}
		})
	}
}

func TestFillRefuses(t *testing.T) {
	tests := []struct {
		name     string
		template any
		params   map[string]any
		defaults map[string]any
		want     error
	}{
		{"missing and unknown, all named", []any{"{{ b }}", "{{ a }}", "{{ c }}"}, map[string]any{"c": 1, "z": 1, "y": 1}, nil,
			&ParamError{Missing: []string{"a", "b"}, Unknown: []string{"y", "z"}}},
		{"a name that is no placeholder is unknown", "{{ a-b }}", map[string]any{"a-b": "x"}, nil,
			&ParamError{Unknown: []string{"a-b"}}},
		{"object inside a string", map[string]any{"k": "x={{ r }}"}, map[string]any{"r": map[string]any{}}, nil,
			&FieldError{Document: 0, Path: "spec.f.k", Param: "r", Problem: `the value is an object, which can fill a whole field ("{{ key }}") but not text inside a string; pass a string`}},
		{"array inside a string", []any{"a", "{{ r }}."}, map[string]any{"r": []any{}}, nil,
			&FieldError{Document: 0, Path: "spec.f[1]", Param: "r", Problem: `the value is an array, which can fill a whole field ("{{ key }}") but not text inside a string; pass a string`}},
		{"null inside a string", "{{ r }}.", nil, map[string]any{"r": nil},
			&FieldError{Document: 0, Path: "spec.f", Param: "r", Problem: `the value is null, which can fill a whole field ("{{ key }}") but not text inside a string; pass a string`}},
		{"NaN", "{{ n }}", map[string]any{"n": math.NaN()}, nil,
			&FieldError{Document: 0, Path: "spec.f", Param: "n", Problem: "the value NaN is not a number JSON can hold"}},
		{"bad json.Number", "n{{ n }}", map[string]any{"n": json.Number("1x")}, nil,
			&FieldError{Document: 0, Path: "spec.f", Param: "n", Problem: "the value 1x is not a number JSON can hold"}},
		{"not a JSON type", "{{ n }}", map[string]any{"n": struct{}{}}, nil,
			&FieldError{Document: 0, Path: "spec.f", Param: "n", Problem: "the value's type struct {} is not a JSON value"}},
		{"nested not a JSON type", "{{ n }}", map[string]any{"n": []any{map[string]string{}}}, nil,
			&FieldError{Document: 0, Path: "spec.f", Param: "n", Problem: "the value's type map[string]string is not a JSON value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Fill(field(tt.template), "job", tt.params, tt.defaults)
			if diff := cmp.Diff(tt.want, err); diff != "" || got != nil {
				t.Errorf("Fill(%#v, %v, %v) = %v, error (-want +got):\n%s", tt.template, tt.params, tt.defaults, got, diff)
			}
		})
	}
}

func TestFillDoesNotShare(t *testing.T) {
	template := field([]any{"{{ r }}", map[string]any{"k": "{{ s }}"}})
	params := map[string]any{"r": map[string]any{"a": []any{"x"}}, "s": "v"}
	before, after := mustJSON(t, template, params), ""
	got, err := Fill(template, "job", params, nil)
	if err != nil {
		t.Fatalf("Fill: %v", err)
	}
	if after = mustJSON(t, template, params); after != before {
		t.Fatalf("Fill changed its input: before %s, after %s", before, after)
	}
	// Changing the result must not reach the template or the parameters.
	f := got[0]["spec"].(map[string]any)["f"].([]any)
	f[0].(map[string]any)["a"].([]any)[0] = "changed"
	f[1].(map[string]any)["k"] = "changed"
	got[0]["kind"] = "changed"
	if after = mustJSON(t, template, params); after != before {
		t.Errorf("changing Fill's result changed its input: before %s, after %s", before, after)
	}
}

func mustJSON(t *testing.T, v ...any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name       string
		template   any
		defaults   map[string]any
		wantUnused []string
		want       error
	}{
		{"no defaults", "{{ a }}", nil, nil, nil},
		{"defaults for some", []any{"{{ a }}", "{{ b }}"}, map[string]any{"a": json.Number("1")}, nil, nil},
		{"unused default", "{{ a }}", map[string]any{"a": 1, "b": 2}, []string{"b"}, nil},
		{"the job's name", "{{ name }}-worker", map[string]any{"image": "pytorch"}, []string{"image"}, nil},
		{"a default for the job's name", "{{ name }}", map[string]any{"name": "x"}, nil, &ParamError{Reserved: []string{"name"}}},
		{"object default inside a string", "x{{ a }}", map[string]any{"a": map[string]any{}}, nil,
			&FieldError{Document: 0, Path: "spec.f", Param: "a", Problem: `the value is an object, which can fill a whole field ("{{ key }}") but not text inside a string; pass a string`}},
	}
	for _, tt := range tests {
		unused, err := Check(field(tt.template), tt.defaults)
		if diff := cmp.Diff(tt.want, err); diff != "" {
			t.Errorf("%s: Check(%#v, %v) error (-want +got):\n%s", tt.name, tt.template, tt.defaults, diff)
		}
		if !slices.Equal(unused, tt.wantUnused) {
			t.Errorf("%s: Check(%#v, %v) unused = %v, want %v", tt.name, tt.template, tt.defaults, unused, tt.wantUnused)
		}
	}
}

// TestFillJobName: {{ name }} is the job's name, a default no placeholder uses is ignored (the
// seed's own template example), and a parameter called name is refused: a job cannot give its
// object another name than its own.
func TestFillJobName(t *testing.T) {
	got, err := Fill(field("{{ name }}-worker"), "train-7", nil, map[string]any{"image": "pytorch/pytorch:latest"})
	if err != nil || got[0]["spec"].(map[string]any)["f"] != "train-7-worker" {
		t.Errorf("Fill of {{ name }}-worker as train-7 = %v, %v; want train-7-worker", got, err)
	}
	_, err = Fill(field("{{ name }}"), "train-7", map[string]any{"name": "other"}, nil)
	if diff := cmp.Diff(&ParamError{Reserved: []string{"name"}}, err); diff != "" {
		t.Errorf("Fill with a parameter name (-want +got):\n%s", diff)
	}
	if err == nil || !strings.Contains(err.Error(), "the job's own name") {
		t.Errorf("Fill with a parameter name = %v; want it to say the job's name fills it", err)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&ParamError{Missing: []string{"a", "b"}}, "missing parameters a, b: give them values (the template has no defaults for them)"},
		{&ParamError{Missing: []string{"a"}, Unknown: []string{"z"}},
			"missing parameters a: give them values (the template has no defaults for them); unknown parameters z: " +
				"the template has no placeholder for them, so remove them (a placeholder is {{ key }}, the key letters, digits and _)"},
		{&FieldError{Document: 1, Path: "spec.x", Param: "p", Problem: "bad"}, `manifest 1 at spec.x, parameter "p": bad`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%#v.Error() = %q; want %q", tt.err, got, tt.want)
		}
		var pe *ParamError
		var fe *FieldError
		if !errors.As(tt.err, &pe) && !errors.As(tt.err, &fe) {
			t.Errorf("%#v is neither a *ParamError nor a *FieldError", tt.err)
		}
	}
}

func TestFillBoundsAmplification(t *testing.T) {
	// A 100 KiB value in sixteen places is 1.6 MiB of substitution, over the 1.5 MiB bound;
	// fifteen places fit.
	value := strings.Repeat("a", 100<<10)
	template := func(n int) any {
		list := make([]any, n)
		for i := range list {
			list[i] = "{{ v }}"
		}
		return list
	}
	if _, err := Fill(field(template(15)), "job", map[string]any{"v": value}, nil); err != nil {
		t.Errorf("Fill(15 × 100 KiB) = %v; want it filled", err)
	}
	_, err := Fill(field(template(16)), "job", map[string]any{"v": value}, nil)
	want := &FieldError{Document: 0, Path: "spec.f[15]", Param: "v",
		Problem: "the values filled in come to more than 1572864 bytes, more than the cluster stores; use shorter values or fewer placeholders"}
	if diff := cmp.Diff(want, err); diff != "" {
		t.Errorf("Fill(16 × 100 KiB) error (-want +got):\n%s", diff)
	}
}
