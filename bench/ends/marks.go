package main

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/tidegate/tidegate/shared/jobs"
)

// The stack's log lines that mark a step of a slot's cycle, each at the time it was logged.
const (
	markRecorded = "recorded" // reconcile: a job's status written (job_id, status)
	markRang     = "rang dispatch"
	markDraining = "draining"
	markBusy     = "region already draining; it drains again before it stops"
	markDrained  = "drained" // dispatch: a drain's round done (admitted, took)
)

// marks keeps the times of the stack's log lines that mark a step, and passes every line on to
// the handler that prints them.
type marks struct {
	next slog.Handler
	mu   *sync.Mutex
	// at are the times of each mark but markRecorded; recorded that of each job's terminal status.
	at       map[string][]time.Time
	recorded map[string]time.Time
	// rounds are the drains' rounds, each with how long it took and how many jobs it admitted.
	rounds *[]round
}

// round is one round of a drain: how long it took and how many jobs it admitted.
type round struct {
	took, reading, claiming time.Duration
	admitted                int64
}

func newMarks(next slog.Handler) *marks {
	return &marks{next: next, mu: &sync.Mutex{}, at: map[string][]time.Time{}, recorded: map[string]time.Time{}, rounds: &[]round{}}
}

// Enabled is true at every level: the marks are logged at Debug, which the printer leaves out.
func (m *marks) Enabled(context.Context, slog.Level) bool { return true }

func (m *marks) Handle(ctx context.Context, r slog.Record) error {
	switch r.Message {
	case markRecorded:
		var id string
		terminal := false
		r.Attrs(func(a slog.Attr) bool {
			switch a.Key {
			case "job_id":
				id = a.Value.String()
			case "status":
				terminal = jobs.Status(a.Value.String()).Terminal()
			}
			return true
		})
		if terminal {
			m.mu.Lock()
			m.recorded[id] = r.Time
			m.mu.Unlock()
		}
	case markRang, markDraining, markBusy:
		m.add(r.Message, r.Time)
	case markDrained:
		var d round
		r.Attrs(func(a slog.Attr) bool {
			switch a.Key {
			case "took":
				d.took = a.Value.Duration()
			case "reading":
				d.reading = a.Value.Duration()
			case "claiming":
				d.claiming = a.Value.Duration()
			case "admitted":
				d.admitted = a.Value.Int64()
			}
			return true
		})
		m.mu.Lock()
		*m.rounds = append(*m.rounds, d)
		m.mu.Unlock()
	}
	if !m.next.Enabled(ctx, r.Level) {
		return nil
	}
	return m.next.Handle(ctx, r)
}

func (m *marks) add(name string, at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.at[name] = append(m.at[name], at)
}

func (m *marks) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &marks{next: m.next.WithAttrs(attrs), mu: m.mu, at: m.at, recorded: m.recorded, rounds: m.rounds}
}

func (m *marks) WithGroup(name string) slog.Handler {
	return &marks{next: m.next.WithGroup(name), mu: m.mu, at: m.at, recorded: m.recorded, rounds: m.rounds}
}

// times answers a copy of each mark's times, sorted, of each job's end's record, and of the
// drains' rounds.
func (m *marks) times() (map[string][]time.Time, map[string]time.Time, []round) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string][]time.Time, len(m.at))
	for k, v := range m.at {
		out[k] = slices.SortedFunc(slices.Values(v), time.Time.Compare)
	}
	return out, maps.Clone(m.recorded), slices.Clone(*m.rounds)
}
