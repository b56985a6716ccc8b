package purity

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// listed is what check reads of a package from go list.
type listed struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	CgoFiles   []string
	Imports    []string // its own files' imports
}

// check lists how the named pure packages (paths in the module, such as "shared/hostplan") break
// their rules, as go list -deps sees the tree through overlay: file paths mapped to the files that
// stand in for them, as in go list's -overlay (nil for the tree as it is). Each package's own
// non-test files are read through the same overlay, so a file planted there is checked like any
// other.
func check(goTool string, pkgs []string, overlay map[string]string) ([]string, error) {
	graph, err := golist(goTool, pkgs, overlay)
	if err != nil {
		return nil, err
	}
	var broken []string
	for _, pkg := range pkgs {
		p, ok := graph[module+pkg]
		if !ok {
			return nil, fmt.Errorf("go list -deps did not answer %s", pkg)
		}
		broken = append(broken, reaches(graph, pkg)...)
		for _, imp := range p.Imports {
			if within(imp, own) {
				broken = append(broken, fmt.Sprintf("%s imports %s", pkg, imp))
			}
		}
		for _, name := range slices.Concat(p.GoFiles, p.CgoFiles) {
			found, err := readsIn(filepath.Join(p.Dir, name), overlay)
			if err != nil {
				return nil, err
			}
			for _, r := range found {
				broken = append(broken, pkg+": "+r)
			}
		}
	}
	slices.Sort(broken)
	return broken, nil
}

// reaches walks pkg's imports, however indirect, and lists each forbidden package it reaches by
// way of allowed ones, with the way: a package of AWS or client-go is named once where it comes
// in, not with all it brings along.
func reaches(graph map[string]listed, pkg string) []string {
	forbidden := pure[pkg]
	refused := func(path string) string {
		if mine, ok := strings.CutPrefix(path, module); ok {
			if pure[mine] == nil && !slices.Contains(leanOn, mine) {
				return "depends on " + mine + ", which is not pure"
			}
			return ""
		}
		if within(path, forbidden) {
			return "depends on " + path
		}
		return ""
	}
	var broken []string
	via := map[string]string{module + pkg: ""} // each package reached → the one that imports it
	for queue := []string{module + pkg}; len(queue) > 0; queue = queue[1:] {
		for _, imp := range graph[queue[0]].Imports {
			if _, seen := via[imp]; seen {
				continue
			}
			via[imp] = queue[0]
			why := refused(imp)
			if why == "" {
				queue = append(queue, imp)
				continue
			}
			var way []string
			for p := queue[0]; p != module+pkg; p = via[p] {
				way = append(way, strings.TrimPrefix(p, module))
			}
			slices.Reverse(way)
			if len(way) > 0 {
				why += " through " + strings.Join(way, ", ")
			}
			broken = append(broken, pkg+" "+why)
		}
	}
	return broken
}

// golist answers go list -deps's view of pkgs and all they depend on, by import path, through
// overlay if there is one.
func golist(goTool string, pkgs []string, overlay map[string]string) (map[string]listed, error) {
	args := []string{"list", "-deps", "-json=ImportPath,Dir,GoFiles,CgoFiles,Imports"}
	if len(overlay) > 0 {
		f, err := os.CreateTemp("", "purity-overlay-*.json")
		if err != nil {
			return nil, err
		}
		defer os.Remove(f.Name())
		err = json.NewEncoder(f).Encode(map[string]any{"Replace": overlay})
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("writing the overlay: %w", err)
		}
		args = append(args, "-overlay", f.Name())
	}
	for _, p := range pkgs {
		args = append(args, module+p)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(goTool, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -deps %s: %s: %w", strings.Join(pkgs, " "), bytes.TrimSpace(stderr.Bytes()), err)
	}
	graph := map[string]listed{}
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
		var p listed
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("decoding go list's answer: %w", err)
		}
		graph[p.ImportPath] = p
	}
	return graph, nil
}

// within reports whether path is one of patterns, or in the tree of one that ends in "/".
func within(path string, patterns []string) bool {
	for _, p := range patterns {
		if path == p || (strings.HasSuffix(p, "/") && strings.HasPrefix(path, p)) {
			return true
		}
	}
	return false
}

// readsIn lists where the Go file at path, or what overlay puts there, reads the clock or the
// environment.
func readsIn(path string, overlay map[string]string) ([]string, error) {
	src, err := os.ReadFile(cmp.Or(overlay[path], path))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	return reads(fset, f), nil
}

// reads lists where f reads the clock or the environment, each as "file:line: what". It goes by
// the name f gives "time" and "os" in its imports, so an aliased import is followed; a dot import
// of either is refused, since its uses could not be told from f's own names. An identifier that
// shadows the import's name is taken for it: in a pure package that is a name to change.
func reads(fset *token.FileSet, f *ast.File) []string {
	at := func(n ast.Node) string {
		pos := fset.Position(n.Pos())
		return filepath.Base(pos.Filename) + ":" + strconv.Itoa(pos.Line)
	}
	var found []string
	names := map[string]string{} // the name f uses → the import path
	for _, spec := range f.Imports {
		path, err := strconv.Unquote(spec.Path.Value)
		if err != nil || (path != "time" && path != "os") {
			continue
		}
		name := path
		if spec.Name != nil {
			name = spec.Name.Name
		}
		switch name {
		case "_":
		case ".":
			found = append(found, fmt.Sprintf("%s: dot-imports %s, so its clock and environment reads cannot be told apart", at(spec), path))
		default:
			names[name] = path
		}
	}
	if len(names) == 0 {
		return found
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && names[x.Name] != "" {
			use := names[x.Name] + "." + sel.Sel.Name
			if what, ok := outside[use]; ok {
				found = append(found, fmt.Sprintf("%s: %s %s", at(sel), use, what))
			}
		}
		return true
	})
	return found
}
