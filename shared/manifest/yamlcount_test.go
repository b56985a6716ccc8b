package manifest

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// unlimited lets the pre-scan count a whole input.
var unlimited = Limits{MaxBytes: 1 << 30, MaxDocuments: 1 << 20, MaxDepth: 1 << 20, MaxNodes: 1 << 28}

// libraryNodes is how many yaml.Node go.yaml.in/yaml/v3 builds for in, document nodes
// included, and whether it read all of in without an error.
func libraryNodes(in []byte) (int, bool) {
	dec := yaml.NewDecoder(strings.NewReader(string(in)))
	total := 0
	for {
		var root yaml.Node
		err := decodeNode(dec, &root)
		if errors.Is(err, io.EOF) {
			return total, true
		}
		if err != nil {
			return total, false
		}
		total += treeSize(&root)
	}
}

func treeSize(n *yaml.Node) int {
	size := 1
	for _, c := range n.Content {
		size += treeSize(c)
	}
	return size
}

// checkCount fails t when the pre-scan and the library disagree on in: where the library reads
// it all, the pre-scan must count exactly its nodes and must not give up.
func checkCount(t *testing.T, in []byte) {
	t.Helper()
	want, ok := libraryNodes(in)
	got := countYAML(in, unlimited)
	if !ok {
		return // the library refuses it: it builds fewer nodes than it would have, and no tree
	}
	if got.FailDoc >= 0 && got.FailBOM {
		return // a byte order mark at a line's start: see yamlScanner.toNextToken and TestDecodeYAMLByteOrderMark
	}
	if got.FailDoc >= 0 {
		t.Errorf("countYAML(%q) gave up at byte %d (line %d); the library reads it all (%d nodes)", in, got.FailPos, got.FailLine, want)
		return
	}
	if got.Nodes != want {
		t.Errorf("countYAML(%q) = %d nodes; the library builds %d", in, got.Nodes, want)
	}
}

// yamlShapes are inputs that exercise each of the scanner's and parser's paths.
var yamlShapes = []string{
	"", "\n", "# only a comment\n", "---\n", "---\n---\n", "...\n", "--- \n...\n---\na: 1\n...\n",
	yamlJob, "a: 1\nb: 2\n", "a:\n  b:\n    c: d\n", "a:\n- 1\n- 2\nb: 3\n", "- a\n- b:\n  - c\n  -\n-\n",
	"- - - a\n  - b\n- c\n", "? a\n: b\n? c\n", "?\n:\n", "? [a, b]\n: c\n", "a: [1, 2, {b: c}]\n",
	"{a: 1, b, c: }\n", "[a: 1, b, ? c, : d]\n", "[a, b,]\n", "{a: {b: [c, {d: e}]}}\n", "[[[[]]]]\n",
	"a: |\n  line\n  line\n\nb: >-\n    folded\n    text\n", "a: |2\n    x\n   y\n", "- |\n x\n- >+\n\n y\n",
	"a: 'it''s'\nb: \"esc \\\" \\n \\\n  cont\"\n", "a: 'multi\n  line'\n", "a: \"x\ny\"\n",
	"a: plain\n  continued\n  # not a comment? \nb: 1\n", "a: b # comment\n", "a: b#not\n", "a:\t# tab comment\n",
	"a: &x 1\nb: *x\n", "a: !!str 1\nb: !custom {c: d}\nc: ! x\n", "!!map\n? a\n", "&a\n", "- !!null\n- &b\n",
	"%YAML 1.2\n---\na: 1\n", "%TAG ! tag:x,2000:\n--- !a\nb\n", "a: 1\r\nb: 2\r\n", "\ufeffa: 1\n",
	"a:\n  - b\n  -   c: d\n      e: f\n", "a: -1\nb: - x\n", "url: http://x.y/z?a=b:c\n", "[http://x, a:b, c: d]\n",
	"{a: b}: c\n", "[a]: b\n", "- [a, b]: c\n", "a: {b: c,\n  d: e}\n", "a: [\n  1,\n  2\n]\n",
	"key with spaces: value with spaces\n", "? |\n  block key\n: v\n", "- ? a\n  : b\n", "a:\n\n\n  b: c\n",
	"a: b\n---\nc: d\n...\n", "- a\n---\n- b\n", "---\n# c\n---\n", "--- a\n--- b\n", "--- |\n  x\n",
	"\"a\": 1\n'b': 2\n", "{\"a\":1,\"b\":[true,null]}\n", "a: 1 # c\n# c\nb: 2\n", "- # c\n  - x\n",
	"a:\n  # c\n  b: c\n", "a: b\n  c\n", "a:\n b\n", "  a: 1\n  b: 2\n", "- a\n  b\n", "[a\n, b]\n",
	"? - a\n  - b\n: - c\n", "a: !!binary |\n  aGk=\n", "a: \u2028b\n", "a: b\u0085c: d\n",
}

func TestCountYAMLMatchesTheLibrary(t *testing.T) {
	for _, in := range yamlShapes {
		checkCount(t, []byte(in))
	}
	big := []string{
		yamlJob + "  l:\n" + strings.Repeat("  - 0\n", 5000),
		yamlJob + "  l: [" + strings.Repeat("0,", 5000) + "0]\n",
		yamlJob + "  l: [" + strings.Repeat("a:,", 3000) + "]\n",
		yamlJob + "  m: {" + strings.Repeat("k: 0, ", 10) + "}\n",
		strings.Repeat("-\n", 3000), strings.Repeat("- - \n", 3000), strings.Repeat("?\n", 3000),
		"k: " + strings.Repeat("x", 1100) + ": v\n", "[" + strings.Repeat("x", 1100) + ": v]\n",
		strings.Repeat("[", 300) + strings.Repeat("]", 300), strings.Repeat("- ", 300) + "a\n",
	}
	for _, in := range big {
		checkCount(t, []byte(in))
	}
}

func FuzzCountYAML(f *testing.F) {
	for _, in := range yamlShapes {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 4096 || checkInput(in, DefaultLimits) != nil {
			return
		}
		checkCount(t, in)
	})
}

// blockList is yamlJob with a list of n zeros under metadata.l, one a line: 6 values before the
// list's items (the manifest, apiVersion, kind, metadata, name and the list), and item i on
// line 6+i.
func blockList(n int) string { return yamlJob + "  l:\n" + strings.Repeat("  - 0\n", n) }

func TestDecodeYAMLNodeLimit(t *testing.T) {
	limit := DefaultLimits.MaxNodes
	if _, err := DecodeYAML([]byte(blockList(limit-6)), DefaultLimits); err != nil {
		t.Errorf("DecodeYAML(%d values, the limit) = %v; want it accepted", limit, err)
	}
	tests := []struct {
		name string
		in   string
		want Error
	}{
		// Parsed whole (within the library's share of nodes), then refused by the walker.
		{"one value over", blockList(limit - 5),
			Error{Document: 0, Path: fmt.Sprintf("metadata.l[%d]", limit-6), Line: limit, Problem: fmt.Sprintf("more than %d values in all", limit)}},
		// Past what the library may build: refused by the count, before it parses anything, at
		// the same value and line, without the path the library's tree would have given.
		{"three times over", blockList(3 * limit),
			Error{Document: 0, Line: limit, Problem: fmt.Sprintf("more than %d values in all", limit)}},
		// The first manifest holds 5 values and 4 lines, then ---: value 50,001 is on line 50,000.
		{"over in the second manifest", yamlJob + "---\n" + blockList(3*limit),
			Error{Document: 1, Line: limit, Problem: fmt.Sprintf("more than %d values in all", limit)}},
		{"a key that is a large list", yamlJob + "  ? [" + strings.Repeat("0,", 3*limit) + "0]\n  : x\n",
			Error{Document: 0, Line: 5, Problem: "a key must be a string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := DecodeYAML([]byte(tt.in), DefaultLimits)
			checkRefusal(t, "DecodeYAML", tt.in, docs, err, tt.want)
		})
	}
}

// TestDecodeYAMLRefusesBeforeTheHeapGrows decodes the densest bodies at the size limit, each a
// node or more every two bytes: building the library's tree for one took ≈ 150 MiB. Refused by
// the count, a decode allocates the scanner's stacks and queue and the library decoder's
// buffers: ≈ 5 KiB in 20 allocations. 64 KiB and 50 allocations leave room for the runtime's
// own and are still a twentieth of the body.
func TestDecodeYAMLRefusesBeforeTheHeapGrows(t *testing.T) {
	const bound = 64 << 10
	size := DefaultLimits.MaxBytes
	fill := func(prefix, item, suffix string) string {
		return prefix + strings.Repeat(item, (size-len(prefix)-len(suffix))/len(item)) + suffix
	}
	for _, in := range []string{
		fill(yamlJob+"  l:\n", "  - 0\n", ""),
		fill(yamlJob+"  l:\n", "  -\n", ""),
		fill(yamlJob+"  l: [", "0,", "0]\n"),
		fill(yamlJob+"  l: [", "a:,", "a:]\n"),
		fill(yamlJob+"  l: [", "[],", "[]]\n"),
		fill(yamlJob+"  l:\n", "    ?\n", ""),
	} {
		b := []byte(in)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := DecodeYAML(b, DefaultLimits)
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "values in all") && !strings.Contains(err.Error(), "key") {
			t.Errorf("DecodeYAML(%.40q…, %d bytes) = %v; want it refused for its size", in, len(b), err)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > bound {
			t.Errorf("DecodeYAML(%.40q…, %d bytes) allocated %d bytes before refusing it; want at most %d", in, len(b), got, bound)
		}
		allocs := testing.AllocsPerRun(3, func() { _, _ = DecodeYAML(b, DefaultLimits) })
		if allocs > 50 {
			t.Errorf("DecodeYAML(%.40q…) made %.0f allocations before refusing it; want at most 50", in, allocs)
		}
	}
}

// TestDecodeYAMLSyntaxErrorInALargeBody: where the count stops at input the library refuses,
// the library still reads far enough to say what is wrong in its own words.
func TestDecodeYAMLSyntaxErrorInALargeBody(t *testing.T) {
	tail := strings.Repeat("  x: 1\n", 100_000)
	for _, tt := range []struct{ in, want string }{
		{yamlJob + "  a: b: c\n" + tail, "invalid YAML: mapping values are not allowed in this context"},
		{yamlJob + "  a: [\n" + strings.Repeat("  x\n", 100_000), "invalid YAML: did not find expected ',' or ']'"},
		{yamlJob + "  a: \"\\q\"\n" + tail, "invalid YAML: found unknown escape character"},
		{yamlJob + "  a: \x01\n" + tail, "invalid YAML: control characters are not allowed"},
	} {
		_, err := DecodeYAML([]byte(tt.in), Limits{MaxNodes: 1 << 20})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("DecodeYAML(%.60q…) = %v; want %q", tt.in, err, tt.want)
		}
	}
}

// yamlGen writes random YAML in every style the scanner and parser tell apart: block and flow
// collections, indentless lists, explicit and empty keys and values, single-pair mappings,
// plain (some over several lines), quoted and block scalars, comments and documents.
type yamlGen struct {
	rng *rand.Rand
	b   strings.Builder
}

func (g *yamlGen) pick(options ...string) string { return options[g.rng.IntN(len(options))] }

func (g *yamlGen) scalar(indent int) string {
	pad := strings.Repeat(" ", indent+2)
	return g.pick("a", "b c", "'q'", "\"d\"", "'it''s'", "\"x\\\"y\"", "~", "1", "-1", "a:b", "http://x",
		"long\n"+pad+"plain", "'two\n"+pad+"lines'", "|\n"+pad+"lit\n"+pad+"eral", ">-\n"+pad+"fold", "&x a", "!!str s")
}

func (g *yamlGen) flow(depth int) string {
	if depth <= 0 || g.rng.IntN(3) == 0 {
		return g.pick("a", "'q'", "\"d\"", "1", "[]", "{}", "&x a")
	}
	parts := make([]string, 1+g.rng.IntN(3))
	if g.rng.IntN(2) == 0 {
		for i := range parts {
			parts[i] = g.pick("", "k: ", "? k: ", "? ", "\"k\":", "k: ") + g.flow(depth-1)
		}
		return "[" + strings.Join(parts, g.pick(", ", ",", ",\n ")) + g.pick("", ",") + "]"
	}
	for i := range parts {
		switch g.rng.IntN(4) {
		case 0:
			parts[i] = g.pick("k", "'k'", "? k") // a key without a value
		case 1:
			parts[i] = g.pick("k:", "? k:", ":") // an empty value
		default:
			parts[i] = g.pick("k", "'k'", "? k", "") + ": " + g.flow(depth-1)
		}
	}
	return "{" + strings.Join(parts, g.pick(", ", ",")) + "}"
}

// node writes a value that starts right after "key:" or "-" (inList) at the given indentation.
func (g *yamlGen) node(depth, indent int, inList bool) {
	pad := strings.Repeat(" ", indent)
	k := g.rng.IntN(6)
	if k == 3 && !inList {
		k = 2
	}
	switch {
	case depth <= 0 || k == 0:
		g.b.WriteString(" " + g.scalar(indent) + g.pick("", " # c") + "\n")
	case k == 1:
		g.b.WriteString(" " + g.flow(depth) + "\n")
	case k == 2: // a block list, indented or (under a key) not
		step := g.pick("  ", "", "    ")
		g.b.WriteString(g.pick("", " # c") + "\n")
		for i := g.rng.IntN(3); i >= 0; i-- {
			g.b.WriteString(pad + step + "-")
			g.node(depth-1, indent+len(step)+2, true)
		}
	case k == 3: // a list on the line of its parent's "- "
		g.b.WriteString(" -")
		g.node(depth-1, indent+2, true)
	case k == 4: // a block mapping
		g.b.WriteString(g.pick("", " # c") + "\n")
		g.mapping(depth-1, indent+2)
	default: // nothing: an empty value
		g.b.WriteString(g.pick("\n", " \n", " # c\n"))
	}
}

func (g *yamlGen) mapping(depth, indent int) {
	pad := strings.Repeat(" ", indent)
	for i := g.rng.IntN(3); i >= 0; i-- {
		switch g.rng.IntN(5) {
		case 0:
			g.b.WriteString(pad + "? " + g.pick("k", "[a, b]", "") + "\n" + pad + ":")
		case 1:
			g.b.WriteString(pad + g.pick("'k'", "\"k\"", "k k", "[a]", "{a: b}") + ":")
		default:
			g.b.WriteString(pad + fmt.Sprintf("k%d", i) + ":")
		}
		g.node(depth, indent, false)
	}
}

func (g *yamlGen) document() string {
	g.b.Reset()
	for d := g.rng.IntN(2); d >= 0; d-- {
		if g.b.Len() > 0 {
			g.b.WriteString(g.pick("---\n", "--- # c\n"))
		} else {
			g.b.WriteString(g.pick("", "---\n", "--- # c\n", "# c\n"))
		}
		switch g.rng.IntN(4) {
		case 0:
			g.mapping(3, 0)
		case 1:
			g.b.WriteString("-")
			g.node(3, 0, true)
		case 2:
			g.b.WriteString(g.flow(3) + "\n")
		default:
			g.b.WriteString(g.scalar(0) + "\n")
		}
		g.b.WriteString(g.pick("", "...\n", "\n"))
	}
	out := g.b.String()
	if g.rng.IntN(4) == 0 { // a near miss: one piece more, anywhere
		at := g.rng.IntN(len(out) + 1)
		out = out[:at] + g.pick(" ", "\t", "\n", ":", "- ", "#", "'", "[", "}", ",", "? ", "  ") + out[at:]
	}
	return out
}

// TestCountYAMLOnRandomStructure holds the pre-scan to the library's count on many thousand
// generated documents from a fixed seed: byte-level fuzzing rarely builds the indentation and
// key combinations they reach.
func TestCountYAMLOnRandomStructure(t *testing.T) {
	g := &yamlGen{rng: rand.New(rand.NewPCG(1, 2))}
	n, read := 20_000, 0
	if testing.Short() {
		n = 2_000
	}
	for i := 0; i < n && !t.Failed(); i++ {
		in := []byte(g.document())
		if _, ok := libraryNodes(in); ok {
			read++
		}
		checkCount(t, in)
	}
	if read < n/4 {
		t.Errorf("the library read only %d of %d generated documents; want most of them valid YAML", read, n)
	}
}

// TestCutReaderNeverEndsEarly: the library, reading a valid input through a cutReader that stops
// short of its end, fails; it never takes what it read for the whole input.
func TestCutReaderNeverEndsEarly(t *testing.T) {
	in := []byte(blockList(2000))
	for _, end := range []int{0, 1, 100, 4096, len(in) - 1} {
		r := &cutReader{src: in, end: end}
		dec := yaml.NewDecoder(r)
		var root yaml.Node
		if err := decodeNode(dec, &root); err == nil || !r.hit {
			t.Errorf("decoding %d bytes cut at %d = %v (cut reached: %v); want an error at the cut", len(in), end, err, r.hit)
		}
	}
	r := &cutReader{src: in, end: len(in)}
	var root yaml.Node
	if err := decodeNode(yaml.NewDecoder(r), &root); err != nil || r.hit {
		t.Errorf("decoding %d bytes uncut = %v (cut reached: %v); want it read whole", len(in), err, r.hit)
	}
}

// TestDecodeYAMLByteOrderMark: one at the very start is dropped; one starting a later line is
// read as text by the library unless its buffer happens to begin there, so the count stops at
// it, and an input that goes on more than the margin past it is refused saying so.
func TestDecodeYAMLByteOrderMark(t *testing.T) {
	if _, err := DecodeYAML([]byte("\ufeff"+blockList(3)), DefaultLimits); err != nil {
		t.Errorf("DecodeYAML(a byte order mark, then a manifest) = %v; want it accepted", err)
	}
	docs, err := DecodeYAML([]byte(yamlJob+"  \ufeffa: 1\n"), DefaultLimits)
	if err != nil || docs[0]["metadata"].(map[string]any)["\ufeffa"] == nil {
		t.Errorf("DecodeYAML(a byte order mark inside a line) = %v, %v; want it part of the key, as before", docs, err)
	}
	in := yamlJob + "---\n\ufeff" + blockList(5000)
	docs, err = DecodeYAML([]byte(in), DefaultLimits)
	checkRefusal(t, "DecodeYAML", in, docs, err, Error{Document: 1, Line: 6, Problem: "a byte order mark (U+FEFF) starts this line"})
}
