package policy

import (
	"encoding/json"
	"strconv"
	"testing"
)

func TestResultCountsGPUs(t *testing.T) {
	c, err := NewChecker(Config{})
	if err != nil {
		t.Fatal(err)
	}
	pod := func(gpus int) map[string]any {
		return map[string]any{
			"restartPolicy":   "Never",
			"securityContext": map[string]any{"runAsNonRoot": true, "seccompProfile": map[string]any{"type": "RuntimeDefault"}},
			"containers": []any{map[string]any{"name": "c", "image": "busybox",
				"resources":       map[string]any{"limits": map[string]any{"nvidia.com/gpu": json.Number(strconv.Itoa(gpus))}},
				"securityContext": map[string]any{"allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []any{"ALL"}}}}},
		}
	}
	job := map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "j"},
		"spec": map[string]any{"parallelism": json.Number("4"), "template": map[string]any{"spec": pod(2)}}}
	bare := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p"}, "spec": pod(1)}
	res := c.Check(Request{Manifests: []map[string]any{job, bare}, Namespaces: []string{"a"}, DefaultNamespace: "a"})
	if !res.Allowed() || res.GPUs != 4*2+1 || res.Pods != 2 {
		t.Errorf("Check = allowed %v (%v), GPUs %d, Pods %d; want allowed with 9 GPUs (4 pods of 2, and 1) from 2 manifests", res.Allowed(), res.Violations, res.GPUs, res.Pods)
	}
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}}
	if res := c.Check(Request{Manifests: []map[string]any{cm}, Namespaces: []string{"a"}, DefaultNamespace: "a"}); res.Pods != 0 || res.GPUs != 0 {
		t.Errorf("a ConfigMap alone: Pods %d, GPUs %d; want none", res.Pods, res.GPUs)
	}
}
