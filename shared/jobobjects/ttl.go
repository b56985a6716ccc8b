package jobobjects

import (
	"time"

	"github.com/tidegate/tidegate/shared/manifest"
)

// MinJobTTL is the least ttlSecondsAfterFinished a Job Tidegate creates may have: five beats (one
// a minute, each up to 55 s). The cluster deletes a finished Job, and its pods, that long after it
// ends; one gone before a beat has seen its end loses its result (the beat records it failed, its
// objects vanished), so the TTL must outlast a late or failed beat or two. config.MinJobTTL, the
// floor of TIDEGATE_JOB_TTL_SECONDS, is the same.
const MinJobTTL = 5 * time.Minute

// WithJobTTL answers manifests with ttlSecondsAfterFinished on each batch/v1 Job and on each
// batch/v1 CronJob's jobTemplate: ttl where the manifest sets none (none when ttl is 0), and
// MinJobTTL where it sets less, a tenant's own shorter TTL raised rather than refused (a few more
// minutes of a finished Job cost the cluster little; refusing would turn away manifests written
// for clusters without Tidegate's beat). A longer one is kept. manifests are left as they are:
// what changes is copied.
func WithJobTTL(manifests []map[string]any, ttl time.Duration) []map[string]any {
	out := make([]map[string]any, len(manifests))
	for i, m := range manifests {
		out[i] = m
		if str(m["apiVersion"]) != "batch/v1" {
			continue
		}
		var path []string
		switch str(m["kind"]) {
		case "Job":
			path = []string{"spec"}
		case "CronJob":
			path = []string{"spec", "jobTemplate", "spec"}
		default:
			continue
		}
		c := deepCopy(m)
		if spec := manifest.At(c, path...); spec != nil && setTTL(spec, ttl) {
			out[i] = c
		}
	}
	return out
}

// setTTL sets spec's ttlSecondsAfterFinished as WithJobTTL says, and reports whether it changed.
// A value that is not a whole number is left for the API server to refuse.
func setTTL(spec map[string]any, ttl time.Duration) bool {
	floor := int64(MinJobTTL / time.Second)
	v, set := spec["ttlSecondsAfterFinished"]
	if !set || v == nil {
		if ttl <= 0 {
			return false
		}
		spec["ttlSecondsAfterFinished"] = max(int64(ttl/time.Second), floor)
		return true
	}
	n, ok := manifest.WholeNumber(v)
	if !ok || n >= floor {
		return false
	}
	spec["ttlSecondsAfterFinished"] = floor
	return true
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
