package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/tidegate/tidegate/shared/dev/devstack"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
)

// readyTimeout bounds the stack's start on running stand-ins: tables, queues, a KMS key, the dev
// tenant and the namespaces, each a few requests.
const readyTimeout = 2 * time.Minute

// stack is a running devstack; stop ends it and waits until it has stopped, once.
type stack struct {
	state devstack.State
	stop  func()
}

// startStack runs devstack with opt on st until stop, and answers once it serves. Its errors are
// logged to stderr; its progress lines are dropped.
func startStack(ctx context.Context, st sandbox.State, opt devstack.Options) (*stack, error) {
	ctx, cancel := context.WithCancel(ctx)
	ready := make(chan devstack.State, 1)
	opt.Ready = func(s devstack.State) { ready <- s }
	done := make(chan error, 1)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	go func() { done <- devstack.Run(ctx, opt, io.Discard, log) }()
	stopped := false
	s := &stack{stop: func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}}
	select {
	case s.state = <-ready:
		return s, nil
	case err := <-done:
		cancel()
		return nil, fmt.Errorf("starting the dev stack: %w", errors.Join(err, errors.New("it stopped before serving")))
	case <-time.After(readyTimeout):
		s.stop()
		return nil, fmt.Errorf("the dev stack did not serve within %s", readyTimeout)
	}
}
