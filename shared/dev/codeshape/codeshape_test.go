package codeshape

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNoLongFunctions(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := ModuleRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	long, err := LongerIn(root, MaxLines)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range long {
		t.Errorf("%v, over %d: split it into parts a reader can name", f, MaxLines)
	}
}

// function is the source of a function called name that is lines long, from func to its brace.
func function(name string, lines int) string {
	return "func " + name + "() {\n" + strings.Repeat("\t_ = 0\n", lines-2) + "}\n"
}

// reported is what Longer's answer says, one string per function, for comparing whole answers.
func reported(long []Func) []string {
	var out []string
	for _, f := range long {
		out = append(out, f.String())
	}
	return out
}

func TestLonger(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{{
		name: "81 lines",
		src:  "package p\n\n" + function("long", 81),
		want: []string{"p.go:3: long is 81 lines"},
	}, {
		name: "80 lines",
		src:  "package p\n\n" + function("fits", 80),
	}, {
		name: "each of several, where it starts",
		src:  "package p\n\n" + function("fits", 80) + function("long", 81) + function("longer", 120),
		want: []string{"p.go:83: long is 81 lines", "p.go:164: longer is 120 lines"},
	}, {
		name: "a method, by its receiver",
		src: "package p\n\ntype T[K any] struct{}\n\n" +
			strings.Replace(function("m", 81), "func ", "func (t *T[K]) ", 1) +
			strings.Replace(function("v", 81), "func ", "func (T[K]) ", 1),
		want: []string{"p.go:5: (*T).m is 81 lines", "p.go:86: (T).v is 81 lines"},
	}, {
		name: "a doc comment does not count",
		src:  "package p\n\n// fits has a comment\n// of two lines.\n" + function("fits", 80),
	}, {
		name: "a function literal counts towards its holder",
		src: "package p\n\n" +
			strings.Replace(function("holder", 79), "{\n", "{\n\tgo func() {\n\t}()\n", 1),
		want: []string{"p.go:3: holder is 81 lines"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			long, err := Longer("p.go", []byte(tt.src), MaxLines)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, reported(long)); diff != "" {
				t.Errorf("Longer(%s) (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

func TestLongerRefusesBrokenSource(t *testing.T) {
	if _, err := Longer("p.go", []byte("package p\n\nfunc broken( {\n"), MaxLines); err == nil {
		t.Error("Longer(unparsable source) = nil error")
	}
}

// plant writes files, by path under root, each holding a function of 81 lines.
func plant(t *testing.T, root string, files ...string) {
	t.Helper()
	for _, f := range files {
		path := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		src := "package p\n\n" + function("long", 81)
		if filepath.Base(f) == "go.mod" {
			src = "module example.com/planted\n"
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLongerIn(t *testing.T) {
	root := t.TempDir()
	plant(t, root,
		"go.mod", "long.go", "deep/down/long.go",
		// Not the module's code, or a test's: none of these is reported.
		"long_test.go", "deep/long_test.go", ".git/hooks/long.go", ".cache/long.go", "_old/long.go",
		"testdata/long.go", "tools/go.mod", "tools/long.go",
	)
	long, err := LongerIn(root, MaxLines)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		filepath.Join("deep", "down", "long.go") + ":3: long is 81 lines",
		"long.go:3: long is 81 lines",
	}
	if diff := cmp.Diff(want, reported(long)); diff != "" {
		t.Errorf("LongerIn(planted module) (-want +got):\n%s", diff)
	}
}

func TestModuleRoot(t *testing.T) {
	root := t.TempDir()
	plant(t, root, "go.mod", "a/b/c.go")
	for _, dir := range []string{root, filepath.Join(root, "a"), filepath.Join(root, "a", "b")} {
		got, err := ModuleRoot(dir)
		if err != nil || got != root {
			t.Errorf("ModuleRoot(%s) = %q, %v; want %q", dir, got, err, root)
		}
	}
}
