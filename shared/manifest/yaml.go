package manifest

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"

	yaml "go.yaml.in/yaml/v3"
)

// DecodeYAML decodes one or more YAML documents separated by ---, skipping empty ones, into
// the same shapes DecodeJSON gives. It accepts the JSON-compatible part of YAML and refuses
// the rest with a message saying what to write instead:
//
//   - anchors, aliases and merge keys, at the first one met, so an alias bomb ("billion
//     laughs") costs one parse of its few bytes and is never expanded;
//   - tags other than !!str, !!map and !!seq on their own kind of value (!!binary, !!set,
//     custom !tags);
//   - keys that are not strings (1:, true:, null:, or an object as a key) and duplicate keys;
//   - values that are the plain words YAML 1.1 reads as booleans (yes, no, on, off, y, n in
//     their capitalisations): kubectl's YAML 1.1 decoder sends them as true/false, YAML 1.2
//     (and go.yaml.in/yaml/v3 underneath this package) as strings, so either reading would
//     silently differ from one of them. As keys they are strings, as written;
//   - .inf, .nan and numbers beyond float64, which JSON cannot hold.
//
// Numbers written as JSON writes them keep their literal (12345678901234567890 stays exactly
// that); YAML-only spellings become the decimal number kubectl would send (0777 and 0o777 →
// 511, 0x1F → 31, 1_000 → 1000, .5 → 0.5). Plain timestamps stay strings, as in kubectl.
//
// Memory is bounded by the limits: a document that would make the YAML library build more
// nodes than an input within them can (twice MaxNodes, keys being nodes too) is refused before
// the library parses it, so a body costs at most that many nodes' tree (≈ 24 MiB at the
// default limits, BENCHMARKS.md).
func DecodeYAML(b []byte, limits Limits) ([]map[string]any, error) {
	limits = limits.withDefaults()
	if err := checkInput(b, limits); err != nil {
		return nil, err
	}
	// The decoder parses one document at a time into a node tree without resolving aliases,
	// so nothing past a refused document is parsed and nothing is ever expanded. It builds a
	// document's whole tree before the walker sees any of it, so the pre-scan counts the
	// nodes first: a document that would take the tree past what the limits allow is refused
	// before it is parsed, and where the pre-scan stops at input it cannot read, the decoder
	// is given only a margin past it.
	count := countYAML(b, limits)
	in := &cutReader{src: b, end: len(b)}
	if count.FailDoc >= 0 {
		in.end = min(len(b), count.FailPos+yamlFailMargin)
	}
	dec := yaml.NewDecoder(in)
	w := &yamlWalker{budget: budget{limits: limits}}
	var docs []map[string]any
	for read := 0; ; read++ {
		if read == count.OverDoc {
			return nil, count.Over
		}
		var root yaml.Node
		err := decodeNode(dec, &root)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil && in.hit {
			problem := problemf(badYAML, "it could not be read past this line")
			if count.FailBOM {
				problem = yamlBOM
			}
			return nil, &Error{Document: len(docs), Line: count.FailLine, Problem: problem}
		}
		if err != nil {
			return nil, yamlSyntaxError(len(docs), err)
		}
		// A stray --- between manifests is common; a body of nothing else is not, and each
		// costs a parser round, so empty documents may at most double the count.
		if read == 2*limits.MaxDocuments {
			return nil, &Error{Document: -1, Line: root.Line, Problem: problemf(tooManyYAMLDocs, 2*limits.MaxDocuments)}
		}
		if isEmptyDocument(&root) {
			continue
		}
		top := root.Content[0]
		if len(docs) == limits.MaxDocuments {
			return nil, &Error{Document: -1, Line: top.Line, Problem: problemf(tooManyDocs, limits.MaxDocuments)}
		}
		w.doc = len(docs)
		v, err := w.value(top)
		if err != nil {
			return nil, err
		}
		doc, path, problem := checkShape(v)
		if problem != "" {
			return nil, &Error{Document: w.doc, Path: path, Line: top.Line, Problem: problem}
		}
		docs = append(docs, doc)
	}
	if len(docs) == 0 {
		return nil, &Error{Document: -1, Problem: noDocuments}
	}
	return docs, nil
}

// yamlFailMargin is how far past the point where the pre-scan gave up the YAML decoder may
// read: enough for it to reach the same problem and report it in its own words (it reads
// ahead by at most a few hundred bytes), while at three nodes a byte at most it cannot build
// more than ≈ 50,000 nodes there.
const yamlFailMargin = 16 << 10

// cutReader reads src up to end, then fails rather than end the input early: a truncated
// input must never decode as if it were whole.
type cutReader struct {
	src      []byte
	off, end int
	hit      bool
}

var errCut = errors.New("the input was not read past the point where it stops being YAML")

func (r *cutReader) Read(p []byte) (int, error) {
	if r.off >= r.end {
		if r.end < len(r.src) {
			r.hit = true
			return 0, errCut
		}
		return 0, io.EOF
	}
	n := copy(p, r.src[r.off:r.end])
	r.off += n
	return n, nil
}

// isEmptyDocument is a document with nothing in it but comments: between two --- lines, or
// after a trailing one. An explicit null (~, null) is content and is refused later.
func isEmptyDocument(root *yaml.Node) bool {
	if len(root.Content) == 0 {
		return true
	}
	n := root.Content[0]
	return len(root.Content) == 1 && n.Kind == yaml.ScalarNode && n.Tag == "!!null" &&
		n.Value == "" && n.Style == 0 && n.Anchor == ""
}

// decodeNode parses the next document. The parser is third-party code reading untrusted
// input; should it panic rather than return an error, the input is refused, not the process.
func decodeNode(dec *yaml.Decoder, root *yaml.Node) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("yaml: the parser gave up: %v", p)
		}
	}()
	return dec.Decode(root)
}

// yamlLine finds the line in a go.yaml.in/yaml/v3 error, "yaml: line 3: did not find ...".
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

func yamlSyntaxError(doc int, err error) *Error {
	msg := err.Error()
	e := &Error{Document: doc}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	} else if len(msg) > len("yaml: ") && msg[:len("yaml: ")] == "yaml: " {
		msg = msg[len("yaml: "):]
	}
	e.Problem = problemf(badYAML, msg)
	return e
}

// yamlWalker converts one document's node tree, refusing what DecodeYAML refuses.
type yamlWalker struct {
	doc    int
	path   []PathStep // where in the document; its length + 1 is the depth of the value
	budget budget
}

func (w *yamlWalker) value(n *yaml.Node) (any, error) {
	if n.Kind == yaml.AliasNode {
		return nil, w.fail(n, problemf(yamlAlias, n.Value))
	}
	if n.Anchor != "" {
		return nil, w.fail(n, problemf(yamlAnchor, n.Anchor))
	}
	if problem := w.budget.spend(len(w.path) + 1); problem != "" {
		return nil, w.fail(n, problem)
	}
	switch n.Kind {
	case yaml.MappingNode:
		if n.Style&yaml.TaggedStyle != 0 && n.Tag != "!!map" {
			return nil, w.fail(n, problemf(yamlTag, n.Tag))
		}
		return w.mapping(n)
	case yaml.SequenceNode:
		if n.Style&yaml.TaggedStyle != 0 && n.Tag != "!!seq" {
			return nil, w.fail(n, problemf(yamlTag, n.Tag))
		}
		return w.sequence(n)
	default: // a ScalarNode; a DocumentNode only ever appears as the root
		v, problem := scalar(n)
		if problem != "" {
			return nil, w.fail(n, problem)
		}
		return v, nil
	}
}

func (w *yamlWalker) mapping(n *yaml.Node) (map[string]any, error) {
	obj := make(map[string]any, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key, problem := mappingKey(k)
		if problem != "" {
			return nil, w.fail(k, problem)
		}
		w.path = append(w.path, PathStep{Key: key})
		if _, dup := obj[key]; dup {
			return nil, w.fail(k, problemf(duplicateKey, key, firstLine(n, key)))
		}
		var err error
		if obj[key], err = w.value(v); err != nil {
			return nil, err
		}
		w.path = w.path[:len(w.path)-1]
	}
	return obj, nil
}

// firstLine is the line of the first key in n that reads as key: a duplicate's first
// occurrence, looked up only when one is refused rather than remembered for every key.
func firstLine(n *yaml.Node, key string) int {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k, problem := mappingKey(n.Content[i]); problem == "" && k == key {
			return n.Content[i].Line
		}
	}
	return 0
}

func (w *yamlWalker) sequence(n *yaml.Node) ([]any, error) {
	arr := make([]any, 0, len(n.Content))
	for i, item := range n.Content {
		w.path = append(w.path, PathStep{Index: i, IsIndex: true})
		v, err := w.value(item)
		if err != nil {
			return nil, err
		}
		w.path = w.path[:len(w.path)-1]
		arr = append(arr, v)
	}
	return arr, nil
}

func (w *yamlWalker) fail(n *yaml.Node, problem string) *Error {
	return &Error{Document: w.doc, Path: RenderPath(w.path), Line: n.Line, Problem: problem}
}
