package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func TestPackSkipsAndOrders(t *testing.T) {
	fsys := fstest.MapFS{
		"package.json":             {Data: []byte(`{"name":"hello"}`)},
		"package-lock.json":        {Data: []byte(`{}`)},
		"server.js":                {Data: []byte("console.log(1)")},
		"bin/start":                {Data: []byte("#!/bin/sh"), Mode: 0o755},
		"node_modules/x/index.js":  {Data: []byte("x")},
		"lib/node_modules/y.js":    {Data: []byte("y")},
		".git/HEAD":                {Data: []byte("ref")},
		".env":                     {Data: []byte("SECRET=1")},
		"config/.env":              {Data: []byte("SECRET=2")},
		"coverage/lcov.info":       {Data: []byte("c")},
		"logs/a.log":               {Data: []byte("l")},
		"logs/keep.log":            {Data: []byte("k")},
		"docs/build/index.html":    {Data: []byte("d")},
		"build":                    {Data: []byte("a file called build")},
		"src/deep/tmp/cache.bin":   {Data: []byte("t")},
		"src/app.test.js":          {Data: []byte("t")},
		".tidegateignore":          {Data: []byte("# not for the host\ncoverage/\n*.log\n!keep.log\nbuild/\n/src/**/tmp\n*.test.js\n")},
		"vendor/readme.md":         {Data: []byte("v")},
		"vendor/node_modules/z.js": {Data: []byte("z")},
		"assets/.keep":             {Data: []byte("")},
	}
	var buf bytes.Buffer
	got, err := pack(fsys, &buf)
	if err != nil {
		t.Fatalf("pack = %v", err)
	}
	names, err := packedNames(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		".tidegateignore", "assets/", "assets/.keep", "bin/", "bin/start", "build",
		"config/", "docs/", "lib/", "logs/", "logs/keep.log", "package-lock.json", "package.json",
		"server.js", "src/", "src/deep/", "vendor/", "vendor/readme.md",
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("packed entries (-want +got):\n%s", diff)
	}
	wantSkipped := []string{".env", ".git", "config/.env", "coverage", "docs/build", "lib/node_modules", "logs/a.log", "node_modules", "src/app.test.js", "src/deep/tmp", "vendor/node_modules"}
	if diff := cmp.Diff(wantSkipped, got.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if got.Files != 9 {
		t.Errorf("packed %d files, want 9", got.Files)
	}
}

// TestPackIsDeterministic: the same sources make the same bytes, whatever their files' times.
func TestPackIsDeterministic(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "package.json", `{"name":"a"}`)
	write(t, dir, "src/index.js", "1")
	var first bytes.Buffer
	if _, err := pack(os.DirFS(dir), &first); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(dir, "src/index.js"), packTime.AddDate(5, 0, 0), packTime.AddDate(5, 0, 0)); err != nil {
		t.Fatal(err)
	}
	var second bytes.Buffer
	if _, err := pack(os.DirFS(dir), &second); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Errorf("packing the same folder twice made different bytes (%d and %d)", first.Len(), second.Len())
	}
}

func TestPackRefusesSymlinks(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "package.json", `{}`)
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "passwd")); err != nil {
		t.Skipf("cannot make a symlink here: %v", err)
	}
	_, err := pack(os.DirFS(dir), &bytes.Buffer{})
	if !errors.Is(err, errSymlink) || !strings.HasPrefix(err.Error(), "passwd ") {
		t.Errorf("pack with a symlink = %v, want errSymlink naming passwd", err)
	}
	write(t, dir, ignoreFile, "passwd\n")
	if _, err := pack(os.DirFS(dir), &bytes.Buffer{}); err != nil {
		t.Errorf("pack with the symlink ignored = %v, want nil", err)
	}
}

func TestIgnorePatterns(t *testing.T) {
	tests := []struct {
		rules string
		path  string
		dir   bool
		want  bool
	}{
		{"*.log", "a.log", false, true},
		{"*.log", "deep/er/a.log", false, true},
		{"*.log", "a.log.txt", false, false},
		{"/dist", "dist", true, true},
		{"/dist", "src/dist", true, false},
		{"dist/", "dist", false, false},
		{"dist/", "src/dist", true, true},
		{"a/**/b", "a/b", true, true},
		{"a/**/b", "a/x/y/b", false, true},
		{"**/fixtures", "test/fixtures", true, true},
		{"docs/*.md", "docs/a.md", false, true},
		{"docs/*.md", "docs/x/a.md", false, false},
		{"file?.txt", "file1.txt", false, true},
		{"file[0-9].txt", "filex.txt", false, false},
		{"file[!0-9].txt", "filex.txt", false, true},
		{"*.log\n!keep.log", "keep.log", false, false},
		{"\\#hash", "#hash", false, true},
		{"# comment only", "comment", false, false},
	}
	for _, tt := range tests {
		rules, err := parseIgnore(strings.NewReader(tt.rules))
		if err != nil {
			t.Fatalf("parseIgnore(%q) = %v", tt.rules, err)
		}
		if got := rules.ignored(tt.path, tt.dir); got != tt.want {
			t.Errorf("rules %q: ignored(%q, dir=%v) = %v, want %v", tt.rules, tt.path, tt.dir, got, tt.want)
		}
	}
	if _, err := parseIgnore(strings.NewReader("ok\n[oops\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("parseIgnore with an unclosed [ = %v, want an error naming line 2", err)
	}
}

func FuzzIgnore(f *testing.F) {
	f.Add("*.log\n!keep.log\n/dist/\n**/tmp\n[a-z]?\n", "src/tmp/x.log")
	f.Fuzz(func(t *testing.T, rules, path string) {
		rs, err := parseIgnore(strings.NewReader(rules))
		if err != nil {
			return
		}
		_ = rs.ignored(path, false)
		_ = rs.ignored(path, true)
	})
}

func write(t *testing.T, dir, rel, data string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
