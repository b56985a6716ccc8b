package purity

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/tidegate/tidegate/"

// io is what no decision may reach: the network, AWS, a cluster, or a context to cancel a call.
var io = []string{"context", "net", "net/http", "github.com/aws/", "k8s.io/", "sigs.k8s.io/"}

// pure lists each pure package with what it must not depend on. A prefix ending in "/" covers a
// whole tree.
var pure = map[string][]string{
	"shared/admission":    io,
	"shared/apps":         io,
	"shared/deliveryplan": io,
	"shared/hostplan":     io,
	"shared/secretbox":    io,
	// podspec builds Kubernetes objects, so k8s.io/api (which brings context and net/http along)
	// is its to use; a client of the cluster or of AWS, or any other Tidegate package, is not.
	"shared/podspec": {"k8s.io/client-go/", "github.com/aws/", module},
}

func TestPurePackages(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool on PATH to list the imports with: %v", err)
	}
	for pkg, forbidden := range pure {
		t.Run(pkg, func(t *testing.T) {
			out, err := exec.Command(goTool, "list", "-deps", "../../"+pkg).Output()
			if err != nil {
				t.Fatalf("go list -deps %s: %v", pkg, err)
			}
			for _, dep := range strings.Fields(string(out)) {
				if dep == module+pkg {
					continue
				}
				for _, f := range forbidden {
					if dep == f || (strings.HasSuffix(f, "/") && strings.HasPrefix(dep, f)) {
						t.Errorf("%s depends on %s", pkg, dep)
					}
				}
			}
		})
	}
}
