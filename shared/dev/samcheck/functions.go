package samcheck

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/awslabs/goformation/v7/cloudformation/global"
	"github.com/awslabs/goformation/v7/cloudformation/serverless"
)

// What every function runs on. Go builds a static bootstrap binary for the OS-only runtime.
const (
	wantRuntime = "provided.al2023"
	wantHandler = "bootstrap"
)

// goarch maps a Lambda architecture to the GOARCH that builds for it.
var goarch = map[string]string{"arm64": "arm64", "x86_64": "amd64"}

// checkFunctions checks that the template has Tidegate's functions and that each is built, by
// build/sam.mk, from a folder holding a main package, for the runtime and architecture it runs on.
func checkFunctions(t *Template, root string) []Problem {
	var ps []Problem
	fns := t.CFN.GetAllServerlessFunctionResources()
	for _, id := range functions {
		if _, ok := fns[id]; !ok {
			ps = append(ps, problem(RuleSource, id, "missing: Tidegate needs this %s", typeFunction))
		}
	}
	mk, mkErr := readMakefile(filepath.Join(root, samMk))
	if mkErr != nil {
		ps = append(ps, problem(RuleBuild, "", "cannot read %s, which holds the build-<Function> targets sam build runs: %v", samMk, mkErr))
	}
	ps = append(ps, checkRootMakefile(root)...)
	folders := map[string]string{}
	for _, id := range slices.Sorted(maps.Keys(fns)) {
		if !slices.Contains(functions, id) {
			ps = append(ps, problem(RuleSource, id, "is not a function samcheck knows; add it to wiring.go with the access its role needs"))
		}
		fn := fns[id]
		folder, fps := checkSource(id, fn, root)
		ps = append(ps, fps...)
		if other, dup := folders[folder]; dup && folder != "" {
			ps = append(ps, problem(RuleSource, id, "is built from %s, like %s; each function has its own main package", folder, other))
		}
		folders[folder] = id
		arch, bps := checkRuntime(t, id, fn)
		ps = append(ps, bps...)
		if mkErr == nil && folder != "" && arch != "" {
			ps = append(ps, checkBuildTarget(id, folder, arch, mk)...)
		}
	}
	return ps
}

// checkSource checks fn's Metadata.SourceFolder and returns it.
func checkSource(id string, fn *serverless.Function, root string) (string, []Problem) {
	meta := fn.AWSCloudFormationMetadata
	var ps []Problem
	if m, _ := meta["BuildMethod"].(string); m != "makefile" {
		ps = append(ps, problem(RuleBuild, id, "Metadata.BuildMethod is %q; set it to makefile: there is one Go module at the root, built by build/sam.mk", m))
	}
	if fn.CodeUri == nil || fn.CodeUri.String == nil || filepath.Clean(*fn.CodeUri.String) != "." {
		ps = append(ps, problem(RuleBuild, id, `CodeUri must be "." (the module root, where the Makefile is); name the package in Metadata.SourceFolder`))
	}
	folder, _ := meta["SourceFolder"].(string)
	switch {
	case folder == "":
		return "", append(ps, problem(RuleSource, id, "Metadata.SourceFolder is not set; name the folder of its main package, e.g. functions/api"))
	case !filepath.IsLocal(folder):
		return "", append(ps, problem(RuleSource, id, "Metadata.SourceFolder %q must be a folder inside the repository", folder))
	}
	folder = filepath.ToSlash(filepath.Clean(folder))
	dir := filepath.Join(root, filepath.FromSlash(folder))
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return folder, append(ps, problem(RuleSource, id, "source folder %s does not exist in the repository", folder))
	}
	if _, err := os.Stat(filepath.Join(dir, "main.go")); errors.Is(err, fs.ErrNotExist) {
		ps = append(ps, problem(RuleSource, id, "source folder %s has no main.go; the function's main package goes there", folder))
	}
	return folder, ps
}

// checkRuntime checks fn's runtime, handler and architecture, from the function or Globals, and
// returns the GOARCH its binary must be built for ("" when that is not known).
func checkRuntime(t *Template, id string, fn *serverless.Function) (string, []Problem) {
	g := globalFunction(t)
	var ps []Problem
	if rt := firstString(fn.Runtime, g.Runtime); rt != wantRuntime {
		ps = append(ps, problem(RuleBuild, id, "Runtime is %q; Go functions run on %s", rt, wantRuntime))
	}
	if h := firstString(fn.Handler, g.Handler); h != wantHandler {
		ps = append(ps, problem(RuleBuild, id, "Handler is %q; the %s runtime runs the binary named %s", h, wantRuntime, wantHandler))
	}
	archs := fn.Architectures
	if archs == nil && g.Architectures != nil {
		archs = *g.Architectures
	}
	if len(archs) == 0 {
		archs = []string{"x86_64"} // Lambda's default
	}
	arch, ok := goarch[archs[0]]
	if len(archs) != 1 || !ok {
		return "", append(ps, problem(RuleBuild, id, "Architectures is %v; name one of arm64 or x86_64", archs))
	}
	return arch, ps
}

// checkBuildTarget checks that build/sam.mk builds folder into $(ARTIFACTS_DIR)/bootstrap as a
// static Linux binary for arch.
func checkBuildTarget(id, folder, arch string, mk makefile) []Problem {
	target := "build-" + id
	recipe, ok := mk.recipes[target]
	if !ok {
		return []Problem{problem(RuleBuild, id, "%s has no target %s; sam build runs `make %s` for this function", samMk, target, target)}
	}
	words := strings.Fields(recipe)
	after := func(flag string) string {
		if i := slices.Index(words, flag); i >= 0 && i+1 < len(words) {
			return words[i+1]
		}
		return ""
	}
	var missing []string
	for _, w := range []string{"GOOS=linux", "GOARCH=" + arch, "CGO_ENABLED=0"} {
		if !slices.Contains(words, w) {
			missing = append(missing, w)
		}
	}
	if !slices.Contains(strings.Split(after("-tags"), ","), "lambda.norpc") {
		missing = append(missing, "-tags lambda.norpc")
	}
	if after("-o") != "$(ARTIFACTS_DIR)/bootstrap" {
		missing = append(missing, "-o $(ARTIFACTS_DIR)/bootstrap")
	}
	if !slices.Contains(words, "./"+folder) && !slices.Contains(words, "./"+folder+"/") {
		missing = append(missing, "./"+folder)
	}
	if len(missing) > 0 {
		return []Problem{problem(RuleBuild, id, "%s's target %s should build with %s; its recipe is: %s", samMk, target, strings.Join(missing, ", "), recipe)}
	}
	return nil
}

// checkRootMakefile checks that the root Makefile, which sam build runs, includes build/sam.mk.
func checkRootMakefile(root string) []Problem {
	ok, err := includesSamMk(filepath.Join(root, "Makefile"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return []Problem{problem(RuleBuild, "", "there is no Makefile at the repository root; sam build (BuildMethod makefile, CodeUri .) runs make there: add one with `include %s`", samMk)}
	case err != nil:
		return []Problem{problem(RuleBuild, "", "cannot read the root Makefile: %v", err)}
	case !ok:
		return []Problem{problem(RuleBuild, "", "the root Makefile does not `include %s`, so sam build will not find the functions' build targets", samMk)}
	}
	return nil
}

// globalFunction is Globals.Function, or an empty one when the template has none.
func globalFunction(t *Template) *global.Function {
	if g, err := t.CFN.GetServerlessGlobalFunction(); err == nil && g != nil {
		return g
	}
	return &global.Function{}
}

// timeout is fn's Timeout in seconds, from the function, Globals, or Lambda's default of 3.
func timeout(t *Template, fn *serverless.Function) int {
	if fn.Timeout != nil {
		return *fn.Timeout
	}
	if g := globalFunction(t); g.Timeout != nil {
		return *g.Timeout
	}
	return 3
}

func firstString(ps ...*string) string {
	for _, p := range ps {
		if p != nil {
			return *p
		}
	}
	return ""
}
