package secretbox

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPure keeps secretbox pure, as the house style asks: nothing it imports, however indirectly,
// reaches a cluster, AWS, the network or a context.
func TestPure(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool on PATH to list the imports with: %v", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps .: %v", err)
	}
	forbidden := []string{"context", "net", "net/http", "github.com/aws/", "k8s.io/"}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if dep == f || (strings.HasSuffix(f, "/") && strings.HasPrefix(dep, f)) {
				t.Errorf("secretbox depends on %s", dep)
			}
		}
	}
}
