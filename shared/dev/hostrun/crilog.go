package hostrun

import (
	"bytes"
	"io"
	"sync"
	"time"
)

// maxLine is the longest line one log entry holds, as a container runtime cuts them: a longer
// line goes out in parts tagged P, its last part F.
const maxLine = 16 << 10

// criLog is a container's log file in the CRI format kwok reads for `kubectl logs`: each line
// "<RFC 3339 time> <stream> <F|P> <text>". Its stdout and stderr write to the same file.
type criLog struct {
	mu  sync.Mutex
	w   io.Writer
	now func() time.Time
}

// stream is one of the process's outputs, written to l line by line.
type stream struct {
	l    *criLog
	name string // stdout or stderr
	buf  []byte
}

func (l *criLog) stream(name string) *stream { return &stream{l: l, name: name} }

// Write logs every whole line of p, holding back a last part without its newline until it ends
// or grows past maxLine.
func (s *stream) Write(p []byte) (int, error) {
	s.buf = append(s.buf, p...)
	for {
		i := bytes.IndexByte(s.buf, '\n')
		switch {
		case i >= 0 && i <= maxLine:
			if err := s.entry("F", s.buf[:i]); err != nil {
				return 0, err
			}
			s.buf = s.buf[i+1:]
		case len(s.buf) > maxLine:
			if err := s.entry("P", s.buf[:maxLine]); err != nil {
				return 0, err
			}
			s.buf = s.buf[maxLine:]
		default:
			return len(p), nil
		}
	}
}

// Close logs what is left of a last line that never ended.
func (s *stream) Close() error {
	if len(s.buf) == 0 {
		return nil
	}
	err := s.entry("F", s.buf)
	s.buf = nil
	return err
}

func (s *stream) entry(tag string, text []byte) error {
	s.l.mu.Lock()
	defer s.l.mu.Unlock()
	line := make([]byte, 0, len(text)+64)
	line = s.l.now().UTC().AppendFormat(line, time.RFC3339Nano)
	line = append(line, ' ')
	line = append(line, s.name...)
	line = append(line, ' ')
	line = append(line, tag...)
	line = append(line, ' ')
	line = append(line, bytes.TrimSuffix(text, []byte("\r"))...)
	line = append(line, '\n')
	_, err := s.l.w.Write(line)
	return err
}
