package jobobjects

import (
	"strconv"

	"github.com/tidegate/tidegate/shared/jobs"
)

// AttemptKey is the annotation, on every object of a retried job's attempt past the first and on
// its pod templates, saying which attempt made it: the beat reads only the current attempt's pods,
// and dispatch replaces what an earlier attempt left rather than take it for its own.
const AttemptKey = "tidegate.io/attempt"

// WatchKey labels the pods (and pod templates) of a job with a retry policy: the beat LISTs a
// Job's pods only when they carry it, to see a spot interruption or a node failure while the job
// runs, so a beat over jobs without a policy reads no more than before.
const WatchKey = "tidegate.io/retry"

// AttemptOf is the attempt an object's annotations say made it, from 1.
func AttemptOf(annotations map[string]string) int {
	n, err := strconv.Atoi(annotations[AttemptKey])
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// markAttempt adds to obj (an object or a pod template) job j's attempt, past the first, and the
// watch label for a job with a retry policy.
func markAttempt(obj map[string]any, j jobs.Job) {
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		return // mark made it
	}
	set := func(field, key, value string) {
		kv, _ := meta[field].(map[string]any)
		if kv == nil {
			kv = map[string]any{}
		}
		kv[key] = value
		meta[field] = kv
	}
	if j.AttemptOf() > 1 {
		set("annotations", AttemptKey, strconv.Itoa(j.AttemptOf()))
	}
	if j.Retry != nil {
		set("labels", WatchKey, "true")
	}
}
