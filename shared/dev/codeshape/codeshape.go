// Package codeshape measures the shape of the module's Go code: which functions run longer than
// a reader takes in at once. Its test holds every function outside tests to MaxLines.
package codeshape

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// MaxLines is the longest a function outside tests may be. The house style asks a reason of any
// over about 40 lines; past 80 no reason holds, and the function is split into named parts.
const MaxLines = 80

// Func is one function declaration that is too long.
type Func struct {
	Pos   token.Position // where its func keyword is
	Name  string         // as a reader looks it up: Run, (*Hoster).read, (Options).Validate
	Lines int            // from the line of func to the line of its closing brace, both counted
}

func (f Func) String() string {
	return fmt.Sprintf("%s:%d: %s is %d lines", f.Pos.Filename, f.Pos.Line, f.Name, f.Lines)
}

// Longer reports the function declarations in src, a Go file named filename, that are more than
// limit lines long. Function literals count towards the function that holds them.
func Longer(filename string, src []byte, limit int) ([]Func, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filename, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var long []Func
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue // a declaration without a body is implemented elsewhere, in assembly
		}
		start := fset.Position(fn.Pos())
		lines := fset.Position(fn.Body.Rbrace).Line - start.Line + 1
		if lines > limit {
			long = append(long, Func{Pos: start, Name: funcName(fn), Lines: lines})
		}
	}
	return long, nil
}

// funcName names fn as Go's docs do: a method after its receiver's type.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	recv := fn.Recv.List[0].Type
	star := ""
	if s, ok := recv.(*ast.StarExpr); ok {
		star, recv = "*", s.X
	}
	// A generic type's receiver names its parameters: T[K, V] is read as T.
	switch r := recv.(type) {
	case *ast.IndexExpr:
		recv = r.X
	case *ast.IndexListExpr:
		recv = r.X
	}
	typ := "?"
	if id, ok := recv.(*ast.Ident); ok {
		typ = id.Name
	}
	return "(" + star + typ + ")." + fn.Name.Name
}

// LongerIn reports the functions longer than limit lines in the Go files of the module at root
// that are not tests. It reads what go build reads: folders named testdata or starting with . or
// _ (.git among them) are not the module's, and nor is a folder with a go.mod of its own.
// Positions name files relative to root.
func LongerIn(root string, limit int) ([]Func, error) {
	var long []Func
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && notModule(path, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		found, err := Longer(rel, src, limit)
		long = append(long, found...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("measuring the functions under %s: %w", root, err)
	}
	return long, nil
}

// notModule says whether the folder at path, called name, holds none of the module's code.
func notModule(path, name string) bool {
	if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return true
	}
	_, err := os.Stat(filepath.Join(path, "go.mod"))
	return err == nil
}

// ModuleRoot is the folder of the go.mod that governs dir: dir's own, or its nearest parent's.
func ModuleRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod in %s or any folder above it", dir)
		}
	}
}
