package samcheck

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// samMk holds the targets `sam build` runs, one per function; the root Makefile includes it.
const samMk = "build/sam.mk"

// makefile is what Check reads of a makefile: each target's recipe, with the file's own
// variables expanded. It reads the simple makefiles we write, not make's whole language.
type makefile struct {
	recipes map[string]string
}

var (
	makeVar    = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\s*[:?]?=\s*(.*)$`)
	makeTarget = regexp.MustCompile(`^([A-Za-z0-9_.%/-]+)\s*:([^=]|$)`)
	makeRef    = regexp.MustCompile(`\$[({]([A-Za-z_][A-Za-z0-9_]*)[)}]`)
)

// readMakefile reads the makefile at path.
func readMakefile(path string) (makefile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return makefile{}, err
	}
	data = bytes.ReplaceAll(data, []byte("\\\n"), []byte(" "))
	vars := map[string]string{}
	mk := makefile{recipes: map[string]string{}}
	target := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "\t"):
			if target != "" {
				mk.recipes[target] = strings.TrimSpace(mk.recipes[target] + " " + strings.TrimSpace(line))
			}
		case strings.HasPrefix(strings.TrimSpace(line), "#"), strings.TrimSpace(line) == "":
		case makeVar.MatchString(line):
			m := makeVar.FindStringSubmatch(line)
			vars[m[1]] = strings.TrimSpace(m[2])
			target = ""
		case makeTarget.MatchString(line):
			target = makeTarget.FindStringSubmatch(line)[1]
		default:
			target = ""
		}
	}
	for t, r := range mk.recipes {
		mk.recipes[t] = expand(r, vars)
	}
	return mk, sc.Err()
}

// expand replaces the variables defined in vars, leaving others (such as SAM's ARTIFACTS_DIR) as
// written. Definitions may refer to each other; a cycle stops after a few rounds.
func expand(s string, vars map[string]string) string {
	for range 8 {
		next := makeRef.ReplaceAllStringFunc(s, func(r string) string {
			if v, ok := vars[makeRef.FindStringSubmatch(r)[1]]; ok {
				return v
			}
			return r
		})
		if next == s {
			break
		}
		s = next
	}
	return s
}

// includesSamMk reports whether the makefile at path includes build/sam.mk.
func includesSamMk(path string) (bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) < 2 || (f[0] != "include" && f[0] != "-include" && f[0] != "sinclude") {
			continue
		}
		for _, name := range f[1:] {
			if filepath.Clean(name) == samMk {
				return true, nil
			}
		}
	}
	return false, nil
}
