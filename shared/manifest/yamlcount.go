package manifest

// The parser half of the pre-scan: the library's parser states (parserc.go), driven by
// yamlScanner's tokens, counting the nodes each event would make instead of making them.

type yamlState uint8

const (
	psImplicitDocStart yamlState = iota
	psDocStart
	psDocContent
	psDocEnd
	psBlockNode
	psBlockNodeOrIndentless
	psFlowNode
	psBlockSeqFirst
	psBlockSeqEntry
	psIndentlessEntry
	psBlockMapFirstKey
	psBlockMapKey
	psBlockMapValue
	psFlowSeqFirst
	psFlowSeqEntry
	psFlowSeqMapKey
	psFlowSeqMapValue
	psFlowSeqMapEnd
	psFlowMapFirstKey
	psFlowMapKey
	psFlowMapValue
	psFlowMapEmptyValue
	psEnd
)

// yamlCount is what the pre-scan found.
type yamlCount struct {
	// Nodes is how many yaml.Node the library would build for the documents DecodeYAML
	// would read, document nodes included, up to where the count stopped.
	Nodes int
	// OverDoc is the document (0-based, empty ones counted) in which Nodes passes the cap,
	// and Over the refusal to give instead of parsing it; -1 and nil when it does not.
	OverDoc int
	Over    *Error
	// FailDoc is the document in which the scan met input the library refuses (or might),
	// at byte FailPos; -1 when it did not. The library is let read only a margin past it.
	FailDoc, FailPos, FailLine int
	// FailBOM says the scan gave up at a byte order mark at the start of a line past the first.
	FailBOM bool
}

// yamlCounter walks the library's parser states over the scanner's tokens.
type yamlCounter struct {
	s      *yamlScanner
	limits Limits
	cap    int
	state  yamlState
	states []yamlState
	// keyish has one entry per open collection: whether it is a key or inside one, where
	// DecodeYAML counts no value.
	keyish []bool
	inKey  int
	count  yamlCount
	// values counts what DecodeYAML's walker counts: every node but keys, key contents,
	// document nodes and empty documents.
	values         int
	docsRead, docs int
	docEmpty       bool
	firstOverLine  int // the line of the value one over MaxNodes, 0 until there is one
	firstOverDoc   int
	complexKeyLine int // the line of the first key that is an object or array
	complexKeyDoc  int
	stop           bool
}

// yamlNodeCap is the most nodes the library may build for an input within limits: each value
// DecodeYAML counts, its key when it has one, and each document's own node and empty value.
// Past it, the input holds more values than MaxNodes (or a key that is an object or array).
func yamlNodeCap(l Limits) int { return 2*l.MaxNodes + 2*(2*l.MaxDocuments+1) }

// countYAML pre-scans src, which checkInput has passed. A panic in it (a bug: the fuzz tests
// look for them) counts as input it cannot read, so the library reads little past it.
func countYAML(src []byte, limits Limits) (count yamlCount) {
	c := &yamlCounter{s: newYAMLScanner(src), limits: limits, cap: yamlNodeCap(limits)}
	c.count = yamlCount{OverDoc: -1, FailDoc: -1}
	defer func() {
		if p := recover(); p != nil {
			count = c.count
			count.FailDoc, count.FailPos, count.FailLine = max(c.docsRead-1, 0), min(c.s.pos, len(src)), c.s.line+1
		}
	}()
	c.states = make([]yamlState, 0, 16)
	c.keyish = make([]bool, 0, 16)
	for !c.stop && c.state != psEnd {
		if !c.step() {
			c.count.FailDoc, c.count.FailPos, c.count.FailLine = max(c.docsRead-1, 0), c.s.pos, c.s.line+1
			if c.s.failed {
				c.count.FailPos, c.count.FailLine, c.count.FailBOM = c.s.failPos, c.s.failLine, c.s.failBOM
			}
			break
		}
	}
	return c.count
}

// peek is the next token; ok is false when the scan failed.
func (c *yamlCounter) peek() (queued, bool) { return c.s.next() }

func (c *yamlCounter) pop() {
	c.state = c.states[len(c.states)-1]
	c.states = c.states[:len(c.states)-1]
}

func (c *yamlCounter) push(st yamlState) { c.states = append(c.states, st) }

// node counts one node the library would build: a scalar, an alias, or the start of a
// collection (open says so; closing it must call closeNode).
func (c *yamlCounter) node(key, open bool, line int) {
	c.count.Nodes++
	keyish := key || c.inKey > 0
	if !keyish && !c.docEmpty {
		c.values++
		if c.values == c.limits.MaxNodes+1 {
			c.firstOverLine, c.firstOverDoc = line, c.docs
		}
	}
	if key && open && c.inKey == 0 && c.complexKeyLine == 0 {
		c.complexKeyLine, c.complexKeyDoc = line, c.docs
	}
	if open {
		c.keyish = append(c.keyish, keyish)
		if keyish {
			c.inKey++
		}
	}
	if c.count.Nodes > c.cap {
		c.refuse()
	}
}

func (c *yamlCounter) closeNode() {
	if c.keyish[len(c.keyish)-1] {
		c.inKey--
	}
	c.keyish = c.keyish[:len(c.keyish)-1]
}

// refuse stops the count at the cap with the error the walker would have given first of the
// two it can be: one value too many, or a key that is an object or array.
func (c *yamlCounter) refuse() {
	c.stop = true
	c.count.OverDoc = c.docsRead - 1
	switch {
	case c.firstOverLine > 0 && (c.complexKeyLine == 0 || c.firstOverLine <= c.complexKeyLine):
		c.count.Over = &Error{Document: c.firstOverDoc, Line: c.firstOverLine, Problem: problemf(tooManyNodes, c.limits.MaxNodes)}
	case c.complexKeyLine > 0:
		c.count.Over = &Error{Document: c.complexKeyDoc, Line: c.complexKeyLine, Problem: yamlKeyNotScal}
	default: // not reached while the cap holds; refuse all the same
		c.count.Over = &Error{Document: c.docs, Line: c.s.line + 1, Problem: problemf(tooManyNodes, c.limits.MaxNodes)}
	}
}

// step handles one parser state, as yaml_parser_state_machine does; false when the tokens ran
// out (the scan failed) or the parser would refuse them.
func (c *yamlCounter) step() bool {
	switch c.state {
	case psImplicitDocStart, psDocStart:
		return c.documentStart(c.state == psImplicitDocStart)
	case psDocContent:
		return c.documentContent()
	case psDocEnd:
		return c.documentEnd()
	case psBlockNode:
		return c.parseNode(true, false, false)
	case psBlockSeqFirst, psBlockSeqEntry:
		return c.blockSequenceEntry(c.state == psBlockSeqFirst)
	case psIndentlessEntry:
		return c.indentlessEntry()
	case psBlockMapFirstKey, psBlockMapKey:
		return c.blockMappingKey(c.state == psBlockMapFirstKey)
	case psBlockMapValue:
		return c.blockMappingValue()
	case psFlowSeqFirst, psFlowSeqEntry:
		return c.flowSequenceEntry(c.state == psFlowSeqFirst)
	case psFlowSeqMapKey:
		return c.flowSequenceMapKey()
	case psFlowSeqMapValue:
		return c.flowSequenceMapValue()
	case psFlowSeqMapEnd:
		c.closeNode()
		c.state = psFlowSeqEntry
		return true
	case psFlowMapFirstKey, psFlowMapKey:
		return c.flowMappingKey(c.state == psFlowMapFirstKey)
	case psFlowMapValue, psFlowMapEmptyValue:
		return c.flowMappingValue(c.state == psFlowMapEmptyValue)
	}
	return false
}

func (c *yamlCounter) documentStart(implicit bool) bool {
	t, ok := c.peek()
	if !ok {
		return false
	}
	if !implicit {
		for t.tok == tDocEnd {
			c.s.take()
			if t, ok = c.peek(); !ok {
				return false
			}
		}
	}
	switch {
	case implicit && t.tok != tDirective && t.tok != tDocStart && t.tok != tStreamEnd:
		c.beginDocument()
		c.push(psDocEnd)
		c.state = psBlockNode
	case t.tok != tStreamEnd:
		for t.tok == tDirective {
			c.s.take()
			if t, ok = c.peek(); !ok {
				return false
			}
		}
		if t.tok != tDocStart {
			return false // "did not find expected <document start>"
		}
		c.beginDocument()
		c.push(psDocEnd)
		c.state = psDocContent
		c.s.take()
	default:
		c.state = psEnd
		c.s.take()
	}
	return true
}

func (c *yamlCounter) beginDocument() {
	c.docsRead++
	c.docEmpty = false
	c.count.Nodes++ // the document's own node
	if c.count.Nodes > c.cap {
		c.refuse()
	}
}

func (c *yamlCounter) documentContent() bool {
	t, ok := c.peek()
	if !ok {
		return false
	}
	switch t.tok {
	case tDirective, tDocStart, tDocEnd, tStreamEnd:
		c.pop()
		c.docEmpty = true // a document of nothing but comments, which DecodeYAML skips
		c.node(false, false, t.line)
		return true
	}
	return c.parseNode(true, false, false)
}

// documentEnd closes a document and stops the count where DecodeYAML would stop reading:
// after the document one past its limits on documents, or the one where the values run over.
func (c *yamlCounter) documentEnd() bool {
	t, ok := c.peek()
	if !ok {
		return false
	}
	if t.tok == tDocEnd {
		c.s.take()
	}
	c.state = psDocStart
	if !c.docEmpty {
		c.docs++
	}
	if c.docsRead > 2*c.limits.MaxDocuments || c.docs > c.limits.MaxDocuments || c.values > c.limits.MaxNodes {
		c.stop = true
	}
	return true
}

// parseNode is yaml_parser_parse_node: an alias, a scalar or a collection's start, after an
// anchor and a tag in either order; key says the node is a mapping's key.
func (c *yamlCounter) parseNode(block, indentless, key bool) bool {
	t, ok := c.peek()
	if !ok {
		return false
	}
	if t.tok == tAlias {
		c.pop()
		c.node(key, false, t.line)
		c.s.take()
		return true
	}
	line, props := t.line, false
	for i := 0; i < 2 && (t.tok == tAnchor || t.tok == tTag); i++ {
		first := t.tok
		props = true
		c.s.take()
		if t, ok = c.peek(); !ok {
			return false
		}
		if t.tok == first {
			break
		}
	}
	switch {
	case indentless && t.tok == tBlockEntry:
		c.state = psIndentlessEntry
		c.node(key, true, line)
	case t.tok == tScalar:
		c.pop()
		c.node(key, false, line)
		c.s.take()
	case t.tok == tFlowSeqStart:
		c.state = psFlowSeqFirst
		c.node(key, true, line)
	case t.tok == tFlowMapStart:
		c.state = psFlowMapFirstKey
		c.node(key, true, line)
	case block && t.tok == tBlockSeqStart:
		c.state = psBlockSeqFirst
		c.node(key, true, line)
	case block && t.tok == tBlockMapStart:
		c.state = psBlockMapFirstKey
		c.node(key, true, line)
	case props:
		c.pop()
		c.node(key, false, line)
	default:
		return false // "did not find expected node content"
	}
	return true
}

// empty counts the empty scalar the parser makes where a node is left out.
func (c *yamlCounter) empty(key bool, line int) { c.node(key, false, line) }

// endCollection closes the innermost collection at its end token.
func (c *yamlCounter) endCollection() {
	c.pop()
	c.closeNode()
	c.s.take()
}

func (c *yamlCounter) blockSequenceEntry(first bool) bool {
	if first {
		c.s.take() // BLOCK-SEQUENCE-START
	}
	t, ok := c.peek()
	if !ok {
		return false
	}
	switch t.tok {
	case tBlockEntry:
		c.s.take()
		if t, ok = c.peek(); !ok {
			return false
		}
		if t.tok != tBlockEntry && t.tok != tBlockEnd {
			c.push(psBlockSeqEntry)
			return c.parseNode(true, false, false)
		}
		c.state = psBlockSeqEntry
		c.empty(false, t.line)
	case tBlockEnd:
		c.endCollection()
	default:
		return false // "did not find expected '-' indicator"
	}
	return true
}

func (c *yamlCounter) indentlessEntry() bool {
	t, ok := c.peek()
	if !ok {
		return false
	}
	if t.tok != tBlockEntry {
		c.pop()
		c.closeNode()
		return true
	}
	c.s.take()
	if t, ok = c.peek(); !ok {
		return false
	}
	switch t.tok {
	case tBlockEntry, tKey, tValue, tBlockEnd:
		c.state = psIndentlessEntry
		c.empty(false, t.line)
		return true
	}
	c.push(psIndentlessEntry)
	return c.parseNode(true, false, false)
}

func (c *yamlCounter) blockMappingKey(first bool) bool {
	if first {
		c.s.take() // BLOCK-MAPPING-START
	}
	t, ok := c.peek()
	if !ok {
		return false
	}
	switch t.tok {
	case tKey:
		c.s.take()
		if t, ok = c.peek(); !ok {
			return false
		}
		switch t.tok {
		case tKey, tValue, tBlockEnd:
			c.state = psBlockMapValue
			c.empty(true, t.line)
			return true
		}
		c.push(psBlockMapValue)
		return c.parseNode(true, true, true)
	case tBlockEnd:
		c.endCollection()
		return true
	}
	return false // "did not find expected key"
}

func (c *yamlCounter) blockMappingValue() bool {
	t, ok := c.peek()
	if !ok {
		return false
	}
	if t.tok == tValue {
		c.s.take()
		if t, ok = c.peek(); !ok {
			return false
		}
		switch t.tok {
		case tKey, tValue, tBlockEnd:
		default:
			c.push(psBlockMapKey)
			return c.parseNode(true, true, false)
		}
	}
	c.state = psBlockMapKey
	c.empty(false, t.line)
	return true
}

func (c *yamlCounter) flowSequenceEntry(first bool) bool {
	if first {
		c.s.take() // [
	}
	t, ok := c.peek()
	if !ok {
		return false
	}
	if t.tok != tFlowSeqEnd {
		if !first {
			if t.tok != tFlowEntry {
				return false // "did not find expected ',' or ']'"
			}
			c.s.take()
			if t, ok = c.peek(); !ok {
				return false
			}
		}
		if t.tok == tKey { // a single-pair mapping: [a: 1]
			c.state = psFlowSeqMapKey
			c.node(false, true, t.line)
			c.s.take()
			return true
		}
		if t.tok != tFlowSeqEnd {
			c.push(psFlowSeqEntry)
			return c.parseNode(false, false, false)
		}
	}
	c.endCollection()
	return true
}

func (c *yamlCounter) flowSequenceMapKey() bool {
	t, ok := c.peek()
	if !ok {
		return false
	}
	switch t.tok {
	case tValue, tFlowEntry, tFlowSeqEnd:
		c.s.take() // as the library does, although the token may be "," or "]"
		c.state = psFlowSeqMapValue
		c.empty(true, t.line)
		return true
	}
	c.push(psFlowSeqMapValue)
	return c.parseNode(false, false, true)
}

func (c *yamlCounter) flowSequenceMapValue() bool {
	t, ok := c.peek()
	if !ok {
		return false
	}
	if t.tok == tValue {
		c.s.take()
		if t, ok = c.peek(); !ok {
			return false
		}
		if t.tok != tFlowEntry && t.tok != tFlowSeqEnd {
			c.push(psFlowSeqMapEnd)
			return c.parseNode(false, false, false)
		}
	}
	c.state = psFlowSeqMapEnd
	c.empty(false, t.line)
	return true
}

func (c *yamlCounter) flowMappingKey(first bool) bool {
	if first {
		c.s.take() // {
	}
	t, ok := c.peek()
	if !ok {
		return false
	}
	if t.tok != tFlowMapEnd {
		if !first {
			if t.tok != tFlowEntry {
				return false // "did not find expected ',' or '}'"
			}
			c.s.take()
			if t, ok = c.peek(); !ok {
				return false
			}
		}
		if t.tok == tKey {
			c.s.take()
			if t, ok = c.peek(); !ok {
				return false
			}
			switch t.tok {
			case tValue, tFlowEntry, tFlowMapEnd:
				c.state = psFlowMapValue
				c.empty(true, t.line)
				return true
			}
			c.push(psFlowMapValue)
			return c.parseNode(false, false, true)
		}
		if t.tok != tFlowMapEnd {
			c.push(psFlowMapEmptyValue)
			return c.parseNode(false, false, true)
		}
	}
	c.endCollection()
	return true
}

func (c *yamlCounter) flowMappingValue(empty bool) bool {
	t, ok := c.peek()
	if !ok {
		return false
	}
	c.state = psFlowMapKey
	if !empty && t.tok == tValue {
		c.s.take()
		if t, ok = c.peek(); !ok {
			return false
		}
		if t.tok != tFlowEntry && t.tok != tFlowMapEnd {
			c.push(psFlowMapKey)
			return c.parseNode(false, false, false)
		}
	}
	c.empty(false, t.line)
	return true
}
