package hostrun

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// termRetry is how often SIGTERM is tried again while the sandbox has no process to take it yet
// (bwrap is still setting it up).
const termRetry = 100 * time.Millisecond

// ending says when a running sandbox is to end, and how: the runner's end (ctx) kills it at once,
// as a node going away takes its containers; its pod going (stop closed) ends it as a kubelet
// does, SIGTERM, then SIGKILL once grace() has passed.
type ending struct {
	ctx   context.Context
	stop  <-chan struct{}
	grace func() time.Duration
	log   *slog.Logger
}

// runWithEnv runs cmd, a bwrap whose arguments begin with bwrapArgs', with nothing in its own
// environment and env for the process it starts, passed on a pipe (envArgs), and ends it as end
// says when end is not nil.
func runWithEnv(cmd *exec.Cmd, env map[string]string, end *ending) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	ir, iw, err := os.Pipe()
	if err != nil {
		r.Close()
		w.Close()
		return err
	}
	cmd.Env = []string{}
	cmd.ExtraFiles = []*os.File{r, iw}
	err = cmd.Start()
	r.Close()
	iw.Close()
	if err != nil {
		w.Close()
		ir.Close()
		return err
	}
	// bwrap reads the whole file before it does anything else; a bwrap that failed first
	// leaves the write an EPIPE, and Wait says why.
	go func() {
		_, _ = w.Write(envArgs(env))
		w.Close()
	}()
	pid1 := make(chan int, 1)
	go func() {
		pid1 <- sandboxInit(ir)
		ir.Close()
	}()
	done := make(chan struct{})
	defer close(done)
	if end != nil {
		go end.watch(cmd.Process, pid1, done)
	}
	return cmd.Wait()
}

// sandboxInit is the pid of the sandbox's pid 1 as bwrap writes it on infoFD, or 0 when bwrap
// ended first.
func sandboxInit(info *os.File) int {
	var v struct {
		ChildPID int `json:"child-pid"`
	}
	if err := json.NewDecoder(info).Decode(&v); err != nil {
		return 0
	}
	return v.ChildPID
}

// watch ends bwrap (p) as e says, unless it ends first (done).
func (e *ending) watch(p *os.Process, pid1 <-chan int, done <-chan struct{}) {
	select {
	case <-done:
		return
	case <-e.ctx.Done():
		_ = p.Kill()
		return
	case <-e.stop:
	}
	grace := e.grace()
	kill := time.NewTimer(grace)
	defer kill.Stop()
	retry := time.NewTicker(termRetry)
	defer retry.Stop()
	init, termed := 0, false
	for {
		if init == 0 {
			select {
			case init = <-pid1:
			default:
			}
		}
		if !termed && init > 0 {
			termed = terminate(init)
		}
		select {
		case <-done:
			return
		case <-e.ctx.Done():
			_ = p.Kill()
			return
		case <-kill.C:
			e.log.Info("a host's process outlived its grace period: killing it", "grace", grace.String())
			// bwrap's --die-with-parent takes the sandbox, and every process in it, with bwrap.
			_ = p.Kill()
			return
		case <-retry.C:
		}
	}
}

// terminate sends SIGTERM to the processes of the sandbox whose pid 1 is init, as a kubelet sends
// it to a container's: the children of init, which is bwrap's own and, as a namespace's init,
// takes no signal it has no handler for. It says whether there was a process to send it to.
// When the command (init's first child) ends, init ends and the namespace's processes with it.
func terminate(init int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", init, init))
	if err != nil {
		return false
	}
	sent := false
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && syscall.Kill(pid, syscall.SIGTERM) == nil {
			sent = true
		}
	}
	return sent
}
