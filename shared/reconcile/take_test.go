package reconcile

import (
	"context"
	"errors"
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kwatch "k8s.io/apimachinery/pkg/watch"

	"github.com/tidegate/tidegate/shared/jobs"
)

func labelledJob(ns, name, id string, active int32) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{jobs.IDKey: id}}, Status: batchv1.JobStatus{Active: active}}
}

// takeInto is a follower holding o, as a watch's is before its first event.
func takeInto(o owned) *follower {
	return &follower{w: o, mark: map[string]mark{}, wake: make(chan struct{}, 1)}
}

// TestTakeKeepsObjectsCurrent: the events waiting are taken together into the objects the watch
// follows jobs with: a Job replaced by its newer self, added, deleted; a pod added; an object
// without a job id or a bookmark changes nothing. Each job moved is due once, in order.
func TestTakeKeepsObjectsCurrent(t *testing.T) {
	o := owned{
		jobs: map[string][]batchv1.Job{"a": {*labelledJob("ns", "a", "a", 1)}, "b": {*labelledJob("ns", "b", "b", 1)}},
		pods: map[string][]corev1.Pod{}, watched: map[string][]corev1.Pod{}, ran: map[string][]corev1.Pod{},
	}
	jobEvents, podEvents, watchedEvents, ranEvents := make(chan kwatch.Event, 10), make(chan kwatch.Event, 10), make(chan kwatch.Event, 10), make(chan kwatch.Event, 10)
	jobEvents <- kwatch.Event{Type: kwatch.Modified, Object: labelledJob("ns", "a", "a", 0)}
	jobEvents <- kwatch.Event{Type: kwatch.Added, Object: labelledJob("ns", "c", "c", 1)}
	jobEvents <- kwatch.Event{Type: kwatch.Deleted, Object: labelledJob("ns", "b", "b", 1)}
	jobEvents <- kwatch.Event{Type: kwatch.Modified, Object: labelledJob("ns", "a", "a", 0)}
	jobEvents <- kwatch.Event{Type: kwatch.Added, Object: labelledJob("ns", "other", "", 1)}
	jobEvents <- kwatch.Event{Type: kwatch.Bookmark, Object: labelledJob("", "", "", 0)}
	podEvents <- kwatch.Event{Type: kwatch.Added, Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: map[string]string{jobs.IDKey: "d"}}}}
	watchedEvents <- kwatch.Event{Type: kwatch.Modified, Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a-x", Labels: map[string]string{jobs.IDKey: "a"}}}}
	ranEvents <- kwatch.Event{Type: kwatch.Modified, Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c-y", Labels: map[string]string{jobs.IDKey: "c"}}}}

	f := takeInto(o)
	for len(jobEvents)+len(podEvents)+len(watchedEvents)+len(ranEvents) > 0 {
		if err := f.take(context.Background(), [watches]<-chan kwatch.Event{jobEvents, podEvents, watchedEvents, ranEvents}); err != nil {
			t.Fatalf("take: %v", err)
		}
	}
	if len(f.wake) != 1 {
		t.Error("taking events left the follower asleep")
	}
	moved := slices.Clone(f.due)
	slices.Sort(moved)
	if want := []string{"a", "b", "c", "d"}; !slices.Equal(moved, want) {
		t.Errorf("take named jobs %v, want %v", moved, want)
	}
	if got := o.jobs["a"]; len(got) != 1 || got[0].Status.Active != 0 {
		t.Errorf("job a's Jobs are %+v, want its one Job, no longer active", got)
	}
	if len(o.jobs["b"]) != 0 || len(o.jobs["c"]) != 1 || len(o.pods["d"]) != 1 || o.has("") {
		t.Errorf("after the events: b %d Jobs (want 0), c %d (want 1), d %d pods (want 1), unlabelled kept %v",
			len(o.jobs["b"]), len(o.jobs["c"]), len(o.pods["d"]), o.has(""))
	}
	if len(o.watched["a"]) != 1 || len(o.pods["a"]) != 0 {
		t.Errorf("a watched pod of job a went to its watched pods %d times and its bare pods %d; want 1 and 0", len(o.watched["a"]), len(o.pods["a"]))
	}
	if len(o.ran["c"]) != 1 || len(o.pods["c"]) != 0 {
		t.Errorf("a Job's pod of job c went to its Jobs' pods %d times and its bare pods %d; want 1 and 0", len(o.ran["c"]), len(o.pods["c"]))
	}
}

// TestTakeReportsADroppedWatch: a watch whose channel closes, or which sends an error (410
// Expired), is dropped, and the jobs the events before it moved are still due.
func TestTakeReportsADroppedWatch(t *testing.T) {
	expired := &apierrors.NewResourceExpired("too old resource version").ErrStatus
	for name, last := range map[string]*kwatch.Event{
		"closed":      nil,
		"410 Expired": {Type: kwatch.Error, Object: expired},
	} {
		o := owned{jobs: map[string][]batchv1.Job{}, pods: map[string][]corev1.Pod{}}
		jobEvents, podEvents, watchedEvents, ranEvents := make(chan kwatch.Event, 2), make(chan kwatch.Event), make(chan kwatch.Event), make(chan kwatch.Event)
		jobEvents <- kwatch.Event{Type: kwatch.Added, Object: labelledJob("ns", "a", "a", 1)}
		if last == nil {
			close(jobEvents)
		} else {
			jobEvents <- *last
		}
		f := takeInto(o)
		err := f.take(context.Background(), [watches]<-chan kwatch.Event{jobEvents, podEvents, watchedEvents, ranEvents})
		if !errors.Is(err, errDropped) || !slices.Equal(f.due, []string{"a"}) {
			t.Errorf("%s: take = %v with %v due; want errDropped with [a]", name, err, f.due)
		}
		if last != nil && !apierrors.IsResourceExpired(err) {
			t.Errorf("%s: take's error %v does not say the resourceVersion expired", name, err)
		}
	}
}
