package hostrun

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBwrapArgs: the sandbox shares only the network, runs as user 1000, shows the system
// read-only with a private /tmp, binds each volume as the pod mounts it, and runs the command as
// given after "--", where nothing before can be read as an option.
func TestBwrapArgs(t *testing.T) {
	s := jail{
		Hostname: "web-r1-0a1b2c3d",
		System:   []systemPath{{Path: "/usr"}, {Path: "/bin", Link: "usr/bin"}},
		Mounts: []mount{
			{Source: "/tmp/h/volumes/app", Target: "/app", ReadOnly: true},
			{Source: "/tmp/h/volumes/scratch", Target: "/scratch"},
		},
		Dir:  "/app",
		Argv: []string{"sh", "-c", "echo hi", "--bind", "/", "/x"},
	}
	got := bwrapArgs(s)
	want := []string{
		"--args", "3", "--info-fd", "4", "--unshare-all", "--unshare-user", "--share-net", "--uid", "1000", "--gid", "1000",
		"--die-with-parent", "--new-session", "--hostname", "web-r1-0a1b2c3d",
		"--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin",
		"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
		"--ro-bind", "/tmp/h/volumes/app", "/app", "--bind", "/tmp/h/volumes/scratch", "/scratch",
		"--chdir", "/app", "--",
		"sh", "-c", "echo hi", "--bind", "/", "/x",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bwrapArgs(%+v) (-want +got):\n%s", s, diff)
	}
	if got := bwrapArgs(jail{Argv: []string{"true"}}); !slices.Contains(got, "/") || got[len(got)-2] != "--" {
		t.Errorf("bwrapArgs without a dir = %v, want --chdir / then -- true", got)
	}
}

// TestEnvArgs: bwrap is told to clear its environment, then each variable in name order, NUL
// separated, so a value's newlines, '=' and option-like text stay one value.
func TestEnvArgs(t *testing.T) {
	got := strings.Split(strings.TrimSuffix(string(envArgs(map[string]string{"B": "--bind / /x", "A": "x=y\nC=3"})), "\x00"), "\x00")
	want := []string{"--clearenv", "--setenv", "A", "x=y\nC=3", "--setenv", "B", "--bind / /x"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("envArgs (-want +got):\n%s", diff)
	}
	if strings.Contains(strings.Join(bwrapArgs(jail{Argv: []string{"true"}}), " "), "--setenv") {
		t.Errorf("bwrapArgs carries a variable; the environment must not be on the command line")
	}
}
