package admission

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/spotgate"
)

// A case is one random input to Decide, small enough that priorities, times and the room all
// collide often.
type propCase struct {
	cands  []Candidate
	cap    Capacity
	prices map[string]spotgate.Observation
}

func randomCase(r *rand.Rand) propCase {
	types := []string{"g5.xlarge", "m5.large", "p4d.24xlarge", "x9.unpriced"}
	prices := map[string]spotgate.Observation{}
	for _, typ := range types[:3] {
		if r.IntN(4) > 0 {
			prices[typ] = spotgate.Observation{Price: float64(r.IntN(100)) / 100, Known: r.IntN(5) > 0}
		}
	}
	cands := make([]Candidate, r.IntN(40))
	for i := range cands {
		c := Candidate{
			ID:        fmt.Sprintf("j%02d", i),
			Priority:  []int{0, 10, 50, 50, 50, 90, 100}[r.IntN(7)],
			CreatedAt: t0.Add(time.Duration(r.IntN(5)) * time.Second),
		}
		if r.IntN(2) == 0 {
			c.GPUs = int64(r.IntN(9))
		}
		if r.IntN(3) == 0 {
			c.Spot = &jobs.Spot{InstanceType: types[r.IntN(len(types))], MaxPrice: float64(r.IntN(100)) / 100}
		}
		cands[i] = c
	}
	return propCase{cands, Capacity{
		MaxActive: r.IntN(10), ActiveJobs: r.IntN(12), MaxGPUs: int64(r.IntN(17)), ActiveGPUs: int64(r.IntN(20)),
	}, prices}
}

// deepCopy copies what Decide must not change, Spot values included.
func deepCopy(pc propCase) propCase {
	cands := slices.Clone(pc.cands)
	for i, c := range cands {
		if c.Spot != nil {
			s := *c.Spot
			cands[i].Spot = &s
		}
	}
	return propCase{cands, pc.cap, maps.Clone(pc.prices)}
}

func TestDecideProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2026))
	for n := range 3000 {
		pc := randomCase(r)
		before := deepCopy(pc)
		d := Decide(pc.cands, pc.cap, pc.prices)
		name := fmt.Sprintf("case %d (%d candidates, %+v)", n, len(pc.cands), pc.cap)

		if diff := cmp.Diff(before, pc, cmp.AllowUnexported(propCase{})); diff != "" {
			t.Fatalf("%s: Decide changed its input (-before +after):\n%s", name, diff)
		}
		if again := Decide(pc.cands, pc.cap, pc.prices); !cmp.Equal(d, again) {
			t.Fatalf("%s: Decide twice on one input differs:\n%s", name, cmp.Diff(d, again))
		}
		shuffled := slices.Clone(pc.cands)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if diff := cmp.Diff(d, Decide(shuffled, pc.cap, pc.prices), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("%s: Decide depends on the candidates' order (-listed +shuffled):\n%s", name, diff)
		}
		checkDecision(t, name, pc, d)
	}
}

// checkDecision checks what must hold of any decision, against the candidates in dispatch order.
func checkDecision(t *testing.T, name string, pc propCase, d Decision) {
	t.Helper()
	byID := map[string]Candidate{}
	for _, c := range pc.cands {
		byID[c.ID] = c
	}
	seen := map[string]bool{}
	for _, id := range append(slices.Clone(d.Admit), waitIDs(d)...) {
		if seen[id] || byID[id].ID == "" {
			t.Fatalf("%s: %s is decided twice or is no candidate: %+v", name, id, d)
		}
		seen[id] = true
	}
	if len(seen) != len(pc.cands) {
		t.Fatalf("%s: %d of %d candidates decided: %+v", name, len(seen), len(pc.cands), d)
	}

	slots := max(pc.cap.MaxActive-pc.cap.ActiveJobs, 0)
	if len(d.Admit) > slots {
		t.Fatalf("%s: admitted %d jobs with %d slots free", name, len(d.Admit), slots)
	}
	gpusLeft := pc.cap.MaxGPUs - pc.cap.ActiveGPUs
	for _, id := range d.Admit {
		c := byID[id]
		if gate(c.Spot, pc.prices) != open {
			t.Fatalf("%s: admitted %s though its price cap holds it", name, id)
		}
		gpusLeft -= max(c.GPUs, 0)
	}
	if pc.cap.MaxGPUs > 0 && gpusLeft < min(pc.cap.MaxGPUs-pc.cap.ActiveGPUs, 0) {
		t.Fatalf("%s: admitted jobs overrun the GPU budget, %d left", name, gpusLeft)
	}

	for i, w := range d.Waiting {
		if w.Position != i+1 {
			t.Fatalf("%s: waiting job %d has position %d", name, i, w.Position)
		}
	}
	checkOrder(t, name, byID, d)
	checkRoomWaiters(t, name, pc, byID, d, gpusLeft)
}

func waitIDs(d Decision) []string {
	var ids []string
	for _, w := range d.Waiting {
		ids = append(ids, w.ID)
	}
	return ids
}

// before says whether a goes before b in dispatch order.
func before(a, b Candidate) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.Before(b.CreatedAt)
	}
	return a.ID < b.ID
}

func checkOrder(t *testing.T, name string, byID map[string]Candidate, d Decision) {
	t.Helper()
	for _, ids := range [][]string{d.Admit, waitIDs(d)} {
		for i := 1; i < len(ids); i++ {
			if !before(byID[ids[i-1]], byID[ids[i]]) {
				t.Fatalf("%s: %s listed before %s, out of dispatch order", name, ids[i-1], ids[i])
			}
		}
	}
}

// checkRoomWaiters checks the jobs waiting for room: each has the reason its priority gives it,
// each is larger than any job admitted behind it (it was passed over for size, never for order),
// and while slots are left each needs more GPUs than are left.
func checkRoomWaiters(t *testing.T, name string, pc propCase, byID map[string]Candidate, d Decision, gpusLeft int64) {
	t.Helper()
	head := -1
	slotsLeft := max(pc.cap.MaxActive-pc.cap.ActiveJobs, 0) - len(d.Admit)
	for _, w := range d.Waiting {
		if w.Reason != ReasonCapacity && w.Reason != ReasonQueuedBehindHigherPriority {
			continue
		}
		c := byID[w.ID]
		if head < 0 {
			head = c.Priority
		}
		want := ReasonCapacity
		if c.Priority < head {
			want = ReasonQueuedBehindHigherPriority
		}
		if w.Reason != want {
			t.Fatalf("%s: %s (priority %d, first waiting for room %d) waits with %s, want %s", name, w.ID, c.Priority, head, w.Reason, want)
		}
		for _, id := range d.Admit {
			if a := byID[id]; before(c, a) && !(pc.cap.MaxGPUs > 0 && c.GPUs > max(a.GPUs, 0)) {
				t.Fatalf("%s: %s (%d GPUs) waits for room while %s behind it (%d GPUs) is admitted", name, w.ID, c.GPUs, id, a.GPUs)
			}
		}
		if slotsLeft > 0 && (pc.cap.MaxGPUs <= 0 || c.GPUs <= 0 || c.GPUs <= gpusLeft) {
			t.Fatalf("%s: %s (%d GPUs) waits for room with %d slots and %d GPUs left", name, w.ID, c.GPUs, slotsLeft, gpusLeft)
		}
	}
}
