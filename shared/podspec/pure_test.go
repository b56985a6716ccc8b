package podspec

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPure keeps podspec a builder of objects: nothing it imports, however indirectly, is a
// client of the cluster or of AWS. (k8s.io/api itself brings context and net/http along.)
func TestPure(t *testing.T) {
	needTools(t, "go")
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps .: %v", err)
	}
	forbidden := []string{"k8s.io/client-go/", "github.com/aws/", "github.com/tidegate/tidegate/"}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if strings.HasPrefix(dep, f) && dep != "github.com/tidegate/tidegate/shared/podspec" {
				t.Errorf("podspec depends on %s", dep)
			}
		}
	}
}
