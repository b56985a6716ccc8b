package templating

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want []part
	}{
		{"plain", nil},
		{"{{x}}", []part{{"{{x}}", "x"}}},
		{"{{ x }}", []part{{"{{ x }}", "x"}}},
		{"{{\t_x9 \t}}", []part{{"{{\t_x9 \t}}", "_x9"}}},
		{"a-{{ x }}-b", []part{{"a-", ""}, {"{{ x }}", "x"}, {"-b", ""}}},
		{"{{x}}{{y}}", []part{{"{{x}}", "x"}, {"{{y}}", "y"}}},
		{"{{{x}}}", []part{{"{", ""}, {"{{x}}", "x"}, {"}", ""}}},
		{"{{ x }} {{ ", []part{{"{{ x }}", "x"}, {" {{ ", ""}}},
		// Not placeholders: these stay as written.
		{"{{ }}", nil},
		{"{{ 9x }}", nil},
		{"{{ a.b }}", nil},
		{"{{ .Values.image }}", nil},
		{"{{ $labels.pod }}", nil},
		{"{{ a b }}", nil},
		{"{{ a-b }}", nil},
		{"{{\nx\n}}", nil},
		{"{{ x }", nil},
		{"{ { x } }", nil},
		{"{{ é }}", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, parse(tt.in), cmp.AllowUnexported(part{})); diff != "" {
			t.Errorf("parse(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestPlaceholders(t *testing.T) {
	manifests := []map[string]any{
		{
			"metadata": map[string]any{"name": "{{ name }}", "labels": map[string]any{"{{ key }}": "v"}},
			"spec":     map[string]any{"args": []any{"--lr={{lr}}", "{{ name }}", 3, nil}, "x": "{{ .Values.y }}"},
		},
		{"data": map[string]any{"a": "{{ zeta }}{{ alpha }}"}},
	}
	want := []string{"alpha", "lr", "name", "zeta"} // keys are not templated: no "key"
	if diff := cmp.Diff(want, Placeholders(manifests)); diff != "" {
		t.Errorf("Placeholders (-want +got):\n%s", diff)
	}
	if got := Placeholders(nil); len(got) != 0 {
		t.Errorf("Placeholders(nil) = %q; want none", got)
	}
}
