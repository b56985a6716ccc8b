package jobobjects

import (
	"slices"
	"strconv"

	"github.com/tidegate/tidegate/shared/jobs"
)

// The contract every container of a job's pods can code to, in its environment: which job and
// attempt it is, how often the job was preempted, and where its checkpoints go. The same SIGTERM,
// and the pod's grace period, comes before a spot interruption, a preemption and a cancel; a job
// that writes a checkpoint under TIDEGATE_CHECKPOINT_URI then, and reads it when it starts, loses
// no more than the time since its last one.
const (
	EnvJobID         = "TIDEGATE_JOB_ID"
	EnvAttempt       = "TIDEGATE_ATTEMPT"
	EnvPreemptions   = "TIDEGATE_PREEMPTIONS"
	EnvCheckpointURI = "TIDEGATE_CHECKPOINT_URI"
)

// contractEnv are job j's contract variables, TIDEGATE_CHECKPOINT_URI only where j has a prefix.
func contractEnv(j jobs.Job) []any {
	env := []any{
		map[string]any{"name": EnvJobID, "value": j.ID},
		map[string]any{"name": EnvAttempt, "value": strconv.Itoa(j.AttemptOf())},
		map[string]any{"name": EnvPreemptions, "value": strconv.Itoa(j.Preemptions)},
	}
	if j.CheckpointURI != "" {
		env = append(env, map[string]any{"name": EnvCheckpointURI, "value": j.CheckpointURI})
	}
	return env
}

// withContract sets the contract's variables on every container and init container of pod spec
// spec, in place of any the manifest gave the same names: what the job reads there is always
// Tidegate's.
func withContract(spec map[string]any, j jobs.Job) {
	env := contractEnv(j)
	names := make([]string, len(env))
	for i, e := range env {
		names[i] = e.(map[string]any)["name"].(string)
	}
	for _, field := range []string{"containers", "initContainers"} {
		cs, _ := spec[field].([]any)
		for _, c := range cs {
			container, ok := c.(map[string]any)
			if !ok {
				continue
			}
			have, _ := container["env"].([]any)
			have = slices.DeleteFunc(slices.Clone(have), func(e any) bool {
				m, _ := e.(map[string]any)
				name, _ := m["name"].(string)
				return slices.Contains(names, name)
			})
			container["env"] = append(have, env...)
		}
	}
}
