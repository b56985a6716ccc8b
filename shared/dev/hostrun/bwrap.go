package hostrun

import (
	"maps"
	"slices"
)

// sandboxUser is the user the process runs as inside its sandbox: the pod spec's own
// (runAsUser 1000, the node image's non-root user), so files keep the owner they have in a pod.
const sandboxUser = "1000"

// systemPath is one of this machine's system folders as the sandbox shows it: bound read-only,
// or, where the machine has a link (a merged /usr's /bin -> usr/bin), the same link.
type systemPath struct {
	Path string
	Link string // the link's target; empty binds Path read-only
}

// mount is one of the pod's volumes as a folder of this machine, at the path the container
// mounts it.
type mount struct {
	Source, Target string
	ReadOnly       bool
}

// jail is what bwrap is told for one of the pod's containers.
type jail struct {
	// Hostname is the pod's name, as a pod's hostname is.
	Hostname string
	System   []systemPath
	Mounts   []mount
	// Dir is the working directory inside the sandbox; empty is /.
	Dir string
	// Argv is the container's command, run as is.
	Argv []string
}

// bwrapArgs is bwrap's command line for s: every namespace of its own but the network, which the
// process shares with this machine so it reaches the dev API on loopback; this machine's system
// read-only, a private /tmp, /proc and /dev; the pod's volumes; and user 1000. The process dies
// with bwrap, and bwrap with the runner. bwrap says its sandbox's pid 1 on infoFD (sandbox.go). The environment is not on the command line: bwrap reads
// it from argsFD (envArgs).
func bwrapArgs(s jail) []string {
	args := []string{
		"--args", argsFD, "--info-fd", infoFD,
		"--unshare-all", "--unshare-user", "--share-net",
		"--uid", sandboxUser, "--gid", sandboxUser,
		"--die-with-parent", "--new-session",
		"--hostname", s.Hostname,
	}
	for _, p := range s.System {
		if p.Link != "" {
			args = append(args, "--symlink", p.Link, p.Path)
		} else {
			args = append(args, "--ro-bind", p.Path, p.Path)
		}
	}
	args = append(args, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp")
	for _, m := range s.Mounts {
		bind := "--bind"
		if m.ReadOnly {
			bind = "--ro-bind"
		}
		args = append(args, bind, m.Source, m.Target)
	}
	dir := s.Dir
	if dir == "" {
		dir = "/"
	}
	args = append(args, "--chdir", dir, "--")
	return append(args, s.Argv...)
}

// envArgs is the process's environment as bwrap's --args file takes it: NUL-separated options
// that clear bwrap's own environment and set each variable, in name order. Read from a pipe, it
// is on no command line, where anyone on this machine could read a secret; and bwrap itself runs
// with an empty environment, so no variable of the pod's (LD_PRELOAD among an org's secrets)
// touches bwrap before the sandbox is up.
func envArgs(env map[string]string) []byte {
	var b []byte
	add := func(s string) { b = append(append(b, s...), 0) }
	add("--clearenv")
	for _, name := range slices.Sorted(maps.Keys(env)) {
		add("--setenv")
		add(name)
		add(env[name])
	}
	return b
}

// argsFD is the descriptor bwrap reads envArgs from: the first of exec.Cmd's ExtraFiles.
const argsFD = "3"

// infoFD is the descriptor bwrap writes the sandbox's pid 1 to, as JSON ("child-pid"): the second
// of exec.Cmd's ExtraFiles.
const infoFD = "4"
