package devstack

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/config"
)

// TestREADMEListsTheTunables: README's table of the deployment settings `tidegate dev` takes has
// one row per config.Tunables, in its order, each naming the dev flag used in its place (twins).
func TestREADMEListsTheTunables(t *testing.T) {
	b, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "| deployment setting | used in its place when given |\n|---|---|\n")
	if !ok {
		t.Fatal("README.md has no table of the deployment settings dev takes (| deployment setting | used in its place when given |)")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	flags := map[string]string{}
	for _, tw := range twins {
		flags[tw.env] = "`" + tw.flag + "`"
	}
	var want []string
	for _, name := range config.Tunables {
		want = append(want, "| `"+name+"` | "+flags[name]+" |")
	}
	if diff := cmp.Diff(want, strings.Split(table, "\n")); diff != "" {
		t.Errorf("README's deployment settings table (-want +README):\n%s", diff)
	}
}
