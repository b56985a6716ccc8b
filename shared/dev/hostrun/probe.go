package hostrun

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// systemDirs are this machine's folders the sandbox shows read-only: programs, their libraries
// and /etc (the resolver, certificates, /etc/hosts). Nothing else of the machine is in it.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"}

// runtimes are the programs the install's script fetches the sources with and apps run on; the
// sandbox needs one of them in imagePath.
var runtimes = []string{"node", "python3"}

// probe finds bwrap and this machine's system folders, checks a runtime is there, makes the
// pods' folder and tries bwrap once, so a machine that cannot run hosts says so before any pod.
func (r *Runner) probe() error {
	var err error
	if r.bwrap, err = exec.LookPath("bwrap"); err != nil {
		return fmt.Errorf("%w: bwrap is not on PATH: install bubblewrap (scripts/tools-hostrun.sh does)", ErrCannotRun)
	}
	r.system = systemPaths()
	if found := findRuntimes(); len(found) == 0 {
		return fmt.Errorf("%w: neither %s is in %s, where the sandbox looks for them: install Node.js or Python 3 there", ErrCannotRun, strings.Join(runtimes, " nor "), imagePath)
	}
	if r.dir, err = os.MkdirTemp("", "tidegate-hosts-"); err != nil {
		return fmt.Errorf("making the hosts' folder: %w", err)
	}
	// User 1000 binds folders under it, so it must be able to pass through.
	if err := os.Chmod(r.dir, 0o711); err != nil {
		return err
	}
	if err := r.try(); err != nil {
		os.RemoveAll(r.dir)
		return err
	}
	return nil
}

// try runs `true` under bwrap as a host would run, to see user namespaces are allowed here.
func (r *Runner) try() error {
	cmd := exec.Command(r.bwrap, bwrapArgs(jail{Hostname: "probe", System: r.system, Argv: []string{"true"}})...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = r.credential()
	if err := runWithEnv(cmd, map[string]string{"PATH": imagePath}, nil); err != nil {
		return fmt.Errorf("%w: bwrap could not start a sandbox (%v: %s); it needs unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu kernel.apparmor_restrict_unprivileged_userns=0)",
			ErrCannotRun, err, strings.TrimSpace(out.String()))
	}
	return nil
}

// credential starts bwrap as user 1000 when the runner is root, so the process is user 1000 on
// this machine too and not root in a namespace; an unprivileged runner's bwrap maps its own user
// to 1000 inside.
func (r *Runner) credential() *syscall.SysProcAttr {
	if !r.asRoot {
		return nil
	}
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 1000, Gid: 1000}}
}

// systemPaths are the systemDirs this machine has, each a folder to bind or a link to make.
func systemPaths() []systemPath {
	var out []systemPath
	for _, dir := range systemDirs {
		fi, err := os.Lstat(dir)
		switch {
		case err != nil:
			continue
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(dir); err == nil {
				out = append(out, systemPath{Path: dir, Link: target})
			}
		case fi.IsDir():
			out = append(out, systemPath{Path: dir})
		}
	}
	return out
}

// findRuntimes are the runtimes found in imagePath.
func findRuntimes() []string {
	var found []string
	for _, name := range runtimes {
		for _, dir := range filepath.SplitList(imagePath) {
			if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode()&0o111 != 0 {
				found = append(found, name)
				break
			}
		}
	}
	return found
}
