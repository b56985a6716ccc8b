package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// stopGrace is how long a server gets to exit after SIGTERM before it is killed: etcd and the
// JVM both finish in well under a second when they exit cleanly.
const stopGrace = 5 * time.Second

// process is one server the sandbox started; it is stopped by its own pid and nothing else.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// startProcess runs argv in dir with its output in logDir/name.log. The child gets its own process
// group so a Ctrl-C on the terminal reaches Tidegate, which then stops its children in order.
func startProcess(name, dir, logDir string, env []string, argv ...string) (*process, error) {
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, fmt.Errorf("making log folder for %s: %w", name, err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	return spawn(name, filepath.Join(logDir, name+".log"), os.O_TRUNC, cmd)
}

// again starts p's program once more, with the same arguments, folder and environment, its output
// appended to p's log after a line saying so: a server stopped on purpose (Cluster.StopAPIServer)
// comes back as it was, and its log keeps both runs.
func (p *process) again() (*process, error) {
	cmd := exec.Command(p.cmd.Path, p.cmd.Args[1:]...)
	cmd.Dir, cmd.Env = p.cmd.Dir, p.cmd.Env
	if f, err := os.OpenFile(p.log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
		fmt.Fprintf(f, "\n--- tidegate sandbox: %s started again at %s ---\n", p.name, time.Now().UTC().Format(time.RFC3339))
		f.Close()
	}
	return spawn(p.name, p.log, os.O_APPEND, cmd)
}

// spawn starts cmd with its output in logPath, opened with mode (os.O_TRUNC or os.O_APPEND).
func spawn(name, logPath string, mode int, cmd *exec.Cmd) (*process, error) {
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|mode, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening log for %s: %w", name, err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting %s (%s): %w", name, cmd.Path, err)
	}
	p := &process{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has already ended, as a server that failed to start does.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process, then SIGKILL if it lingers past stopGrace.
func (p *process) stop() {
	if p == nil || p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(stopGrace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// logTail is the end of the process's log, for an error that says why a server did not come up.
func (p *process) logTail() string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return ""
	}
	const keep = 2000
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	return string(b)
}

// waitReady polls ready until it answers nil, the process exits, or timeout passes.
func (p *process) waitReady(ctx context.Context, timeout time.Duration, ready func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		if p.exited() {
			return fmt.Errorf("%s exited while starting (%v); its log %s ends:\n%s", p.name, p.err, p.log, p.logTail())
		}
		if last = ready(ctx); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s (last: %v); its log %s ends:\n%s", p.name, timeout, last, p.log, p.logTail())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// httpReady answers nil once url returns any HTTP response at all.
func httpReady(url string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
}

// freePort asks the kernel for a loopback port nobody holds right now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free loopback port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// errNotInstalled is wrapped by every "run make tools first" error, so callers can tell it apart.
var errNotInstalled = errors.New("stand-in not installed")

// ErrNotInstalled is wrapped by Start's error when a stand-in's binaries are missing.
var ErrNotInstalled = errNotInstalled
