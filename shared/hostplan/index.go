package hostplan

// What index.next holds for a pod that is not a wanted app's.
const (
	lastPod     = -1 // the last pod of its app
	foreignPod  = -2 // without our labels: never touched
	unwantedPod = -3 // ours, of an app not wanted: stopped
)

// index is the pods grouped by the wanted app they belong to, built in one pass over the apps and
// one over the pods, so that no app reads another's pods. Each app's pods are a list threaded
// through next in the pods' own order: for k := first[i]; k >= 0; k = next[k].
type index struct {
	// first and last are each app's first and last pod, lastPod when it has none.
	first, last []int32
	// next is, for each pod of a wanted app, the next pod of that app or lastPod; for any other
	// pod, foreignPod or unwantedPod.
	next []int32
	// duplicate marks the apps whose key an earlier app already has; nil when there are none.
	duplicate []bool
	// pods counts the wanted apps' pods, unwanted the pods of ours whose app is not wanted.
	pods, unwanted int
}

func group(apps []App, containers []Container) index {
	slot := make(map[string]int32, len(apps))
	var duplicate []bool
	for i := range apps {
		if _, seen := slot[apps[i].Key]; seen {
			if duplicate == nil {
				duplicate = make([]bool, len(apps))
			}
			duplicate[i] = true
			continue
		}
		slot[apps[i].Key] = int32(i)
	}

	ends := make([]int32, 2*len(apps))
	for i := range ends {
		ends[i] = lastPod
	}
	ix := index{first: ends[:len(apps)], last: ends[len(apps):], next: make([]int32, len(containers)), duplicate: duplicate}
	for i := range containers {
		c := &containers[i]
		if !c.Ours {
			ix.next[i] = foreignPod
			continue
		}
		s, wanted := slot[c.App]
		if !wanted {
			ix.next[i] = unwantedPod
			ix.unwanted++
			continue
		}
		ix.next[i] = lastPod
		if l := ix.last[s]; l != lastPod {
			ix.next[l] = int32(i)
		} else {
			ix.first[s] = int32(i)
		}
		ix.last[s] = int32(i)
		ix.pods++
	}
	return ix
}

// isDuplicate says apps[i] has a key an earlier app already has, and is ignored.
func (ix *index) isDuplicate(i int) bool { return ix.duplicate != nil && ix.duplicate[i] }
