package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tidegate/tidegate/shared/manifest"
	"github.com/tidegate/tidegate/shared/policy"
)

// size is the body size the issue names: 1 MiB.
const size = 1 << 20

// body is one candidate for the worst input: how to build it and what decoding it means.
type body struct {
	name   string
	build  func() []byte
	decode func([]byte) string
}

// fill is prefix, then as many items as fit in size with suffix after them, then suffix.
func fill(prefix, item, suffix string) []byte {
	n := (size - len(prefix) - len(suffix)) / len(item)
	return []byte(prefix + strings.Repeat(item, n) + suffix)
}

// numbered is prefix, then items made by item(i) while they fit, then suffix.
func numbered(prefix string, item func(int) string, suffix string) []byte {
	var b strings.Builder
	b.WriteString(prefix)
	for i := 0; ; i++ {
		s := item(i)
		if b.Len()+len(s)+len(suffix) > size {
			break
		}
		b.WriteString(s)
	}
	b.WriteString(suffix)
	return []byte(b.String())
}

const (
	yamlJob  = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\n"
	jsonHead = `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"train","l":`
)

func decodeYAML(b []byte) string {
	docs, err := manifest.DecodeYAML(b, manifest.DefaultLimits)
	return outcome(len(docs), err)
}

func decodeJSON(b []byte) string {
	docs, err := manifest.DecodeJSON(b, manifest.DefaultLimits)
	return outcome(len(docs), err)
}

// decodeAny is the floor: encoding/json into any, which checks nothing and keeps the last of
// duplicate keys, with numbers as float64.
func decodeAny(b []byte) string {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return outcome(0, err)
	}
	return "decoded"
}

// checker is the policy with its defaults, made before a child measures anything: the API makes
// its checker once, when the function starts, not for each request.
var checker *policy.Checker

// admit is what the API does with a manifests body: decode it, then check it against the
// admission policy, which turns each manifest into its typed object.
func admit(decode func([]byte, manifest.Limits) ([]map[string]any, error)) func([]byte) string {
	return func(b []byte) string {
		docs, err := decode(b, manifest.DefaultLimits)
		if err != nil {
			return outcome(0, err)
		}
		res := checker.Check(policy.Request{Manifests: docs, Namespaces: []string{"team-a"}, DefaultNamespace: "team-a"})
		if !res.Allowed() {
			return fmt.Sprintf("checked, %d violations (first: %s)", len(res.Violations), res.Violations[0])
		}
		return fmt.Sprintf("checked and allowed, %d manifests", len(res.Manifests))
	}
}

// envJobYAML and envJobJSON are a Job whose one container has as many environment variables
// as are accepted: the most typed objects (an EnvVar each) a body makes the policy build.
const (
	envJobYAML = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train}\nspec:\n  template:\n    spec:\n" +
		"      restartPolicy: Never\n      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}\n" +
		"      containers:\n      - name: main\n        image: ghcr.io/acme/train:1\n" +
		"        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}\n        env:\n"
	envJobJSON = `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"train"},"spec":{"template":{"spec":{` +
		`"restartPolicy":"Never","securityContext":{"runAsNonRoot":true,"seccompProfile":{"type":"RuntimeDefault"}},` +
		`"containers":[{"name":"main","image":"ghcr.io/acme/train:1",` +
		`"securityContext":{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]}},"env":[`
)

// padded is head, then a string of padding (value is how it opens and closes: a YAML plain
// scalar, a JSON string), then the items items(n) makes and tail, the padding making the body
// exactly size bytes; nil when the items alone do not fit.
func padded(head, open, close, mid string, items func(n int) string, tail string) func(int) []byte {
	return func(n int) []byte {
		rest := head + open + close + mid + items(n) + tail
		if len(rest) > size {
			return nil
		}
		return []byte(head + open + strings.Repeat("a", size-len(rest)) + close + mid + items(n) + tail)
	}
}

// largest is build(n) for the largest n whose body keep still takes: the most a body can hold
// and still be accepted, or still be parsed whole before it is refused.
func largest(build func(int) []byte, keep func([]byte) bool) []byte {
	lo, hi := 1, size
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if b := build(mid); b != nil && keep(b) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return build(lo)
}

func accepted(decode func([]byte, manifest.Limits) ([]map[string]any, error)) func([]byte) bool {
	return func(b []byte) bool {
		_, err := decode(b, manifest.DefaultLimits)
		return err == nil
	}
}

// parsedWhole says whether the YAML library parses b's document before it is refused: the
// pre-scan's refusal names no path, the walker's (after the parse) does.
func parsedWhole(b []byte) bool {
	_, err := manifest.DecodeYAML(b, manifest.DefaultLimits)
	var e *manifest.Error
	return err == nil || errors.As(err, &e) && e.Path != ""
}

func repeat(item func(int) string) func(int) string {
	return func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString(item(i))
		}
		return b.String()
	}
}

var (
	yamlKeys  = repeat(func(i int) string { return fmt.Sprintf("    k%x: 0\n", i) })
	yamlItems = repeat(func(int) string { return "  - 0\n" })
	yamlPairs = repeat(func(int) string { return "a:," })
	jsonKeys  = repeat(func(i int) string { return fmt.Sprintf(`,"%x":0`, i) })
	jsonItems = repeat(func(int) string { return ",0" })
	yamlEnv   = repeat(func(i int) string { return fmt.Sprintf("        - {name: E%x, value: x}\n", i) })
	jsonEnv   = repeat(func(i int) string { return fmt.Sprintf(`,{"name":"E%x","value":"x"}`, i) })
)

// jsonHeadS is jsonHead with the padding's key in place of the list's.
var jsonHeadS = jsonHead[:len(jsonHead)-len(`"l":`)] + `"s":`

func yamlKeysAtLimit() []byte {
	return largest(padded(yamlJob+"  s: ", "", "\n", "  l:\n", yamlKeys, ""), accepted(manifest.DecodeYAML))
}

func jsonKeysAtLimit() []byte {
	return largest(padded(jsonHeadS, `"`, `"`, `,"l":{"k":0`, jsonKeys, "}}}"), accepted(manifest.DecodeJSON))
}

func jsonListAtLimit() []byte {
	return largest(padded(jsonHeadS, `"`, `"`, `,"l":[0`, jsonItems, "]}}"), accepted(manifest.DecodeJSON))
}

// bodies are the candidates, each 1 MiB or a few bytes under. The dense ones are refused by
// the count; the "at limit" ones hold as many values as are still accepted (or, for YAML, as
// many nodes as are still parsed whole), padded to 1 MiB with a long string.
var bodies = []body{
	{"yaml-keys-at-limit", yamlKeysAtLimit, decodeYAML},
	{"yaml-list-parsed-whole", func() []byte {
		return largest(padded(yamlJob+"  s: ", "", "\n", "  l:\n", yamlItems, ""), parsedWhole)
	}, decodeYAML},
	{"yaml-pairs-parsed-whole", func() []byte {
		return largest(padded(yamlJob+"  s: ", "", "\n", "  l: [", yamlPairs, "]\n"), parsedWhole)
	}, decodeYAML},
	{"json-keys-at-limit", jsonKeysAtLimit, decodeJSON},
	{"json-list-at-limit", jsonListAtLimit, decodeJSON},
	{"yaml-block-list", func() []byte { return fill(yamlJob+"  l:\n", "  - 0\n", "") }, decodeYAML},
	{"yaml-empty-items", func() []byte { return fill(yamlJob+"  l:\n", "  -\n", "") }, decodeYAML},
	{"yaml-flow-list", func() []byte { return fill(yamlJob+"  l: [", "0,", "0]\n") }, decodeYAML},
	{"yaml-flow-empty-lists", func() []byte { return fill(yamlJob+"  l: [", "[],", "[]]\n") }, decodeYAML},
	{"yaml-flow-pairs", func() []byte { return fill(yamlJob+"  l: [", "a:,", "a:]\n") }, decodeYAML},
	{"yaml-explicit-keys", func() []byte { return fill(yamlJob+"  l:\n", "    ?\n", "") }, decodeYAML},
	{"yaml-block-keys", func() []byte {
		return numbered(yamlJob+"  l:\n", func(i int) string { return fmt.Sprintf("    k%x: 0\n", i) }, "")
	}, decodeYAML},
	{"yaml-flow-keys", func() []byte {
		return numbered(yamlJob+"  l: {", func(i int) string { return fmt.Sprintf("k%x: 0,", i) }, "}\n")
	}, decodeYAML},
	{"yaml-nesting", func() []byte { return fill("", "[", "") }, decodeYAML},
	{"yaml-long-string", func() []byte { return fill(yamlJob+"  s: ", "a", "\n") }, decodeYAML},
	{"yaml-documents", func() []byte { return fill("", "---\n", "") }, decodeYAML},
	{"json-list", func() []byte { return fill(jsonHead+"[", "0,", "0]}}") }, decodeJSON},
	{"json-empty-lists", func() []byte { return fill(jsonHead+"[", "[],", "[]]}}") }, decodeJSON},
	{"json-keys", func() []byte {
		return numbered(jsonHead+`{"k":0`, func(i int) string { return fmt.Sprintf(`,"%x":0`, i) }, "}}}")
	}, decodeJSON},
	{"json-nesting", func() []byte { return fill("", "[", "") }, decodeJSON},
	{"json-long-string", func() []byte { return fill(jsonHead+`"`, "a", `"}}`) }, decodeJSON},
	{"floor-json-keys-at-limit", jsonKeysAtLimit, decodeAny},
	{"floor-json-list-at-limit", jsonListAtLimit, decodeAny},
	{"floor-json-list", func() []byte { return fill(jsonHead+"[", "0,", "0]}}") }, decodeAny},
	{"admit-yaml-env-at-limit", func() []byte {
		return largest(padded(envJobYAML[:strings.Index(envJobYAML, "      containers:")]+"      hostname: ", "", "\n",
			envJobYAML[strings.Index(envJobYAML, "      containers:"):], yamlEnv, ""), accepted(manifest.DecodeYAML))
	}, admit(manifest.DecodeYAML)},
	{"admit-json-env-at-limit", func() []byte {
		i := strings.Index(envJobJSON, `"containers"`)
		return largest(padded(envJobJSON[:i]+`"hostname":`, `"`, `"`, ","+envJobJSON[i:]+`{"name":"E","value":"x"}`, jsonEnv, `]}]}}}}`),
			accepted(manifest.DecodeJSON))
	}, admit(manifest.DecodeJSON)},
}

func bodyNamed(name string) (body, bool) {
	for _, b := range bodies {
		if b.name == name {
			return b, true
		}
	}
	return body{}, false
}

// worst are the rows of the summary: for each, the bodies it is the worst of.
var worst = []struct{ what, prefix string }{
	{"YAML decode", "yaml-"},
	{"JSON decode", "json-"},
	{"admission of a YAML body (decode + policy check)", "admit-yaml-"},
	{"admission of a JSON body (decode + policy check)", "admit-json-"},
	{"floor: encoding/json into any, the worst JSON body", "floor-json-keys-at-limit"},
}

func printTable(results map[string]measurement) {
	fmt.Println("| Body | Size | Peak heap | Allocated | ÷ size | Outcome |")
	fmt.Println("|---|--:|--:|--:|--:|---|")
	for _, b := range bodies {
		m := results[b.name]
		fmt.Printf("| %s | %s | %s | %s | %.2f× | %s |\n", b.name, mib(uint64(m.Body)), mib(m.Peak), mib(m.Alloc),
			ratio(m), strings.ReplaceAll(m.Outcome, "|", `\|`))
	}
	fmt.Println()
	fmt.Printf("| Worst body | Name | Peak heap | ÷ its size (goal ≤ %d×) |\n", goalMiB)
	fmt.Println("|---|---|--:|--:|")
	for _, w := range worst {
		name, m := "", measurement{}
		for _, b := range bodies {
			if r := results[b.name]; strings.HasPrefix(b.name, w.prefix) && r.Peak > m.Peak {
				name, m = b.name, r
			}
		}
		fmt.Printf("| %s | %s | %s | %.2f× |\n", w.what, name, mib(m.Peak), ratio(m))
	}
}

// ratio is the peak over the floor measured with it: the body's own size.
func ratio(m measurement) float64 { return float64(m.Peak) / float64(m.Body) }
