package reconcile

import (
	"slices"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestCoalescerRingsOnceMoreForABurst: asks that come while a ring is under way are one more
// ring after it, however many they are; an ask when none is under way rings at once.
func TestCoalescerRingsOnceMoreForABurst(t *testing.T) {
	var runs atomic.Int32
	first, release := make(chan struct{}), make(chan struct{})
	c := &coalescer{do: func() {
		if runs.Add(1) == 1 {
			close(first)
			<-release
		}
	}}
	c.ask()
	<-first // the first ring is under way
	for range 10 {
		c.ask()
	}
	close(release)
	c.wait()
	if n := runs.Load(); n != 2 {
		t.Errorf("a ring and ten asks during it rang %d times, want 2", n)
	}
	c.ask()
	c.wait()
	if n := runs.Load(); n != 3 {
		t.Errorf("an ask after the burst rang %d times in all, want 3", n)
	}
}

// TestFollowerTakesEachJobOnce: a job moved twice before it is taken is due once; the jobs due
// are taken together, with a copy of their own objects only; a job moved while it is followed
// is due again when it is done, and not before; one done and unmoved is forgotten.
func TestFollowerTakesEachJobOnce(t *testing.T) {
	pod := func(id string) []corev1.Pod { return []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: id}}} }
	f := takeInto(owned{pods: map[string][]corev1.Pod{"a": pod("a"), "b": pod("b"), "c": pod("c")}})
	f.makeDue("a")
	f.makeDue("b")
	f.makeDue("a")
	if !slices.Equal(f.due, []string{"a", "b"}) {
		t.Fatalf("due %v, want [a b]", f.due)
	}
	ids, w := f.takeDue()
	if !slices.Equal(ids, []string{"a", "b"}) || len(f.due) != 0 {
		t.Fatalf("took %v leaving %v due; want [a b] and none", ids, f.due)
	}
	if len(w.pods) != 2 || len(w.pods["a"]) != 1 || w.has("c") {
		t.Errorf("the copy taken holds %v; want a's and b's pods only", w.pods)
	}
	f.makeDue("a") // moved while followed
	if len(f.due) != 0 {
		t.Errorf("a job moved while followed is due at once (%v); want it due when done", f.due)
	}
	f.done("a", false)
	f.done("b", false)
	if !slices.Equal(f.due, []string{"a"}) || len(f.wake) != 1 {
		t.Errorf("after both were done, due %v (woken %v); want [a], woken", f.due, len(f.wake) == 1)
	}
	if _, kept := f.mark["b"]; kept {
		t.Error("b, done and unmoved, is still marked")
	}
	f.makeDue("b")
	if !slices.Equal(f.due, []string{"a", "b"}) {
		t.Errorf("due %v, want [a b]", f.due)
	}
	// One whose read failed is due again, though nothing moved it.
	f.takeDue()
	f.done("a", true)
	f.done("b", false)
	if !slices.Equal(f.due, []string{"a"}) || f.idle() {
		t.Errorf("after a's read failed: due %v, idle %v; want [a] due again", f.due, f.idle())
	}
	f.takeDue()
	f.done("a", false)
	if !f.idle() {
		t.Errorf("with every job done, the follower is not idle: %v", f.mark)
	}
}

// TestCoalescerKeepsItsGap: an ask just after a run, within the gap, runs once the gap since
// that run's start has passed, not at once.
func TestCoalescerKeepsItsGap(t *testing.T) {
	var starts []time.Time
	c := &coalescer{do: func() { starts = append(starts, time.Now()) }, gap: 80 * time.Millisecond}
	c.ask()
	time.Sleep(10 * time.Millisecond)
	c.ask()
	c.wait()
	if len(starts) != 2 {
		t.Fatalf("two asks ran %d times, want 2", len(starts))
	}
	if apart := starts[1].Sub(starts[0]); apart < c.gap {
		t.Errorf("the second run came %s after the first; want at least the gap, %s", apart, c.gap)
	}
}

// TestSawEveryPodOnlyWhenEnded: the Jobs' pods a watch holds stand for a read of them at the end
// only when the watch saw every one made and every one ended: the pods' own stream may show a
// pod's end after the Job's, and a pod still running there would keep no exit code.
func TestSawEveryPodOnlyWhenEnded(t *testing.T) {
	since := time.Now()
	made := metav1.NewTime(since.Add(clockSkew + time.Second))
	kj := batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "a", CreationTimestamp: made}}
	pod := func(phase corev1.PodPhase) []corev1.Pod {
		return []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "a-x"}, Status: corev1.PodStatus{Phase: phase}}}
	}
	o := owned{jobs: map[string][]batchv1.Job{"a": {kj}}, ran: map[string][]corev1.Pod{"a": pod(corev1.PodFailed)}, since: since}
	if !o.sawEvery("a") || !allEnded(o.ran["a"]) {
		t.Error("a Job made after the watch began, its one pod seen failed: want its pods taken as read")
	}
	o.ran["a"] = pod(corev1.PodRunning)
	if allEnded(o.ran["a"]) {
		t.Error("a pod still running counts as ended")
	}
	early := owned{jobs: map[string][]batchv1.Job{"a": {{ObjectMeta: metav1.ObjectMeta{Name: "a", CreationTimestamp: metav1.NewTime(since)}}}},
		ran: map[string][]corev1.Pod{"a": pod(corev1.PodFailed)}, since: since}
	if early.sawEvery("a") {
		t.Error("a Job made before the watch began (within the clock's skew): want its pods read")
	}
}
