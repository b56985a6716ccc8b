package devstack

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lock is an exclusive flock on the dev folder: one `tidegate dev` per machine user, so a second
// `make dev` says so instead of fighting over ports. The kernel drops it if the process dies.
type lock struct{ f *os.File }

func takeLock(dir string) (*lock, error) {
	path := filepath.Join(dir, "lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening dev lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := strings.TrimSpace(string(b))
			if st, stErr := ReadState(dir); stErr == nil {
				return nil, fmt.Errorf("tidegate dev is already running (pid %s, serving %s); use that one, or stop it with Ctrl-C in its terminal (or `kill %s`)", holder, st.URL, holder)
			}
			return nil, fmt.Errorf("tidegate dev is already running (pid %s); stop it with Ctrl-C in its terminal (or `kill %s`)", holder, holder)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &lock{f: f}, nil
}

func (l *lock) release() {
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
}
