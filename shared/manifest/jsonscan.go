package manifest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// jsonScanner reads one JSON text byte by byte and builds its values as it goes, so that it
// sees every key of an object (encoding/json's map decoding keeps only the last of
// duplicates) and stops at the first value over budget instead of after building the whole
// tree. It accepts exactly the JSON encoding/json accepts (RFC 8259) and builds the values
// encoding/json would with UseNumber; checkInput has already made sure the input is UTF-8.
type jsonScanner struct {
	src []byte
	// text is src as one string: a key, string or number literal without escapes is a slice of
	// it, so that reading one allocates nothing. The decoded values keep text alive.
	text   string
	pos    int        // the next byte to read
	doc    int        // index of the manifest being read; -1 outside any
	path   []PathStep // where in it; its length + 1 is the depth of the value being read
	budget budget
	items  []any  // the elements read so far of the arrays being read, innermost last
	buf    []byte // scratch for a string with escapes
	// Room for path and items at the depths and lengths most manifests keep within, so that
	// they are allocated with the scanner.
	pathRoom  [16]PathStep
	itemsRoom [32]any
}

func newJSONScanner(b []byte, limits Limits) *jsonScanner {
	s := &jsonScanner{src: b, text: string(b), doc: -1, budget: budget{limits: limits}}
	s.path, s.items = s.pathRoom[:0], s.itemsRoom[:0]
	return s
}

// manifests reads the top-level object or array of objects and then requires the end of input.
func (s *jsonScanner) manifests() ([]map[string]any, error) {
	s.skipSpace()
	var docs []map[string]any
	switch s.peek() {
	case '{':
		s.doc = 0
		doc, err := s.manifest()
		if err != nil {
			return nil, err
		}
		docs = append(docs, doc)
	case '[':
		s.pos++
		var err error
		if docs, err = s.manifestList(); err != nil {
			return nil, err
		}
	default:
		if _, err := s.scalar(); err != nil {
			return nil, err
		}
		return nil, &Error{Document: -1, Problem: notArrayOrObj}
	}
	s.doc = -1
	if s.skipSpace(); s.pos < len(s.src) {
		return nil, s.fail(trailingJSON)
	}
	return docs, nil
}

// manifestList reads the manifests of the top-level array, its [ already read, up to and
// including its ].
func (s *jsonScanner) manifestList() ([]map[string]any, error) {
	var docs []map[string]any
	switch s.skipSpace(); {
	case s.peek() == ']':
		s.pos++
		return docs, nil
	case s.pos == len(s.src) || s.peek() == '}':
		return nil, s.unexpected("where a manifest or ] should be")
	}
	for {
		s.doc = len(docs)
		doc, err := s.manifest()
		if err != nil {
			return nil, err
		}
		docs = append(docs, doc)
		switch s.skipSpace(); {
		case s.peek() == ']':
			s.pos++
			return docs, nil
		case s.pos == len(s.src) || s.peek() == '}':
			return nil, s.unexpected("after a manifest; expected , or ]")
		}
		if len(docs) == s.budget.limits.MaxDocuments {
			return nil, &Error{Document: -1, Problem: problemf(tooManyDocs, s.budget.limits.MaxDocuments)}
		}
		s.doc = len(docs)
		if s.peek() != ',' {
			return nil, s.unexpected("after a manifest; expected , or ]")
		}
		s.pos++
	}
}

// manifest reads one manifest and checks its shape.
func (s *jsonScanner) manifest() (map[string]any, error) {
	v, err := s.value()
	if err != nil {
		return nil, err
	}
	doc, path, problem := checkShape(v)
	if problem != "" {
		return nil, &Error{Document: s.doc, Path: path, Line: lineAt(s.src, int64(s.pos)), Problem: problem}
	}
	return doc, nil
}

// value reads the value that starts after any white space, at s.path.
func (s *jsonScanner) value() (any, error) {
	s.skipSpace()
	if c := s.peek(); c == '{' || c == '[' {
		s.pos++
		return s.container(c)
	}
	v, err := s.scalar()
	if err != nil {
		return nil, err
	}
	return s.leaf(v)
}

// container reads the object or array whose opening c has just been read, at s.path.
func (s *jsonScanner) container(c byte) (any, error) {
	if problem := s.budget.spend(len(s.path) + 1); problem != "" {
		return nil, s.fail(problem)
	}
	if c == '{' {
		obj, err := s.object()
		if err != nil {
			return nil, err
		}
		return obj, nil
	}
	arr, err := s.array()
	if err != nil {
		return nil, err
	}
	return arr, nil
}

// leaf counts the scalar v just read, at s.path, and refuses a number float64 cannot hold.
func (s *jsonScanner) leaf(v any) (any, error) {
	if problem := s.budget.spend(len(s.path) + 1); problem != "" {
		return nil, s.fail(problem)
	}
	if n, ok := v.(json.Number); ok && !inRange(string(n)) {
		return nil, s.fail(problemf(numberRange, n))
	}
	return v, nil
}

// object reads the members of an object, its { already read, up to and including its }.
func (s *jsonScanner) object() (map[string]any, error) {
	obj := map[string]any{}
	if s.skipSpace(); s.peek() == '}' {
		s.pos++
		return obj, nil
	}
	for {
		if s.skipSpace(); s.peek() != '"' {
			return nil, s.unexpected("where an object key should be; a key is a string in double quotes")
		}
		key, err := s.str()
		if err != nil {
			return nil, err
		}
		s.path = append(s.path, PathStep{Key: key})
		if err := s.member(obj, key); err != nil {
			return nil, err
		}
		s.path = s.path[:len(s.path)-1]
		switch s.skipSpace(); s.peek() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return obj, nil
		default:
			return nil, s.unexpected("after an object member; expected , or }")
		}
	}
}

// member reads the value of obj's member key, whose key has just been read, and adds it to obj.
// A duplicate key is refused on its own line before anything wrong in its value, as it is
// found first; it is looked for only once the value is read, so that a member costs one hash.
func (s *jsonScanner) member(obj map[string]any, key string) error {
	keyEnd, depth := s.pos, len(s.path)
	if s.skipSpace(); s.peek() != ':' {
		return s.duplicateOr(obj, key, keyEnd, depth, s.unexpected("after an object key; expected :"))
	}
	s.pos++
	v, err := s.value()
	if err != nil {
		return s.duplicateOr(obj, key, keyEnd, depth, err)
	}
	n := len(obj)
	if obj[key] = v; len(obj) == n {
		return s.duplicateOr(obj, key, keyEnd, depth, nil)
	}
	return nil
}

// duplicateOr is the error of key duplicated in obj, found at keyEnd with s.path as deep as
// depth, if it is, and otherwise err.
func (s *jsonScanner) duplicateOr(obj map[string]any, key string, keyEnd, depth int, err error) error {
	if _, dup := obj[key]; dup {
		s.pos, s.path = keyEnd, s.path[:depth]
		return s.fail(problemf(duplicateKeyRaw, key))
	}
	return err
}

// array reads the elements of an array, its [ already read, up to and including its ]. They
// gather on s.items, so that the array is allocated once, at its final length.
func (s *jsonScanner) array() ([]any, error) {
	base := len(s.items)
	if s.skipSpace(); s.peek() == ']' {
		s.pos++
		return []any{}, nil
	}
	for {
		v, err := s.element(len(s.items) - base)
		if err != nil {
			return nil, err
		}
		s.items = append(s.items, v)
		switch s.skipSpace(); s.peek() {
		case ',':
			s.pos++
			continue
		case ']':
			s.pos++
		default:
			return nil, s.unexpected("after an array element; expected , or ]")
		}
		arr := make([]any, len(s.items)-base)
		copy(arr, s.items[base:])
		clear(s.items[base:])
		s.items = s.items[:base]
		return arr, nil
	}
}

// element reads the array element at index i. A syntax error in its first token is the
// array's, at the array's path, as encoding/json's tokens had it.
func (s *jsonScanner) element(i int) (any, error) {
	s.skipSpace()
	c := s.peek()
	var v any
	var err error
	if c != '{' && c != '[' {
		if v, err = s.scalar(); err != nil {
			return nil, err
		}
	}
	s.path = append(s.path, PathStep{Index: i, IsIndex: true})
	if c == '{' || c == '[' {
		s.pos++
		v, err = s.container(c)
	} else {
		v, err = s.leaf(v)
	}
	s.path = s.path[:len(s.path)-1]
	return v, err
}

// scalar reads the string, number, true, false or null at s.pos.
func (s *jsonScanner) scalar() (any, error) {
	switch c := s.peek(); {
	case c == '"':
		str, err := s.str()
		if err != nil {
			return nil, err
		}
		return str, nil
	case c == '-' || '0' <= c && c <= '9':
		n, err := s.number()
		if err != nil {
			return nil, err
		}
		return n, nil
	case c == 't':
		return true, s.literal("true")
	case c == 'f':
		return false, s.literal("false")
	case c == 'n':
		return nil, s.literal("null")
	}
	return nil, s.unexpected("where a value should be")
}

// literal reads word, which starts at s.pos.
func (s *jsonScanner) literal(word string) error {
	for i := range len(word) {
		switch {
		case s.pos+i == len(s.src):
			return s.eof()
		case s.src[s.pos+i] != word[i]:
			s.pos += i
			return s.unexpected("in the literal " + word)
		}
	}
	s.pos += len(word)
	return nil
}

// number reads the number at s.pos: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *jsonScanner) number() (json.Number, error) {
	start := s.pos
	if s.peek() == '-' {
		s.pos++
	}
	switch c := s.peek(); {
	case c == '0':
		s.pos++
	case '1' <= c && c <= '9':
		s.digits()
	default:
		return "", s.badNumber()
	}
	if s.peek() == '.' {
		s.pos++
		if !isDigit(s.peek()) {
			return "", s.badNumber()
		}
		s.digits()
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.pos++
		if c := s.peek(); c == '+' || c == '-' {
			s.pos++
		}
		if !isDigit(s.peek()) {
			return "", s.badNumber()
		}
		s.digits()
	}
	return json.Number(s.text[start:s.pos]), nil
}

func (s *jsonScanner) digits() {
	for s.pos < len(s.src) && isDigit(s.src[s.pos]) {
		s.pos++
	}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// badNumber is the error for a number that stops short of a digit it needs at s.pos.
func (s *jsonScanner) badNumber() error {
	if s.pos == len(s.src) {
		return s.eof()
	}
	return s.unexpected("in a number; a digit should be here")
}

// inRange says whether float64 holds the number literal n (possibly rounded), as
// strconv.ParseFloat does, without parsing the many literals that plainly fit.
func inRange(n string) bool {
	if len(n) <= 300 { // without an exponent, at most 300 digits before the point: under 1e300
		plain := true
		for i := range len(n) {
			if n[i] == 'e' || n[i] == 'E' {
				plain = false
				break
			}
		}
		if plain {
			return true
		}
	}
	_, err := strconv.ParseFloat(n, 64)
	return err == nil
}

// peek is the byte at s.pos, or 0 at the end of the input: callers that take 0 for the end
// compare it only with other bytes, or check s.pos themselves.
func (s *jsonScanner) peek() byte {
	if s.pos < len(s.src) {
		return s.src[s.pos]
	}
	return 0
}

// skipSpace moves s.pos past JSON's white space: space, tab, line feed, carriage return.
func (s *jsonScanner) skipSpace() {
	for s.pos < len(s.src) {
		switch s.src[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// fail is an *Error at s.path in the current manifest, on the line of s.pos.
func (s *jsonScanner) fail(problem string) *Error {
	return &Error{Document: s.doc, Path: RenderPath(s.path), Line: lineAt(s.src, int64(s.pos)), Problem: problem}
}

// unexpected is the syntax error of the byte at s.pos, which is not what belongs where it is.
func (s *jsonScanner) unexpected(where string) *Error {
	if s.pos == len(s.src) {
		return s.eof()
	}
	r, _ := utf8.DecodeRune(s.src[s.pos:])
	return s.fail(problemf(badJSON, fmt.Sprintf("unexpected %s %s (at byte %d)", quoteChar(r), where, s.pos)))
}

// eof is the syntax error of an input that ends inside its JSON value. Its line is that of the
// value's last byte, white space after it aside.
func (s *jsonScanner) eof() *Error {
	end := len(s.src)
	for end > 0 && isSpace(s.src[end-1]) {
		end--
	}
	e := s.fail(problemf(badJSON, "unexpected EOF: the input ends before its JSON value does"))
	e.Line = lineAt(s.src, int64(end))
	return e
}

// controlChar is the syntax error of control character c inside a string, at s.pos.
func (s *jsonScanner) controlChar(c byte) *Error {
	return s.fail(problemf(badJSON, fmt.Sprintf(
		"control character %U in a string (at byte %d); write it as an escape such as \\n or \\u%04x", c, s.pos, c)))
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// quoteChar spells r for a message: 'x', or U+0000 for what would not print.
func quoteChar(r rune) string {
	if strconv.IsPrint(r) {
		return strconv.QuoteRune(r)
	}
	return fmt.Sprintf("%U", r)
}
