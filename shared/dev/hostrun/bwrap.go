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
// with bwrap, and bwrap with the runner. The environment is not on the command line, where
// anyone on the machine could read a secret in it: bwrap passes on its own, which the runner
// sets to the pod's alone.
func bwrapArgs(s jail) []string {
	args := []string{
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

// environ is env as exec.Cmd takes it, in name order.
func environ(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for _, name := range slices.Sorted(maps.Keys(env)) {
		out = append(out, name+"="+env[name])
	}
	return out
}
