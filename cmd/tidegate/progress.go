package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// status is a live line on a terminal saying what a slow command is waiting for, redrawn in place
// and cleared before anything else is printed. Off a terminal it shows nothing: the lines the
// command prints for good say the same, once each.
type status struct {
	w     io.Writer
	live  bool
	shown bool
	start time.Time
}

func (p *printer) status() *status { return &status{w: p.err, live: p.live, start: time.Now()} }

// set redraws the line, with the time spent so far.
func (s *status) set(format string, args ...any) {
	if !s.live {
		return
	}
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(s.w, "\r\x1b[K%s %s", msg, time.Since(s.start).Round(time.Second))
	s.shown = true
}

// clear removes the line, so a lasting line can take its place.
func (s *status) clear() {
	if s.shown {
		fmt.Fprint(s.w, "\r\x1b[K")
		s.shown = false
	}
}

// uploadProgress is a status line for an upload: how much has gone, of how much.
func (s *status) uploadProgress(what string) func(sent, total int64) {
	return func(sent, total int64) {
		pct := 100
		if total > 0 {
			pct = int(sent * 100 / total)
		}
		s.set("uploading %s: %s of %s (%d%%)", what, bytesText(sent), bytesText(total), pct)
	}
}

// bytesText writes a size for people: 512 B, 12.3 kB, 4.0 MB (powers of 1000, as file managers do).
func bytesText(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "kMGTPE"[exp])
}

// ordinal writes 1st, 2nd, 3rd, 4th… for queue positions.
func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// indent prefixes every line of s.
func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+prefix)
}
