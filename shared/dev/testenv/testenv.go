// Package testenv gives integration tests the real stand-ins — DynamoDB Local, fauxqs and the
// Kubernetes sandbox — shared per test binary, with isolated tables, queues, bucket prefixes and
// namespaces per test.
//
// `make test` starts one sandbox for the whole run and points TIDEGATE_SANDBOX_STATE at its state
// file; a test binary run alone starts its own and stops it when it ends (see Main).
package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/dev/sandbox"
)

// EnvState names the file of a sandbox another process runs, to attach to instead of starting one.
const EnvState = "TIDEGATE_SANDBOX_STATE"

// startTimeout bounds bringing the stand-ins up: ≈4 s each measured, the JVM slowest.
const startTimeout = 2 * time.Minute

var (
	mu     sync.Mutex
	state  *sandbox.State
	owned  *sandbox.Sandbox
	ownDir string
)

// Main runs the tests and then stops any stand-ins this binary started. Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	mu.Lock()
	if owned != nil {
		owned.Stop()
		os.RemoveAll(ownDir)
	}
	mu.Unlock()
	os.Exit(code)
}

// get returns the shared sandbox, attaching to or starting one; kube asks for the cluster too.
func get(t testing.TB, kube bool) sandbox.State {
	defer func() {
		if kube && state != nil && state.Kubeconfig == "" {
			t.Fatalf("the sandbox in %s has no Kubernetes; start it with --kube", os.Getenv(EnvState))
		}
	}()
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if state != nil {
		return *state
	}
	if path := os.Getenv(EnvState); path != "" {
		st, err := sandbox.ReadState(path)
		if err != nil {
			t.Fatalf("attaching to the sandbox named by %s: %v", EnvState, err)
		}
		state = &st
		return st
	}
	dir, err := os.MkdirTemp("", "tidegate-testenv-")
	if err != nil {
		t.Fatalf("making sandbox folder: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	// Everything starts at once, Kubernetes too: a test that asks for the cluster after another
	// asked only for tables must find those tables' server still there.
	sb, err := sandbox.Start(ctx, sandbox.Options{Dir: dir, Kube: true})
	if err != nil {
		os.RemoveAll(dir)
		if errors.Is(err, sandbox.ErrNotInstalled) && os.Getenv("CI") == "" {
			t.Skipf("stand-ins are not installed (run `make tools`): %v", err)
		}
		t.Fatalf("starting the stand-ins: %v", err)
	}
	owned, ownDir, state = sb, dir, &sb.State
	return sb.State
}

// uniq makes a name no other test in any concurrently running binary uses.
func uniq(t testing.TB, prefix string) string {
	return fmt.Sprintf("%s-%d-%s", prefix, os.Getpid(), shortName(t))
}

var counter struct {
	sync.Mutex
	n int
}

func shortName(t testing.TB) string {
	counter.Lock()
	counter.n++
	n := counter.n
	counter.Unlock()
	base := filepath.Base(t.Name())
	clean := make([]rune, 0, 20)
	for _, r := range base {
		if len(clean) == 20 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			clean = append(clean, r)
		case r >= 'A' && r <= 'Z':
			clean = append(clean, r+'a'-'A')
		}
	}
	return fmt.Sprintf("%s%d", string(clean), n)
}
