package samcheck

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// longForm reads template.yaml as an untyped document with intrinsics in long form ({"Ref": X}),
// for tests to change in memory and hand to Parse as JSON.
func longForm(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile(templatePath)
	if err != nil {
		t.Fatal(err)
	}
	js, err := toLongForm(data)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// fakeRoot is a repository root holding a stub main.go in each function's source folder, the real
// build/sam.mk, and a Makefile that includes it.
func fakeRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	mk, err := os.ReadFile(filepath.Join(repoRoot, samMk))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, samMk), string(mk))
	write(t, filepath.Join(root, "Makefile"), "include build/sam.mk\n")
	resources := longForm(t)["Resources"].(map[string]any)
	for _, r := range resources {
		if folder, ok := dig(r, "Metadata", "SourceFolder").(string); ok {
			write(t, filepath.Join(root, folder, "main.go"), "package main\n\nfunc main() {}\n")
		}
	}
	return root
}

// node walks doc by map keys and list indexes to a map, failing loudly when the template has moved.
func node(doc map[string]any, path ...any) map[string]any {
	var v any = doc
	for _, p := range path {
		switch p := p.(type) {
		case string:
			v = v.(map[string]any)[p]
		case int:
			v = v.([]any)[p]
		}
	}
	return v.(map[string]any)
}

func props(doc map[string]any, id string) map[string]any {
	return node(doc, "Resources", id, "Properties")
}

// apiEvent is the properties of ApiFunction's HttpApi event name.
func apiEvent(doc map[string]any, name string) map[string]any {
	return node(doc, "Resources", "ApiFunction", "Properties", "Events", name, "Properties")
}

// keyAuth is KeyApi's KeyAuthorizer.
func keyAuth(doc map[string]any) map[string]any {
	return node(doc, "Resources", "KeyApi", "Properties", "Auth", "Authorizers", "KeyAuthorizer")
}

// edgeBehavior is EdgeDistribution's DefaultCacheBehavior.
func edgeBehavior(doc map[string]any) map[string]any {
	return node(doc, "Resources", "EdgeDistribution", "Properties", "DistributionConfig", "DefaultCacheBehavior")
}

func globalEnv(doc map[string]any) map[string]any {
	return node(doc, "Globals", "Function", "Environment", "Variables")
}

// stmt is role's inline statement with the given Sid, in the long-form document.
func stmt(doc map[string]any, role, sid string) map[string]any {
	for _, s := range node(doc, "Resources", role, "Properties", "Policies", 0, "PolicyDocument")["Statement"].([]any) {
		if s.(map[string]any)["Sid"] == sid {
			return s.(map[string]any)
		}
	}
	panic("no statement " + sid + " in " + role)
}

// statementIn is role's statement with the given Sid, as Parse read it.
func statementIn(t *testing.T, tmpl *Template, role, sid string) statement {
	for _, s := range statements(tmpl) {
		if s.resource == role && s.body["Sid"] == sid {
			return s
		}
	}
	t.Fatalf("no statement %s in %s", sid, role)
	return statement{}
}

func getAtt(id, attr string) map[string]any {
	return map[string]any{"Fn::GetAtt": []any{id, attr}}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func edit(t *testing.T, path, old, replacement string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("%s does not contain %q", path, old)
	}
	write(t, path, strings.ReplaceAll(string(data), old, replacement))
}

func remove(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

func list(ps []Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("\t" + p.String() + "\n")
	}
	if b.Len() == 0 {
		return "\t(nothing)\n"
	}
	return b.String()
}
