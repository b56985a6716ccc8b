package reconcile

import (
	"maps"
	"time"

	"github.com/tidegate/tidegate/shared/jobs"
)

// goneGrace is how long a followed job's objects may be missing from the LISTs before the beat
// records its end: long enough that a cancel (which deletes them, then records cancelled) has
// finished, and a few beats of the one-minute schedule.
const goneGrace = 3 * time.Minute

// memory is what a beat hands the next about one region.
//
// recorded holds, for each job the LISTs showed, the status last seen on the job's record (""
// for one it does not follow: no record, or another region's). A record moves only forward, and
// only a beat records a job's start and end, so a job whose objects show nothing past the status
// remembered has nothing to record, and its record need not be read. A remembered status can be
// behind the record (another instance recorded it), which costs a read, never ahead of it.
//
// gone holds the followed jobs whose objects the LISTs stopped showing, with when that was first
// seen; after goneGrace such a job is recorded failed (vanish). Only a job once listed, or one
// recorded running, can be gone: a CronJob's job has nothing to list until its first run.
//
// A new process remembers nothing: its first beat reads the region's active records with the
// LISTs, and the records of the other listed jobs by id.
type memory struct {
	recorded map[string]jobs.Status
	gone     map[string]time.Time
	// spot are the nodes last seen on spot capacity, when watched pods had the nodes listed: a
	// node gone since has no label left to tell (interruption.go).
	spot map[string]bool
	// awaiting are the dispatched jobs whose current attempt's pods were never seen all
	// scheduled: their records are read every beat, with their pods, until they are
	// (jobs.Ready); a cold start finds them among the active records it reads.
	awaiting map[string]bool
	// settled are the listed jobs whose current attempt is past being judged all or nothing (seen
	// ready, or never to be judged: a record from before ready_timeout, a long-running job): their
	// records are not read again for it while they stay listed.
	settled map[string]bool
}

// cold reports whether this is an instance's first beat of the region.
func (m memory) cold() bool { return m.recorded == nil }

// following reports whether a job remembered in status s may still move: a finished or
// cancelled job never does, and a retry is a job of its own.
func following(s jobs.Status) bool {
	return s == jobs.StatusPending || s == jobs.StatusRunning
}

// next starts this beat's memory of region from the last one's, given the LISTs and the records
// read beside them: the jobs gone since, or still gone, with when they were first missed. The
// beat fills in recorded as it goes.
func (m memory) next(region string, l owned, read []jobs.Job, now time.Time) memory {
	n := memory{recorded: make(map[string]jobs.Status, len(l.jobs)), gone: map[string]time.Time{}, settled: map[string]bool{}}
	for id := range m.settled {
		if l.has(id) {
			n.settled[id] = true
		}
	}
	for id, s := range m.recorded {
		if following(s) && !l.has(id) {
			n.gone[id] = now
		}
	}
	if m.cold() {
		for _, j := range read {
			if j.Region == region && j.Status == jobs.StatusRunning && !j.Podless && !l.has(j.ID) {
				n.gone[j.ID] = now
			}
		}
	}
	for id, since := range m.gone {
		if !l.has(id) {
			n.gone[id] = since
		}
	}
	return n
}

// overdue is the jobs gone for goneGrace or longer, with when they were first missed.
func (m memory) overdue(now time.Time) map[string]time.Time {
	out := map[string]time.Time{}
	for id, since := range m.gone {
		if now.Sub(since) >= goneGrace {
			out[id] = since
		}
	}
	return out
}

// recall is a copy of what the last beat remembered of region, which a watch of the region
// may go on noting in while the pass reads the copy; remember replaces it.
func (h *Handler) recall(region string) memory {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.memory[region]
	return memory{recorded: maps.Clone(m.recorded), gone: maps.Clone(m.gone), spot: maps.Clone(m.spot),
		awaiting: maps.Clone(m.awaiting), settled: maps.Clone(m.settled)}
}

func (h *Handler) remember(region string, m memory) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.memory == nil {
		h.memory = map[string]memory{}
	}
	h.memory[region] = m
}

// recalled is the status region's memory holds for job id, and whether it holds one.
func (h *Handler) recalled(region, id string) (jobs.Status, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.memory[region].recorded[id]
	return s, ok
}

// note keeps s as the status of job id in region's memory, as the pass does, or forgets it when
// keep is false; a cold memory stays cold, so that the next pass reads every active record.
func (h *Handler) note(region, id string, s jobs.Status, keep bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.memory[region]
	switch {
	case m.cold():
	case keep:
		m.recorded[id] = s
	default:
		delete(m.recorded, id)
	}
}
