package manifest

import "strings"

// A pre-scan of YAML that counts the nodes go.yaml.in/yaml/v3 would build, before it builds any.
//
// That library parses a whole document into a tree of yaml.Node (≈ 170 bytes each, keys
// included) before DecodeYAML can look at any of it, so a 1.5 MiB body of `[0,0,0,…` or
// `- a:\n` would hold hundreds of megabytes before the walker's count refused it. The scanner
// here follows the library's own scanner and parser (libyaml's, as ported to Go) closely enough
// to produce the same token stream and the same events, but keeps nothing: no token text, no
// node, only the counts, the indentation and flow stacks (as deep as the input nests) and a queue
// of the few tokens a possible simple key holds back. Where it meets what the library refuses it
// stops and says where; DecodeYAML then lets the library read no further than a margin past it.

// yamlTok is a token of the YAML scanner, as far as counting nodes needs it.
type yamlTok uint8

const (
	tStreamEnd yamlTok = iota + 1
	tDirective
	tDocStart
	tDocEnd
	tBlockSeqStart
	tBlockMapStart
	tBlockEnd
	tFlowSeqStart
	tFlowSeqEnd
	tFlowMapStart
	tFlowMapEnd
	tBlockEntry
	tFlowEntry
	tKey
	tValue
	tAlias
	tAnchor
	tTag
	tScalar
)

// queued is a token waiting for the parser, with the line it starts on (1-based).
type queued struct {
	tok  yamlTok
	line int
}

// simpleKey is where a key without "?" may have begun, at one flow level.
type simpleKey struct {
	possible, required bool
	token              int // the number of its first token in the stream
	index, line, col   int // where it began, in characters
}

// yamlScanner mirrors the library's scanner: positions count characters, not bytes, as its
// marks do, because its 1024-character bound on simple keys and its indentation are in
// characters.
type yamlScanner struct {
	src               []byte
	pos               int // byte offset
	index, line, col  int // 0-based, in characters
	flowLevel         int
	indent            int
	indents           []int
	simpleKeyAllowed  bool
	keys              []simpleKey // one per flow level, the block level first
	lowestKey         int         // no level below it holds a possible key
	queue             []queued    // tokens fetched; those from qhead on are not yet handed over
	qhead             int
	head              int // tokens handed to the parser so far
	streamEndFetched  bool
	cut               bool // src stops at a character the reader refuses: its end is a failure
	newlines          int  // line breaks since the last character that is not a blank
	failed            bool
	failBOM           bool // it failed at a byte order mark at the start of a line
	failPos, failLine int
}

func newYAMLScanner(src []byte) *yamlScanner {
	end := readable(src)
	s := &yamlScanner{src: src[:end], indent: -1, simpleKeyAllowed: true, cut: end < len(src)}
	s.keys = append(make([]simpleKey, 0, 16), simpleKey{})
	s.indents = make([]int, 0, 16)
	if len(src) >= 3 && src[0] == 0xEF && src[1] == 0xBB && src[2] == 0xBF {
		s.pos = 3 // the reader drops a leading byte order mark before the scanner sees it
	}
	return s
}

// at is the byte i bytes ahead, 0 past the end (as the library's buffer ends in NUL).
func (s *yamlScanner) at(i int) byte {
	if s.pos+i < len(s.src) {
		return s.src[s.pos+i]
	}
	return 0
}

func (s *yamlScanner) isBreakAt(i int) bool {
	switch s.at(i) {
	case '\r', '\n':
		return true
	case 0xC2:
		return s.at(i+1) == 0x85
	case 0xE2:
		return s.at(i+1) == 0x80 && (s.at(i+2) == 0xA8 || s.at(i+2) == 0xA9)
	}
	return false
}

func (s *yamlScanner) isBlankAt(i int) bool  { return s.at(i) == ' ' || s.at(i) == '\t' }
func (s *yamlScanner) isZAt(i int) bool      { return s.pos+i >= len(s.src) }
func (s *yamlScanner) isBreakZAt(i int) bool { return s.isBreakAt(i) || s.isZAt(i) }
func (s *yamlScanner) isBlankZAt(i int) bool { return s.isBlankAt(i) || s.isBreakZAt(i) }

// skip moves past one character.
func (s *yamlScanner) skip() {
	c := s.src[s.pos]
	if c != ' ' && c != '\t' {
		s.newlines = 0
	}
	switch {
	case c < 0x80:
		s.pos++
	case c < 0xE0:
		s.pos += 2
	case c < 0xF0:
		s.pos += 3
	default:
		s.pos += 4
	}
	s.index++
	s.col++
}

// skipLine moves past one line break (CR LF counts as one).
func (s *yamlScanner) skipLine() {
	if s.at(0) == '\r' && s.at(1) == '\n' {
		s.pos += 2
		s.index += 2
	} else {
		s.skip()
	}
	s.col = 0
	s.line++
	s.newlines++
}

// fail stops the scan where the library would refuse the input (or might: the pre-scan is
// allowed to give up early, never to read on where the library stops).
func (s *yamlScanner) fail() {
	if !s.failed {
		s.failed, s.failPos, s.failLine = true, s.pos, s.line+1
	}
}

// readable is how much of src the library's reader accepts: it refuses control characters
// (all but tab, line feed and carriage return), DEL, C1 controls but NEL, and U+FFFE/U+FFFF.
func readable(src []byte) int {
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\t' || c == '\n' || c == '\r':
		case c < 0x20 || c == 0x7F:
			return i
		case c == 0xC2 && i+1 < len(src) && src[i+1] < 0xA0 && src[i+1] != 0x85:
			return i
		case c == 0xEF && i+2 < len(src) && src[i+1] == 0xBF && src[i+2] >= 0xBE:
			return i
		}
	}
	return len(src)
}

// waiting is how many tokens are queued and not yet handed to the parser.
func (s *yamlScanner) waiting() int { return len(s.queue) - s.qhead }

// push queues a token at the end.
func (s *yamlScanner) push(t yamlTok) { s.insert(s.waiting(), t, s.line+1) }

// insert queues a token at position i among those waiting.
func (s *yamlScanner) insert(i int, t yamlTok, line int) {
	i += s.qhead
	s.queue = append(s.queue, queued{})
	copy(s.queue[i+1:], s.queue[i:])
	s.queue[i] = queued{tok: t, line: line}
}

// next hands the parser its next token, fetching as many as it takes to know that no simple
// key will still be inserted before it.
func (s *yamlScanner) next() (queued, bool) {
	for !s.failed {
		if s.waiting() > 0 && !s.headIsKey() {
			break
		}
		if s.streamEndFetched {
			break
		}
		s.fetch()
	}
	if s.failed || s.waiting() == 0 {
		return queued{}, false
	}
	return s.queue[s.qhead], true
}

// take removes the token next returned.
func (s *yamlScanner) take() {
	s.qhead++
	s.head++
	if s.qhead == len(s.queue) { // all handed over: the queue's array is reused from its start
		s.queue, s.qhead = s.queue[:0], 0
	}
}

// headIsKey says whether a possible simple key starts at the head of the queue. Keys at deeper
// levels begin at later tokens, so the first possible key from the bottom decides.
func (s *yamlScanner) headIsKey() bool {
	for i := s.lowestKey; i < len(s.keys); i++ {
		k := &s.keys[i]
		if !k.possible {
			if i == s.lowestKey {
				s.lowestKey++
			}
			continue
		}
		if k.token != s.head {
			return false
		}
		return s.keyValid(k)
	}
	return false
}

// keyValid is the library's check that a simple key is still possible: on the same line and
// within 1024 characters.
func (s *yamlScanner) keyValid(k *simpleKey) bool {
	if !k.possible {
		return false
	}
	if k.line < s.line || k.index+1024 < s.index {
		if k.required {
			s.fail() // "could not find expected ':'"
			return false
		}
		k.possible = false
		return false
	}
	return true
}

func (s *yamlScanner) saveKey() {
	if !s.simpleKeyAllowed {
		return
	}
	required := s.flowLevel == 0 && s.indent == s.col
	s.removeKey()
	lvl := len(s.keys) - 1
	s.keys[lvl] = simpleKey{possible: true, required: required, token: s.head + s.waiting(), index: s.index, line: s.line, col: s.col}
	if lvl < s.lowestKey {
		s.lowestKey = lvl
	}
}

func (s *yamlScanner) removeKey() {
	k := &s.keys[len(s.keys)-1]
	if k.possible && k.required {
		s.fail() // "could not find expected ':'"
	}
	k.possible = false
}

func (s *yamlScanner) rollIndent(col, number int, t yamlTok, line int) {
	if s.flowLevel > 0 || s.indent >= col {
		return
	}
	s.indents = append(s.indents, s.indent)
	s.indent = col
	if len(s.indents) > 10000 {
		s.fail() // "exceeded max depth of 10000"
		return
	}
	if number < 0 {
		s.insert(s.waiting(), t, line)
	} else {
		s.insert(number-s.head, t, line)
	}
}

func (s *yamlScanner) unrollIndent(col int) {
	if s.flowLevel > 0 {
		return
	}
	for s.indent > col {
		s.push(tBlockEnd)
		s.indent = s.indents[len(s.indents)-1]
		s.indents = s.indents[:len(s.indents)-1]
	}
}

// fetch scans the next token (or the few that one character makes), as the library's
// fetch_next_token does.
func (s *yamlScanner) fetch() {
	s.toNextToken()
	if s.failed {
		return
	}
	s.unrollIndent(s.col)
	if s.isZAt(0) {
		if s.cut {
			s.fail() // "control characters are not allowed"
			return
		}
		s.fetchStreamEnd()
		return
	}
	c := s.at(0)
	if s.col == 0 && c == '%' {
		s.fetchDirective()
		return
	}
	if s.col == 0 && (c == '-' || c == '.') && s.at(1) == c && s.at(2) == c && s.isBlankZAt(3) {
		s.unrollIndent(-1)
		s.removeKey()
		s.simpleKeyAllowed = false
		s.skip()
		s.skip()
		s.skip()
		if c == '-' {
			s.push(tDocStart)
		} else {
			s.push(tDocEnd)
		}
		return
	}
	if !s.fetchIndicator(c) {
		s.fetchScalarOrProperty(c)
	}
	if !s.failed && s.waiting() > 0 && s.queue[len(s.queue)-1].tok != tBlockEntry {
		s.lineComment()
	}
}

// lineComment takes a comment on the line of the token just fetched, as the library's
// scan_line_comment does: blanks (tabs too) up to a "#" within 512 characters, then the
// comment. It matters for a tab before the comment, which is otherwise not skipped.
func (s *yamlScanner) lineComment() {
	if s.newlines > 0 {
		return
	}
	for i := 0; i < 512; i++ {
		if s.isBlankAt(i) {
			continue
		}
		if s.at(i) == '#' {
			for !s.isBreakZAt(0) {
				s.skip()
			}
		}
		return
	}
}

// fetchIndicator fetches the token of a flow or block indicator at c, if it is one.
func (s *yamlScanner) fetchIndicator(c byte) bool {
	switch {
	case c == '[' || c == '{':
		s.saveKey()
		s.keys = append(s.keys, simpleKey{})
		s.flowLevel++
		if s.flowLevel > 10000 {
			s.fail() // "exceeded max depth of 10000"
			return true
		}
		s.simpleKeyAllowed = true
		s.skip()
		s.push(pick(c == '[', tFlowSeqStart, tFlowMapStart))
	case c == ']' || c == '}':
		s.removeKey()
		if s.flowLevel > 0 {
			s.flowLevel--
			s.keys = s.keys[:len(s.keys)-1]
			s.lowestKey = min(s.lowestKey, len(s.keys)-1)
		}
		s.simpleKeyAllowed = false
		s.skip()
		s.push(pick(c == ']', tFlowSeqEnd, tFlowMapEnd))
	case c == ',':
		s.removeKey()
		s.simpleKeyAllowed = true
		s.skip()
		s.push(tFlowEntry)
	case c == '-' && s.isBlankZAt(1):
		s.fetchBlockIndicator(tBlockEntry, tBlockSeqStart)
	case c == '?' && (s.flowLevel > 0 || s.isBlankZAt(1)):
		s.fetchBlockIndicator(tKey, tBlockMapStart)
	case c == ':' && (s.flowLevel > 0 || s.isBlankZAt(1)):
		s.fetchValue()
	default:
		return false
	}
	return true
}

// fetchBlockIndicator fetches "- " or "? ", which in the block context may start a collection.
func (s *yamlScanner) fetchBlockIndicator(t, start yamlTok) {
	if s.flowLevel == 0 {
		if !s.simpleKeyAllowed {
			s.fail() // "block sequence entries (mapping keys) are not allowed in this context"
			return
		}
		s.rollIndent(s.col, -1, start, s.line+1)
	}
	s.removeKey()
	s.simpleKeyAllowed = t == tBlockEntry || s.flowLevel == 0
	s.skip()
	s.push(t)
}

// fetchValue fetches ":", inserting the key (and the mapping it starts) before a simple key.
func (s *yamlScanner) fetchValue() {
	k := &s.keys[len(s.keys)-1]
	if s.keyValid(k) {
		s.insert(k.token-s.head, tKey, k.line+1)
		s.rollIndent(k.col, k.token, tBlockMapStart, k.line+1)
		k.possible = false
		s.simpleKeyAllowed = false
	} else {
		if s.failed {
			return
		}
		if s.flowLevel == 0 {
			if !s.simpleKeyAllowed {
				s.fail() // "mapping values are not allowed in this context"
				return
			}
			s.rollIndent(s.col, -1, tBlockMapStart, s.line+1)
		}
		s.simpleKeyAllowed = s.flowLevel == 0
	}
	s.skip()
	s.push(tValue)
}

// fetchScalarOrProperty fetches an alias, an anchor, a tag or a scalar starting at c.
func (s *yamlScanner) fetchScalarOrProperty(c byte) {
	switch {
	case c == '*' || c == '&':
		s.saveKey()
		s.simpleKeyAllowed = false
		s.scanAnchor(c)
	case c == '!':
		s.saveKey()
		s.simpleKeyAllowed = false
		s.scanTag()
	case (c == '|' || c == '>') && s.flowLevel == 0:
		s.removeKey()
		s.simpleKeyAllowed = true
		s.scanBlockScalar()
	case c == '\'' || c == '"':
		s.saveKey()
		s.simpleKeyAllowed = false
		s.scanQuoted(c == '\'')
	case s.plainStart(c):
		s.saveKey()
		s.simpleKeyAllowed = false
		s.scanPlain()
	default:
		s.fail() // "found character that cannot start any token"
	}
}

// plainStart says whether c (at pos) may start a plain scalar.
func (s *yamlScanner) plainStart(c byte) bool {
	switch c {
	case '-':
		return !s.isBlankAt(1)
	case '?', ':':
		return s.flowLevel == 0 && !s.isBlankZAt(1)
	case ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	}
	return !s.isBlankZAt(0)
}

func (s *yamlScanner) fetchStreamEnd() {
	if s.col != 0 {
		s.col = 0
		s.line++
	}
	s.unrollIndent(-1)
	s.removeKey()
	s.simpleKeyAllowed = false
	s.push(tStreamEnd)
	s.streamEndFetched = true
}

// fetchDirective takes a %YAML or %TAG line as one token; the library checks its content, and
// refuses a bad one before any node of the document exists.
func (s *yamlScanner) fetchDirective() {
	s.unrollIndent(-1)
	s.removeKey()
	s.simpleKeyAllowed = false
	for !s.isBreakZAt(0) {
		s.skip()
	}
	s.push(tDirective)
}

// toNextToken skips blanks, comments and line breaks, as scan_to_next_token does.
func (s *yamlScanner) toNextToken() {
	for {
		for s.at(0) == ' ' || (s.flowLevel > 0 || !s.simpleKeyAllowed) && s.at(0) == '\t' {
			s.skip()
		}
		if s.at(0) == '#' {
			for !s.isBreakZAt(0) {
				s.skip()
			}
		}
		if !s.isBreakAt(0) {
			if s.col == 0 && s.at(0) == 0xEF && s.at(1) == 0xBB && s.at(2) == 0xBF {
				// The library skips a byte order mark at a line's start when its buffer happens
				// to begin there, and otherwise reads it as text: which of the two is not known
				// here, so the count stops, and the library reads at most the margin past it.
				s.fail()
				s.failBOM = true
			}
			return
		}
		s.skipLine()
		if s.flowLevel == 0 {
			s.simpleKeyAllowed = true
		}
	}
}

// scanAnchor takes an anchor or alias name: letters, digits, "_" and "-", then a blank or
// one of ?:,]}%@`.
func (s *yamlScanner) scanAnchor(c byte) {
	line := s.line + 1
	s.skip()
	n := 0
	for isAnchorChar(s.at(0)) {
		s.skip()
		n++
	}
	if n == 0 || !(s.isBlankZAt(0) || strings.IndexByte("?:,]}%@`", s.at(0)) >= 0) {
		s.fail() // "did not find expected alphabetic or numeric character"
		return
	}
	t := tAnchor
	if c == '*' {
		t = tAlias
	}
	s.insert(s.waiting(), t, line)
}

func isAnchorChar(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_' || c == '-'
}

func pick(first bool, a, b yamlTok) yamlTok {
	if first {
		return a
	}
	return b
}

// scanTag takes a tag up to the blank that must follow it. The library checks its characters
// as well; where it refuses one, it stops before the pre-scan does.
func (s *yamlScanner) scanTag() {
	line := s.line + 1
	for !s.isBlankZAt(0) {
		s.skip()
	}
	s.insert(s.waiting(), tTag, line)
}

// scanBlockScalar takes a literal (|) or folded (>) scalar: its header line, then every line
// indented at least as far as its content, as scan_block_scalar does.
func (s *yamlScanner) scanBlockScalar() {
	line := s.line + 1
	s.skip()
	increment := 0
	for i := 0; i < 2; i++ { // a chomping indicator and a digit, in either order
		switch c := s.at(0); {
		case c == '+' || c == '-':
			s.skip()
		case c == '0':
			s.fail() // "found an indentation indicator equal to 0"
			return
		case c >= '1' && c <= '9' && increment == 0:
			increment = int(c - '0')
			s.skip()
		}
	}
	for s.isBlankAt(0) {
		s.skip()
	}
	if s.at(0) == '#' {
		for !s.isBreakZAt(0) {
			s.skip()
		}
	}
	if !s.isBreakZAt(0) {
		s.fail() // "did not find expected comment or line break"
		return
	}
	if s.isBreakAt(0) {
		s.skipLine()
	}
	indent := 0
	if increment > 0 {
		indent = increment
		if s.indent >= 0 {
			indent = s.indent + increment
		}
	}
	s.blockScalarBreaks(&indent)
	for s.col == indent && !s.isZAt(0) && !s.failed {
		for !s.isBreakZAt(0) {
			s.skip()
		}
		if s.isZAt(0) {
			break
		}
		s.skipLine()
		s.blockScalarBreaks(&indent)
	}
	s.insert(s.waiting(), tScalar, line)
}

// blockScalarBreaks skips the indentation and empty lines before a block scalar's next line,
// finding its indentation from them when it is not yet known.
func (s *yamlScanner) blockScalarBreaks(indent *int) {
	maxIndent := 0
	for {
		for (*indent == 0 || s.col < *indent) && s.at(0) == ' ' {
			s.skip()
		}
		maxIndent = max(maxIndent, s.col)
		if (*indent == 0 || s.col < *indent) && s.at(0) == '\t' {
			s.fail() // "found a tab character where an indentation space is expected"
			return
		}
		if !s.isBreakAt(0) {
			break
		}
		s.skipLine()
	}
	if *indent == 0 {
		*indent = max(maxIndent, s.indent+1, 1)
	}
}

// docIndicator says whether a "---" or "..." line starts here.
func (s *yamlScanner) docIndicator() bool {
	c := s.at(0)
	return s.col == 0 && (c == '-' || c == '.') && s.at(1) == c && s.at(2) == c && s.isBlankZAt(3)
}

// scanQuoted takes a single- or double-quoted scalar, over as many lines as it runs.
func (s *yamlScanner) scanQuoted(single bool) {
	line := s.line + 1
	s.skip()
	for {
		if s.docIndicator() || s.isZAt(0) {
			s.fail() // "found unexpected document indicator" or "found unexpected end of stream"
			return
		}
		for !s.isBlankZAt(0) {
			c := s.at(0)
			switch {
			case single && c == '\'' && s.at(1) == '\'':
				s.skip()
				s.skip()
				continue
			case single && c == '\'' || !single && c == '"':
				s.skip()
				s.insert(s.waiting(), tScalar, line)
				return
			case !single && c == '\\' && s.isBreakAt(1):
				s.skip()
				s.skipLine()
				continue
			case !single && c == '\\':
				s.skip() // the library checks the escape; what follows it is one more character
				if s.isZAt(0) {
					continue
				}
			}
			s.skip()
		}
		for s.isBlankAt(0) || s.isBreakAt(0) {
			if s.isBlankAt(0) {
				s.skip()
			} else {
				s.skipLine()
			}
		}
	}
}

// scanPlain takes a plain scalar, over the lines that continue it, as scan_plain_scalar does.
func (s *yamlScanner) scanPlain() {
	line := s.line + 1
	indent := s.indent + 1
	leadingBlanks := false
	for {
		if s.docIndicator() || s.at(0) == '#' {
			break
		}
		for !s.isBlankZAt(0) {
			c := s.at(0)
			if c == ':' && s.isBlankZAt(1) || s.flowLevel > 0 && strings.IndexByte(",?[]{}", c) >= 0 {
				break
			}
			s.skip()
			leadingBlanks = false
		}
		if !(s.isBlankAt(0) || s.isBreakAt(0)) {
			break
		}
		for s.isBlankAt(0) || s.isBreakAt(0) {
			if s.isBlankAt(0) {
				if leadingBlanks && s.col < indent && s.at(0) == '\t' {
					s.fail() // "found a tab character that violates indentation"
					return
				}
				s.skip()
			} else {
				s.skipLine()
				leadingBlanks = true
			}
		}
		if s.flowLevel == 0 && s.col < indent {
			break
		}
	}
	s.insert(s.waiting(), tScalar, line)
	if leadingBlanks {
		s.simpleKeyAllowed = true
	}
}
