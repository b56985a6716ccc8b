package jobobjects

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"

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
	if j.ArrayIndex != nil {
		env = append(env, map[string]any{"name": jobs.ArrayIndexEnv, "value": strconv.Itoa(*j.ArrayIndex)})
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
	for _, container := range containersOf(spec) {
		have, _ := container["env"].([]any)
		have = slices.DeleteFunc(slices.Clone(have), func(e any) bool {
			m, _ := e.(map[string]any)
			name, _ := m["name"].(string)
			return slices.Contains(names, name)
		})
		container["env"] = append(have, env...)
	}
}

// containersOf are pod spec spec's containers and init containers, those written as objects.
func containersOf(spec map[string]any) []map[string]any {
	var out []map[string]any
	for _, field := range []string{"containers", "initContainers"} {
		cs, _ := spec[field].([]any)
		for _, c := range cs {
			if container, ok := c.(map[string]any); ok {
				out = append(out, container)
			}
		}
	}
	return out
}

// withMemory raises the memory every container and init container of pod spec spec requests and
// is limited to by factor (jobs.Job.MemoryFactor; nothing at 1 or below): what the job's retry
// rules asked of the attempt after one OOMKilled. A quantity that does not parse, which the policy
// refused at submission, is left as it is.
func withMemory(spec map[string]any, factor float64) {
	if !(factor > 1) {
		return
	}
	for _, container := range containersOf(spec) {
		res, _ := container["resources"].(map[string]any)
		for _, kind := range []string{"requests", "limits"} {
			amounts, _ := res[kind].(map[string]any)
			v := fmt.Sprint(amounts["memory"]) // a string, or a number as YAML gives it
			q, err := resource.ParseQuantity(v)
			if amounts["memory"] == nil || err != nil {
				continue
			}
			raised := resource.NewQuantity(int64(math.Ceil(float64(q.Value())*factor)), resource.BinarySI)
			amounts["memory"] = raised.String()
		}
	}
}
