package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// alwaysSkipped are never uploaded: installed dependencies (the host installs its own from the
// lockfile), version control, and the local environment file, which holds secrets (set those with
// `tidegate secrets set`).
var alwaysSkipped = map[string]bool{"node_modules": true, ".git": true, ".env": true}

// ignoreFile names the patterns a folder adds to alwaysSkipped, in .gitignore's syntax.
const ignoreFile = ".tidegateignore"

// ignoreRule is one line of an ignore file.
type ignoreRule struct {
	re      *regexp.Regexp
	negate  bool // "!pattern": upload it after all
	dirOnly bool // "pattern/": folders only
}

// ignoreRules is an ignore file in order: the last rule that matches a path decides.
type ignoreRules []ignoreRule

// parseIgnore reads .gitignore syntax: blank lines and # comments skipped, ! re-includes, a
// trailing / matches folders only, a pattern with a / in it (or a leading /) is anchored to the
// folder's root while one without matches a name at any depth; *, ? and [...] match within one
// path segment and ** across segments.
func parseIgnore(r io.Reader) (ignoreRules, error) {
	var rules ignoreRules
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), " \t\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var rule ignoreRule
		if strings.HasPrefix(line, "!") {
			rule.negate, line = true, line[1:]
		} else if strings.HasPrefix(line, `\`) {
			line = line[1:] // \# and \! start a pattern with those characters
		}
		if strings.HasSuffix(line, "/") {
			rule.dirOnly, line = true, strings.TrimRight(line, "/")
		}
		anchored := strings.Contains(line, "/")
		line = strings.TrimPrefix(line, "/")
		if line == "" {
			continue
		}
		re, err := globRegexp(line, anchored)
		if err != nil {
			return nil, fmt.Errorf("%s line %d %q: %w", ignoreFile, n, sc.Text(), err)
		}
		rule.re = re
		rules = append(rules, rule)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", ignoreFile, err)
	}
	return rules, nil
}

// globRegexp turns one pattern into a regular expression over slash-separated relative paths.
func globRegexp(glob string, anchored bool) (*regexp.Regexp, error) {
	var b strings.Builder
	if anchored {
		b.WriteString("^")
	} else {
		b.WriteString("^(?:.*/)?")
	}
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch {
		case strings.HasPrefix(glob[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(glob[i:], "**"):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			end := strings.IndexByte(glob[i+1:], ']')
			if end < 0 {
				return nil, fmt.Errorf("a [ with no ]")
			}
			class := glob[i+1 : i+1+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += end + 1
		case c == '\\' && i+1 < len(glob):
			i++
			b.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	// A pattern that names a folder also covers what is inside it.
	b.WriteString("(?:/.*)?$")
	return regexp.Compile(b.String())
}

// ignored reports whether the slash-separated relative path rel (a folder when dir) is left out.
func (rs ignoreRules) ignored(rel string, dir bool) bool {
	out := false
	for _, r := range rs {
		if r.dirOnly && !dir && !r.matchesParent(rel) {
			continue
		}
		if r.re.MatchString(rel) {
			out = !r.negate
		}
	}
	return out
}

// matchesParent reports whether a folders-only rule matches one of the folders above rel: the
// walk skips an ignored folder whole, so this only matters for a file named in a negation.
func (r ignoreRule) matchesParent(rel string) bool {
	for i := strings.LastIndexByte(rel, '/'); i > 0; i = strings.LastIndexByte(rel[:i], '/') {
		if r.re.MatchString(rel[:i]) {
			return true
		}
	}
	return false
}
