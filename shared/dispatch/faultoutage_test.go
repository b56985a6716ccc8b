package dispatch

import (
	"fmt"
	"strings"
	"time"

	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/reconcile"
)

// Region outages in the fault suite: us-west-2 has its API server out of reach of every worker
// twice, each time for outageRounds rounds, during which the clock moves past
// faultLostAfter, so the region is lost: its running jobs that ask (a share of the roaming ones,
// requeueOnLost) run again in the other region, their attempts fenced, and when it comes back the
// fenced attempts' objects go before it admits anything. Its Jobs meanwhile run on in the one
// sandbox cluster, as a cluster cut off from Tidegate's network would. (us-east-1 holds the jobs
// the suite interrupts as a spot reclaim would, and expects retried: an interruption the beat
// cannot see before the pod ends is no interruption, and those jobs would rightly just succeed.)
const (
	requeueOnLost  = 0.5
	faultLostAfter = 2 * time.Minute
	// outageFrom is the round the first outage starts at; outageGap the rounds between the end
	// of one and the start of the next.
	outageFrom, outageRounds, outageGap = 4, 8, 6
)

// outages is the suite's schedule of region outages.
type outages struct {
	f       *faults
	regions []string // the regions still to go out, in turn
	round   int      // rounds since the last outage started or ended
	current string   // the region out now, "" for none
}

func newOutages(f *faults) *outages {
	return &outages{f: f, regions: []string{west, west}, round: outageGap - outageFrom}
}

// step moves the schedule on a round: a region goes out, is lost (the clock moves past
// faultLostAfter) or comes back. It says whether outages are still to come.
func (o *outages) step(r rig) bool {
	o.round++
	switch {
	case o.current == "" && len(o.regions) > 0 && o.round >= outageGap:
		o.current, o.regions, o.round = o.regions[0], o.regions[1:], 0
		r.down.set(o.current, true)
		o.f.count("region outage (its API server out of reach, then lost)")
	case o.current != "" && o.round == outageRounds/2:
		r.clock.skip(faultLostAfter + time.Second) // a beat after this finds it lost
	case o.current != "" && o.round >= outageRounds:
		r.down.set(o.current, false)
		o.current, o.round = "", 0
	}
	return o.current != "" || len(o.regions) > 0
}

// outages is c seen through the rig's outages, when it has any.
func (r rig) outages(c *faultClusters) reconcile.Clusters {
	if r.down == nil {
		return c
	}
	return &outage{next: c, downSet: r.down}
}

// givenBack drops from a job's history each return to the queue from dispatching that is no
// attempt of its own (its cluster out of reach, or its name still held): the claim given back,
// with nothing applied and no event. What is left is the job's journey.
func givenBack(h []jobs.Transition) []jobs.Transition {
	var out []jobs.Transition
	for i, t := range h {
		if t.Status == jobs.StatusQueued && i > 0 && h[i-1].Status == jobs.StatusDispatching && !displacedBy(t) {
			out = out[:len(out)-1] // the dispatching entry before it goes too
			continue
		}
		out = append(out, t)
	}
	return out
}

// displacedBy says whether history entry t queued the job again for its region's sake.
func displacedBy(t jobs.Transition) bool {
	return t.Status == jobs.StatusQueued &&
		(strings.HasPrefix(t.Reason, jobs.ReasonRegionLost+": ") || strings.HasPrefix(t.Reason, jobs.ReasonRegionDrained+": "))
}

// verifyDisplaced judges a job queued again for its lost region (displaced times): one attempt
// per displacement and one more, each a dispatch, the last succeeded, in one Kubernetes Job (the
// fenced attempts' deleted), with one queued and one completed event and a job.retrying for each
// displacement; the job ran in one of its regions, and the history after its last displacement is
// a plain journey. A poisoned one (which a fault can displace while its claim is stranded) ends
// failed rejected_by_cluster instead, in no Kubernetes Job, with its job.failed event.
func verifyDisplaced(j jobs.Job, h []jobs.Transition, displaced int, poison bool, kube int, evs map[outbox.Type]int) (lost, dup []string) {
	end, endEvent := jobs.StatusSucceeded, outbox.JobCompleted
	if poison {
		end, endEvent = jobs.StatusFailed, outbox.JobFailed
	}
	switch {
	case !j.Status.Terminal():
		lost = append(lost, fmt.Sprintf("status %s in %q, history %+v", j.Status, j.Region, j.StatusHistory))
	case j.Status != end || poison != strings.HasPrefix(h[len(h)-1].Reason, jobs.ReasonRejectedByCluster):
		lost = append(lost, fmt.Sprintf("%s (%q), want %s", j.Status, h[len(h)-1].Reason, end))
	}
	if poison && kube > 0 {
		dup = append(dup, fmt.Sprintf("%d Kubernetes Jobs of a manifest the cluster refuses", kube))
	} else if !poison {
		lost, dup = oneKubeJob(kube, lost, dup)
	}
	terminal, last := 0, 0
	for i, t := range h {
		if t.Status.Terminal() {
			terminal++
		}
		if displacedBy(t) {
			last = i
		}
	}
	var after []jobs.Status
	for _, t := range h[last:] {
		after = append(after, t.Status)
	}
	if terminal > 1 || j.AttemptOf() != 1+displaced || hasRepeat(after) {
		dup = append(dup, fmt.Sprintf("%d terminal entries, attempt %d after %d displacements, history after the last %v", terminal, j.AttemptOf(), displaced, after))
	}
	want := map[outbox.Type]int{outbox.JobQueued: 1, outbox.JobRetrying: displaced, endEvent: 1}
	for typ, k := range want {
		switch {
		case evs[typ] > k:
			dup = append(dup, fmt.Sprintf("%d %s events, want %d", evs[typ], typ, k))
		case evs[typ] < k && j.Status == end:
			lost = append(lost, fmt.Sprintf("%d %s events, want %d", evs[typ], typ, k))
		}
	}
	if evs[outbox.JobDispatched] > 1+displaced || evs[outbox.JobStarted] > 1+displaced || evs[outbox.JobFailed] > 0 && !poison || evs[outbox.JobCompleted] > 0 && poison {
		dup = append(dup, fmt.Sprintf("events %v after %d displacements", evs, displaced))
	}
	return lost, dup
}

// countDisplaced counts the entries of history h that queued the job again for its region.
func countDisplaced(h []jobs.Transition) int {
	n := 0
	for _, t := range h {
		if displacedBy(t) {
			n++
		}
	}
	return n
}
