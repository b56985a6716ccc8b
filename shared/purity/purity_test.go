package purity

import (
	"go/parser"
	"go/token"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// goTool is the go command that lists the packages, or skips t without one.
func goTool(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool on PATH to list the imports with: %v", err)
	}
	return path
}

func TestPurePackages(t *testing.T) {
	broken, err := check(goTool(t), slices.Sorted(maps.Keys(pure)), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range broken {
		t.Error(b)
	}
}

// plants are files planted beside pure packages' own, each with what check must then report and
// what it must not.
var plants = []struct {
	pkg, src  string
	want, not []string
}{{
	pkg:  "shared/hostplan",
	src:  "package hostplan\n\nimport _ \"net/http\"\n",
	want: []string{"shared/hostplan depends on net/http", "shared/hostplan imports net/http"},
}, {
	// k8s.io/api brings net/http to podspec anyway; its own import of it is still refused.
	pkg:  "shared/podspec",
	src:  "package podspec\n\nimport _ \"net/http\"\n",
	want: []string{"shared/podspec imports net/http"},
	not:  []string{"shared/podspec depends on net/http"},
}, {
	pkg: "shared/spotgate",
	src: "package spotgate\n\nimport _ \"github.com/aws/aws-sdk-go-v2/service/ec2\"\n",
	want: []string{
		"shared/spotgate depends on github.com/aws/aws-sdk-go-v2/service/ec2",
		// admission reads spotgate's Observation, so what spotgate brings in reaches it too.
		"shared/admission depends on github.com/aws/aws-sdk-go-v2/service/ec2 through shared/spotgate",
	},
}, {
	pkg:  "shared/policy",
	src:  "package policy\n\nimport _ \"k8s.io/client-go/rest\"\n",
	want: []string{"shared/policy depends on k8s.io/client-go/rest"},
}, {
	pkg:  "shared/admission",
	src:  "package admission\n\nimport _ \"github.com/tidegate/tidegate/shared/config\"\n",
	want: []string{"shared/admission depends on shared/config, which is not pure"},
}, {
	pkg:  "shared/signing",
	src:  "package signing\n\nimport \"time\"\n\nvar started = time.Now()\n",
	want: []string{"shared/signing: zz_planted.go:5: time.Now reads the clock"},
}, {
	pkg:  "shared/apps",
	src:  "package apps\n\nimport clock \"time\"\n\nfunc age(t clock.Time) clock.Duration { return clock.Since(t) }\n",
	want: []string{"shared/apps: zz_planted.go:5: time.Since reads the clock"},
}, {
	pkg: "shared/tenancy",
	src: "package tenancy\n\nimport \"os\"\n\nfunc home() string { return os.Getenv(\"HOME\") }\n",
	want: []string{
		"shared/tenancy imports os",
		"shared/tenancy: zz_planted.go:5: os.Getenv reads the environment",
	},
}}

// TestCheckCatchesPlanted runs check, the function TestPurePackages runs, over the tree with
// files planted in pure packages' folders through go list's overlay, which leaves the real tree
// as it is: so what passes TestPurePackages is what check would have refused.
func TestCheckCatchesPlanted(t *testing.T) {
	goTool := goTool(t)
	dir := t.TempDir()
	overlay := map[string]string{}
	var pkgs []string
	for _, p := range plants {
		folder, err := filepath.Abs(filepath.Join("..", "..", p.pkg))
		if err != nil {
			t.Fatal(err)
		}
		src := filepath.Join(dir, strings.ReplaceAll(p.pkg, "/", "_")+".go")
		if err := os.WriteFile(src, []byte(p.src), 0o644); err != nil {
			t.Fatal(err)
		}
		overlay[filepath.Join(folder, "zz_planted.go")] = src
		pkgs = append(pkgs, p.pkg)
	}
	broken, err := check(goTool, pkgs, overlay)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plants {
		for _, w := range p.want {
			if !slices.Contains(broken, w) {
				t.Errorf("check with %q planted in %s: no %q in\n%s", p.src, p.pkg, w, strings.Join(about(broken, p.pkg), "\n"))
			}
		}
		for _, n := range p.not {
			if slices.Contains(broken, n) {
				t.Errorf("check with %q planted in %s: reported %q", p.src, p.pkg, n)
			}
		}
	}
}

// about is what of broken is about pkg.
func about(broken []string, pkg string) []string {
	var its []string
	for _, b := range broken {
		if strings.HasPrefix(b, pkg+" ") || strings.HasPrefix(b, pkg+": ") {
			its = append(its, b)
		}
	}
	return its
}

func TestReads(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"now", `import "time"; var t = time.Now()`, []string{"f.go:1: time.Now reads the clock"}},
		{"aliased", `import clock "time"; func f() { clock.Sleep(1) }`, []string{"f.go:1: time.Sleep waits on the clock"}},
		{"kept for later", `import "time"; var now = time.Now`, []string{"f.go:1: time.Now reads the clock"}},
		{"ticker", `import "time"; var c = time.NewTicker(1).C`, []string{"f.go:1: time.NewTicker waits on the clock"}},
		{"dot import", `import . "time"; var t = Now()`, []string{"f.go:1: dot-imports time, so its clock and environment reads cannot be told apart"}},
		{"environment", `import env "os"; var v, _ = env.LookupEnv("X")`, []string{"f.go:1: os.LookupEnv reads the environment"}},
		{"time as a value", `import "time"; func f(t time.Time, d time.Duration) time.Time { return t.Add(d).Truncate(time.Second) }`, nil},
		{"a clock passed in", `import "time"; type clock interface{ Now() time.Time }; func f(c clock) time.Time { return c.Now() }`, nil},
		{"another package's Now", `import time "example.com/fake"; var t = time.Now()`, nil},
		{"blank import", `import _ "time"`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "f.go", "package p; "+tt.src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, reads(fset, f)); diff != "" {
				t.Errorf("reads(%s): -want +got\n%s", tt.src, diff)
			}
		})
	}
}
