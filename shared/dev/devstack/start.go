package devstack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"
)

// Started is a stack Start runs in the background.
type Started struct {
	State
	stop func()
}

// Stop ends the stack and waits until it has stopped; later calls do nothing.
func (s *Started) Stop() { s.stop() }

// Start runs the stack with opt until Stop, as a benchmark drives it, and answers once it serves;
// an error if it stops first or does not serve within readyWithin. log takes the stack's log
// lines; its progress lines are dropped. opt.Ready is Start's own.
func Start(ctx context.Context, opt Options, log *slog.Logger, readyWithin time.Duration) (*Started, error) {
	ctx, cancel := context.WithCancel(ctx)
	ready := make(chan State, 1)
	opt.Ready = func(s State) { ready <- s }
	done := make(chan error, 1)
	go func() { done <- Run(ctx, opt, io.Discard, log) }()
	stopped := false
	s := &Started{stop: func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}}
	select {
	case s.State = <-ready:
		return s, nil
	case err := <-done:
		cancel()
		return nil, fmt.Errorf("starting the dev stack: %w", errors.Join(err, errors.New("it stopped before serving")))
	case <-time.After(readyWithin):
		s.Stop()
		return nil, fmt.Errorf("the dev stack did not serve within %s", readyWithin)
	}
}
