package templating

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzFill holds substitution to its promise for any parameter string and any text around
// the placeholder: a field that is exactly "{{ p }}" comes out as exactly the parameter's
// string, and a field "prefix{{ p }}suffix" as exactly prefix + value + suffix, however
// many braces, quotes, backslashes or placeholders any of them contain.
func FuzzFill(f *testing.F) {
	for _, seed := range [][3]string{
		{"", "v1.2.3", ""},
		{"image:", `"}}`, ""},
		{`{"a":"`, `\"`, `"}`},
		{"", `{"a":1}`, "!"},
		{"{{ q", "{{ p }}", "}}"},
		{"{{", "{{ x }}", "{{ p }}"[:4]},
		{"$", "\x00\n\\u0000", "\t"},
		{"{{{", "}}}", "}}}"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, prefix, value, suffix string) {
		// Text around the placeholder that holds placeholders of its own (alone, or where
		// "twice" joins suffix to prefix) would need values of its own; the property is about
		// the one placeholder, so such text is skipped.
		if parse(prefix) != nil || parse(suffix) != nil || parse(suffix+prefix) != nil {
			t.Skip()
		}
		embedded := prefix + "{{ p }}" + suffix
		template := []map[string]any{{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "{{p}}"},
			"data": map[string]any{"whole": "{{ p }}", "embedded": embedded, "twice": embedded + embedded},
			"list": []any{"{{\tp\t}}", embedded},
		}}
		if got := Placeholders(template); !cmp.Equal(got, []string{"p"}) {
			t.Fatalf("Placeholders(%q) = %q; want [p]", embedded, got)
		}
		got, err := Fill(template, "job", map[string]any{"p": value}, nil)
		if err != nil {
			t.Fatalf("Fill(%q, p=%q): %v", embedded, value, err)
		}
		want := []map[string]any{{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": value},
			"data": map[string]any{
				"whole":    value,
				"embedded": prefix + value + suffix,
				"twice":    prefix + value + suffix + prefix + value + suffix,
			},
			"list": []any{value, prefix + value + suffix},
		}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Fill(%q, p=%q) (-want +got):\n%s", embedded, value, diff)
		}
	})
}
