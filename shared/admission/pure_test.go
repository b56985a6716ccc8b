package admission

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPure keeps admission a pure decision, as the house style asks: nothing it imports, however
// indirectly, reaches a cluster, AWS, the network or a context.
func TestPure(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool on PATH to list the imports with: %v", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps .: %v", err)
	}
	forbidden := []string{"context", "net/http", "github.com/aws/", "k8s.io/", "github.com/tidegate/tidegate/shared/spotgate"}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if dep == f || (strings.HasSuffix(f, "/") && strings.HasPrefix(dep, f)) {
				t.Errorf("admission depends on %s", dep)
			}
		}
	}
}
