package jobobjects

import (
	"time"

	"github.com/tidegate/tidegate/shared/manifest"
)

// TTLBeats is how many beats a finished Job must outlast: the cluster deletes a finished Job, and
// its pods, ttlSecondsAfterFinished after it ends, and one gone before a beat has seen its end
// loses its result (the beat records it failed, its objects vanished), so the TTL must outlast a
// late or failed beat or two.
const TTLBeats = 5

// MinJobTTL is the least ttlSecondsAfterFinished a Job Tidegate creates in AWS may have: TTLBeats
// of its beat (one a minute, each up to 55 s). config.MinJobTTL, the floor of
// TIDEGATE_JOB_TTL_SECONDS, is the same. The dev stack, whose beat is seconds, may set a lower
// TTL (TTLBeats of its beat), and that TTL is then its own floor.
const MinJobTTL = TTLBeats * time.Minute

// WithJobTTL answers manifests with ttlSecondsAfterFinished on each batch/v1 Job and on each
// batch/v1 CronJob's jobTemplate: ttl where the manifest sets none (none when ttl is 0), and
// the floor where it sets less (MinJobTTL, or ttl when that is lower: a configuration made it safe
// for a faster beat), a tenant's own shorter TTL raised rather than refused (a few more
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
	if ttl > 0 && ttl < MinJobTTL {
		floor = int64(ttl / time.Second)
	}
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
