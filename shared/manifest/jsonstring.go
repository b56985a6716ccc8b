package manifest

import (
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// str reads the string whose opening quote is at s.pos, up to and including its closing quote.
func (s *jsonScanner) str() (string, error) {
	start := s.pos + 1
	for i := start; i < len(s.src); i++ {
		switch c := s.src[i]; {
		case c == '"':
			s.pos = i + 1
			return s.text[start:i], nil
		case c == '\\':
			return s.escaped(start, i)
		case c < 0x20:
			s.pos = i
			return "", s.controlChar(c)
		}
	}
	s.pos = len(s.src)
	return "", s.eof()
}

// escaped reads the rest of the string that starts at start and has its first backslash at i.
func (s *jsonScanner) escaped(start, i int) (string, error) {
	buf := append(s.buf[:0], s.src[start:i]...)
	for i < len(s.src) {
		switch c := s.src[i]; {
		case c == '"':
			s.pos = i + 1
			s.buf = buf
			return string(buf), nil
		case c < 0x20:
			s.pos = i
			return "", s.controlChar(c)
		case c != '\\':
			buf = append(buf, c)
			i++
		default:
			var err error
			if buf, i, err = s.escape(buf, i); err != nil {
				return "", err
			}
		}
	}
	s.pos = len(s.src)
	return "", s.eof()
}

// escape appends to buf what the escape at i stands for and returns where the next byte is.
// A \u escape of a UTF-16 surrogate takes the \u escape after it as the rest of the pair; one
// that pairs with none stands for U+FFFD, as with encoding/json.
func (s *jsonScanner) escape(buf []byte, i int) ([]byte, int, error) {
	if i+1 == len(s.src) {
		s.pos = i + 1
		return nil, 0, s.eof()
	}
	switch c := s.src[i+1]; c {
	case '"', '\\', '/':
		return append(buf, c), i + 2, nil
	case 'b':
		return append(buf, '\b'), i + 2, nil
	case 'f':
		return append(buf, '\f'), i + 2, nil
	case 'n':
		return append(buf, '\n'), i + 2, nil
	case 'r':
		return append(buf, '\r'), i + 2, nil
	case 't':
		return append(buf, '\t'), i + 2, nil
	case 'u':
		r, err := s.hex4(i + 2)
		if err != nil {
			return nil, 0, err
		}
		i += 6
		if utf16.IsSurrogate(r) {
			next := rune(-1)
			if i+1 < len(s.src) && s.src[i] == '\\' && s.src[i+1] == 'u' {
				next, _ = hexRune(s.src[i+2:])
			}
			if r = utf16.DecodeRune(r, next); r != unicode.ReplacementChar {
				i += 6
			}
		}
		return utf8.AppendRune(buf, r), i, nil
	}
	s.pos = i + 1
	return nil, 0, s.unexpected(`after \ in a string; the escapes are \" \\ \/ \b \f \n \r \t and \uXXXX`)
}

// hex4 reads the four hexadecimal digits of a \u escape at i.
func (s *jsonScanner) hex4(i int) (rune, error) {
	r, n := hexRune(s.src[i:])
	if n == 4 {
		return r, nil
	}
	s.pos = i + n
	if s.pos == len(s.src) {
		return 0, s.eof()
	}
	return 0, s.unexpected(`in a \u escape; four hexadecimal digits should follow \u`)
}

// hexRune is the value of the four hexadecimal digits b starts with, or how many digits it
// starts with when fewer than four.
func hexRune(b []byte) (rune, int) {
	var r rune
	for n := range 4 {
		if n == len(b) {
			return -1, n
		}
		c := b[n]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1, n
		}
		r = r<<4 | rune(c)
	}
	return r, 4
}
