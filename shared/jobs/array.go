package jobs

import (
	"fmt"
	"strconv"
	"time"
)

// Array is an array job's shape: Size children of one manifest, at most Parallelism of them
// let into the queue at once. The parent runs nothing itself; it summarises its children and
// ends when they all have: succeeded when every one did, failed when any failed, cancelled when
// cancelled.
//
// Child i (from 0) is let into the queue when the array starts, for i below Parallelism, or when
// child i − Parallelism ends: each end passes its slot on, so at most Parallelism children are
// ever queued or running at once, and no count needs keeping to say so.
type Array struct {
	Size        int `json:"size" dynamodbav:"size"`
	Parallelism int `json:"parallelism,omitempty" dynamodbav:"parallelism,omitempty"`
}

// Bounds of an array, as AWS Batch's: 2 to 10,000 children.
const (
	MinArraySize = 2
	MaxArraySize = 10_000
)

// ReasonWaitingForArray is the pending reason of a child its array has not let into the queue
// yet (its parent waits for its dependencies, or its slot is not free yet).
const ReasonWaitingForArray = "waiting_for_array"

// ArrayIndexEnv is the variable every container of a child gets: its index in its array, from 0.
const ArrayIndexEnv = "TIDEGATE_ARRAY_INDEX"

// CheckArray lists what is wrong with an array as submitted, and answers it with Parallelism
// filled in (the size: all at once).
func CheckArray(a *Array) (*Array, [][2]string) {
	if a == nil {
		return nil, nil
	}
	var bad [][2]string
	if a.Size < MinArraySize || a.Size > MaxArraySize {
		bad = append(bad, [2]string{"array.size", fmt.Sprintf("must be a whole number from %d to %d: how many children to run", MinArraySize, MaxArraySize)})
	}
	out := *a
	switch {
	case a.Parallelism == 0:
		out.Parallelism = a.Size
	case a.Parallelism < 1 || a.Parallelism > a.Size:
		bad = append(bad, [2]string{"array.parallelism", "must be a whole number from 1 to the array's size: how many children may be queued or running at once"})
	}
	return &out, bad
}

// ChildID is the id of child i of array job parent.
func ChildID(parent string, i int) string { return fmt.Sprintf("%s-%d", parent, i) }

// ChildName is the name child i's objects take for an object of parent's named name: the index
// after it, so that the children's objects stand side by side in one namespace.
func ChildName(name string, i int) string { return name + "-" + strconv.Itoa(i) }

// Children are the children of array job parent, as stored: each blocked on its parent (waiting
// for its slot), with the parent's settings and manifests, every object named for its index
// (ChildName).
func Children(parent Job) []Job {
	out := make([]Job, parent.Array.Size)
	for i := range out {
		c := parent
		c.ID, c.Parent, c.ArrayIndex = ChildID(parent.ID, i), parent.ID, &i
		c.Array, c.DependsOn, c.HasDependents, c.Step = nil, nil, false, ""
		c.Name = ChildName(parent.Name, i)
		c.Status, c.WaitingOn, c.PendingReason = StatusBlocked, []string{parent.ID}, ReasonWaitingForArray
		c.StatusHistory = []Transition{{Status: StatusBlocked, At: parent.CreatedAt}}
		c.Manifests = ChildManifests(parent.Manifests, i)
		c.CheckpointURI = ""
		out[i] = c
	}
	return out
}

// ChildManifests are manifests with each object's name taken for child i.
func ChildManifests(ms []map[string]any, i int) []map[string]any {
	out := make([]map[string]any, len(ms))
	for k, m := range ms {
		c := make(map[string]any, len(m))
		for key, v := range m {
			c[key] = v
		}
		if meta, ok := m["metadata"].(map[string]any); ok {
			cm := make(map[string]any, len(meta))
			for key, v := range meta {
				cm[key] = v
			}
			if name, ok := meta["name"].(string); ok && name != "" {
				cm["name"] = ChildName(name, i)
			}
			c["metadata"] = cm
		}
		out[k] = c
	}
	return out
}

// ArrayStatus is an array's children counted by status: those not let into the queue yet
// (blocked), those let in and not ended (active: queued, dispatching, pending or running), and
// those ended.
type ArrayStatus struct {
	Blocked   int `json:"blocked"`
	Active    int `json:"active"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
	Cancelled int `json:"cancelled"`
}

// ArrayEnds are an array's children's ends counted so far.
type ArrayEnds struct {
	Succeeded int `dynamodbav:"succeeded"`
	Failed    int `dynamodbav:"failed"`
	Cancelled int `dynamodbav:"cancelled"`
}

// Ended is how many children have ended.
func (e ArrayEnds) Ended() int { return e.Succeeded + e.Failed + e.Cancelled }

// StatusOf is array parent's children counted by status from their ends: the children let in
// are the first Parallelism and one more for each end (the slot rule), none while the parent is
// blocked; once it ended, every child not counted ended with it, cancelled.
func StatusOf(parent Job, ends ArrayEnds) ArrayStatus {
	a := parent.Array
	if parent.Status.Terminal() {
		return ArrayStatus{Succeeded: ends.Succeeded, Failed: ends.Failed, Cancelled: a.Size - ends.Succeeded - ends.Failed}
	}
	let := min(a.Size, a.Parallelism+ends.Ended())
	if parent.Status == StatusBlocked {
		let = 0
	}
	return ArrayStatus{
		Blocked: a.Size - max(let, ends.Ended()), Active: max(0, let-ends.Ended()),
		Succeeded: ends.Succeeded, Failed: ends.Failed, Cancelled: ends.Cancelled,
	}
}

// ArrayEnd is the status an array whose children have all ended comes to.
func ArrayEnd(ends ArrayEnds) (Status, string) {
	if ends.Failed+ends.Cancelled == 0 {
		return StatusSucceeded, fmt.Sprintf("all %d children succeeded", ends.Succeeded)
	}
	return StatusFailed, fmt.Sprintf("%d of %d children failed, %d cancelled", ends.Failed, ends.Ended(), ends.Cancelled)
}

// Started is array or workflow parent p moved to running: its children may be let in.
func Started(p Job, at time.Time) (Job, Change, error) {
	why := fmt.Sprintf("workflow of %d jobs", p.GroupSize())
	if p.Array != nil {
		why = fmt.Sprintf("array of %d, %d at once", p.Array.Size, p.Array.Parallelism)
	}
	return Move(p, StatusRunning, why, at)
}

// ChildByChild makes each of children wait, besides its parent, for its counterpart in each array
// byChild names (ModeNToN): child i for child i.
func ChildByChild(children []Job, byChild []Dependency) []Job {
	if len(byChild) == 0 {
		return children
	}
	for i := range children {
		c := &children[i]
		for _, d := range byChild {
			other := ChildID(d.Job, *c.ArrayIndex)
			c.DependsOn = append(c.DependsOn, Dependency{Job: other, On: d.On})
			c.WaitingOn = append(c.WaitingOn, other)
		}
	}
	return children
}
