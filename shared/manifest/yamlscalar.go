package manifest

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// quoted is every scalar style whose value is a string whatever it spells.
const quoted = yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle | yaml.LiteralStyle | yaml.FoldedStyle

// jsonNumber is a number literal as JSON spells it (RFC 8259 section 6).
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// yaml11Bools are the plain words YAML 1.1 reads as booleans and YAML 1.2 reads as strings
// (https://yaml.org/type/bool.html), apart from true and false, which both read alike.
var yaml11Bools = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true,
	"n": true, "N": true, "no": true, "No": true, "NO": true,
	"on": true, "On": true, "ON": true,
	"off": true, "Off": true, "OFF": true,
}

// scalar is the JSON value of a scalar node, or the problem that keeps it from having one.
// The tag on a plain scalar is what go.yaml.in/yaml/v3 resolved it to (YAML 1.2 core schema,
// plus its own !!timestamp and !!merge); an explicit one carries yaml.TaggedStyle.
func scalar(n *yaml.Node) (any, string) {
	if n.Style&yaml.TaggedStyle != 0 {
		if n.Tag != "!!str" {
			return nil, problemf(yamlTag, n.Tag)
		}
		return n.Value, ""
	}
	if n.Style&quoted != 0 {
		return n.Value, ""
	}
	switch n.Tag {
	case "!!null":
		return nil, ""
	case "!!bool":
		// The resolver reads only true, True, TRUE and the three spellings of false as bools.
		return n.Value[0] == 't' || n.Value[0] == 'T', ""
	case "!!int", "!!float":
		return number(n.Value)
	case "!!str":
		if jsonNumber.MatchString(n.Value) {
			return number(n.Value) // the resolver gives up on 1e400; say why it is refused
		}
		if yaml11Bools[n.Value] {
			return nil, problemf(yamlOldBool, n.Value)
		}
		return n.Value, ""
	default:
		// !!timestamp, or !!merge for a plain << that is a value rather than a key: YAML 1.1
		// decoders hand both to interface{} as their text, and so does this.
		return n.Value, ""
	}
}

// number is text, which the YAML resolver read as an int or a float, as a json.Number.
func number(text string) (any, string) {
	if jsonNumber.MatchString(text) {
		if _, err := strconv.ParseFloat(text, 64); err != nil {
			return nil, problemf(numberRange, text)
		}
		return json.Number(text), ""
	}
	// The YAML-only spellings: a sign, a 0, 0o, 0x or 0b prefix, _ separators, a bare
	// leading or trailing dot. They convert as the resolver (and kubectl's YAML 1.1 one) does.
	plain := strings.ReplaceAll(text, "_", "")
	if i, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return json.Number(strconv.FormatInt(i, 10)), ""
	}
	if u, err := strconv.ParseUint(plain, 0, 64); err == nil {
		return json.Number(strconv.FormatUint(u, 10)), ""
	}
	f, err := strconv.ParseFloat(plain, 64)
	if err != nil { // .inf, .nan and whatever else has no JSON spelling
		return nil, problemf(yamlSpecialNum, text)
	}
	out, err := json.Marshal(f) // formats f as encoding/json would
	if err != nil {
		return nil, problemf(yamlSpecialNum, text)
	}
	return json.Number(out), ""
}

// mappingKey is the string a key node spells, or the problem with it as a key.
func mappingKey(k *yaml.Node) (string, string) {
	switch {
	case k.Kind == yaml.AliasNode:
		return "", problemf(yamlAlias, k.Value)
	case k.Anchor != "":
		return "", problemf(yamlAnchor, k.Anchor)
	case k.Kind != yaml.ScalarNode:
		return "", yamlKeyNotScal
	case k.Style&yaml.TaggedStyle != 0:
		if k.Tag != "!!str" {
			return "", problemf(yamlTag, k.Tag)
		}
		return k.Value, ""
	case k.Style&quoted != 0:
		return k.Value, ""
	}
	switch k.Tag {
	case "!!merge":
		return "", yamlMerge
	case "!!int", "!!float":
		return "", problemf(yamlKeyNotStr, k.Value, "a number")
	case "!!bool":
		return "", problemf(yamlKeyNotStr, k.Value, "a boolean")
	case "!!null":
		return "", problemf(yamlKeyNotStr, k.Value, "null")
	}
	// A key is taken as YAML 1.2 spells it even when YAML 1.1 reads it as a boolean: nobody
	// writing "on:" or "n:" means the key "true" or "false", which is what kubectl would send.
	return k.Value, ""
}
