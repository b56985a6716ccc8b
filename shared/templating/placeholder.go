// Package templating fills a job template's {{ key }} placeholders on the decoded manifest,
// never on its text.
//
// A placeholder is "{{", optional spaces or tabs, a name, optional spaces or tabs, "}}". A
// name is a letter or _ followed by letters, digits and _ (no dots: parameters are one flat
// object, and text like "{{ .Values.x }}" or "{{ $labels.pod }}" in a ConfigMap stays as it
// is). Anything else that contains braces is plain text. Only string values are looked at:
// object keys are never filled, since no Kubernetes key that matters may contain braces.
//
// A string that is exactly one placeholder takes the parameter's JSON value as it is: a
// number stays a number, an object an object. A placeholder inside a longer string takes the
// value's text: a string as itself, a number as JSON spells it, a boolean as true or false;
// an object, an array or null there is an error, because spelling it as JSON text inside a
// string is the text templating this package exists to avoid. A filled-in value is never
// looked at again, so a value holding "{{ other }}", quotes or a JSON fragment comes out as
// exactly that string. That is also how a template keeps a literal "{{ x }}": pass x the
// string "{{ x }}".
package templating

import (
	"maps"
	"slices"
	"strings"
)

// part is a piece of a template string: literal text, or a placeholder.
type part struct {
	text string // the text as written, placeholders included
	name string // the placeholder's parameter; "" for literal text
}

// parse splits s into literal text and placeholders, or returns nil when s has none.
func parse(s string) []part {
	if !strings.Contains(s, "{{") {
		return nil
	}
	var parts []part
	found := false
	lit := 0 // where the pending literal text starts
	for i := 0; i+1 < len(s); {
		if s[i] != '{' || s[i+1] != '{' {
			i++
			continue
		}
		name, end, ok := placeholderAt(s, i)
		if !ok {
			i++
			continue
		}
		if lit < i {
			parts = append(parts, part{text: s[lit:i]})
		}
		parts = append(parts, part{text: s[i:end], name: name})
		found = true
		i, lit = end, end
	}
	if !found {
		return nil
	}
	if lit < len(s) {
		parts = append(parts, part{text: s[lit:]})
	}
	return parts
}

// placeholderAt reads the placeholder starting at s[i], which is "{{", returning its name
// and the index just past its "}}".
func placeholderAt(s string, i int) (name string, end int, ok bool) {
	j := skipBlanks(s, i+2)
	start := j
	for j < len(s) && isNameByte(s[j], j == start) {
		j++
	}
	if j == start {
		return "", 0, false
	}
	name = s[start:j]
	j = skipBlanks(s, j)
	if !strings.HasPrefix(s[j:], "}}") {
		return "", 0, false
	}
	return name, j + 2, true
}

func skipBlanks(s string, j int) int {
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	return j
}

func isNameByte(c byte, first bool) bool {
	switch {
	case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		return true
	case '0' <= c && c <= '9':
		return !first
	}
	return false
}

// whole is the parameter a string that is exactly one placeholder names, with ok false for any
// other string (including one with text around its placeholder, even blanks).
func whole(parts []part) (name string, ok bool) {
	if len(parts) == 1 && parts[0].name != "" {
		return parts[0].name, true
	}
	return "", false
}

// Placeholders lists, sorted and once each, the parameters the manifests' string values use.
// Template creation uses it to check the defaults; see Check.
func Placeholders(manifests []map[string]any) []string {
	used := map[string]bool{}
	for _, m := range manifests {
		collect(m, used)
	}
	return slices.Sorted(maps.Keys(used))
}

func collect(v any, used map[string]bool) {
	switch v := v.(type) {
	case string:
		for _, p := range parse(v) {
			if p.name != "" {
				used[p.name] = true
			}
		}
	case map[string]any:
		for _, item := range v {
			collect(item, used)
		}
	case []any:
		for _, item := range v {
			collect(item, used)
		}
	}
}
