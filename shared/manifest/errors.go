package manifest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Error is input the decoders refused: which manifest, where in it, and what to change. The
// HTTP layer answers it with 400 invalid_request and a fields entry built from Path.
type Error struct {
	// Document is the manifest's 0-based index among those decoded (empty YAML documents
	// are not counted), or -1 when the input as a whole is at fault (too large, empty).
	Document int
	// Path is where inside the manifest, as in spec.template.spec.containers[0].image or
	// metadata.labels["app.kubernetes.io/name"]; "" for the manifest itself.
	Path string
	// Line is the 1-based line of the input the problem was found on; 0 when unknown.
	Line int
	// Problem says what is wrong and what to do about it.
	Problem string
}

func (e *Error) Error() string {
	where := "manifests"
	if e.Document >= 0 {
		where = fmt.Sprintf("manifest %d", e.Document)
	}
	if e.Path != "" {
		where += " at " + e.Path
	}
	if e.Line > 0 {
		where += fmt.Sprintf(" (line %d)", e.Line)
	}
	return where + ": " + e.Problem
}

// What a user reads when a manifest is refused, kept together so they read alike.
const (
	tooLarge        = "the input is %d bytes; the limit is %d"
	tooManyDocs     = "more than %d manifests; split them across requests"
	tooManyYAMLDocs = "more than %d YAML documents, empty ones included; remove the empty ones"
	noDocuments     = "no manifests; give at least one"
	tooDeep         = "nested deeper than %d levels; flatten it"
	tooManyNodes    = "more than %d values in all; split the manifests across requests"
	notUTF8         = "the input is not valid UTF-8 (at byte %d)"
	duplicateKey    = "duplicate key %q (first at line %d); keep one"
	duplicateKeyRaw = "duplicate key %q; keep one"
	numberRange     = "the number %s is out of range; quote it if it is meant as text"
	badJSON         = "invalid JSON: %s"
	trailingJSON    = "unexpected data after the manifests; send one JSON value"
	notArrayOrObj   = "manifests must be a JSON object or an array of objects"
	badYAML         = "invalid YAML: %s"
	yamlAnchor      = "YAML anchors (&%s) are not accepted; write the value out in full"
	yamlAlias       = "YAML aliases (*%s) are not accepted; write the value out in full"
	yamlMerge       = "YAML merge keys (<<) are not accepted; write the keys out in full"
	yamlTag         = "YAML tag %s is not accepted; remove it (quote the value to make it a string)"
	yamlKeyNotStr   = "the key %q is read as %s; quote it to make it a string"
	yamlKeyNotScal  = "a key must be a string, not an object or array"
	yamlOldBool     = "%q is a boolean in YAML 1.1 but a string in YAML 1.2; write true or false, or quote it"
	yamlSpecialNum  = "%q is not a number JSON can hold; quote it if it is meant as text"
	yamlBOM         = "a byte order mark (U+FEFF) starts this line; remove it (one is allowed only at the very start)"
	notObject       = "a manifest must be an object, not %s"
	missingField    = "%s is missing; set it (for example %s)"
	emptyField      = "%s must be a non-empty string"
	metadataNotObj  = "metadata must be an object with a name"
	metadataNoName  = "metadata.name is missing; set it (generateName is not accepted)"
	metadataBadName = "metadata.name must be a non-empty string"
)

func problemf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// plainKey is a key that reads unambiguously after a dot in a path.
var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// PathStep is one step of a path into a manifest: an object key, or an array index when
// IsIndex. Walkers keep a stack of them and render it only for an error, so that a large
// manifest does not build a path string per value.
type PathStep struct {
	Key     string
	Index   int
	IsIndex bool
}

// RenderPath spells a path as spec.containers[0].image, or labels["app.kubernetes.io/name"] for
// a key that would not read unambiguously after a dot. Every path a manifest error names is
// spelt so, and shared/templating's too.
func RenderPath(path []PathStep) string {
	var b strings.Builder
	for _, s := range path {
		switch {
		case s.IsIndex:
			b.WriteString("[" + strconv.Itoa(s.Index) + "]")
		case !plainKey.MatchString(s.Key):
			b.WriteString("[" + strconv.Quote(s.Key) + "]")
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.Key)
		}
	}
	return b.String()
}

// lineAt is the 1-based line holding byte offset off of src.
func lineAt(src []byte, off int64) int {
	if off > int64(len(src)) {
		off = int64(len(src))
	}
	line := 1
	for _, c := range src[:off] {
		if c == '\n' {
			line++
		}
	}
	return line
}
