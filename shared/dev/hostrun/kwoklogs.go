package hostrun

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tidegate/tidegate/shared/dev/sandbox"
)

// logsObject is kwok's Logs for rn's pod: each container's log file, so `kubectl logs` (and
// the apps logs route, which reads the same way) shows the process's output. The pod owns it, so
// the garbage collector removes it with the pod.
func logsObject(rn *run) *unstructured.Unstructured {
	p := rn.pod
	var logs []any
	for _, c := range p.Spec.InitContainers {
		logs = append(logs, map[string]any{"containers": []any{c.Name}, "logsFile": logFile(rn.dir, c.Name)})
	}
	for _, c := range p.Spec.Containers {
		logs = append(logs, map[string]any{"containers": []any{c.Name}, "logsFile": logFile(rn.dir, c.Name)})
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": sandbox.PodLogs.GroupVersion().String(),
		"kind":       "Logs",
		"metadata": map[string]any{
			"name": p.Name, "namespace": p.Namespace,
			"ownerReferences": []any{map[string]any{
				"apiVersion": "v1", "kind": "Pod", "name": p.Name, "uid": string(p.UID),
			}},
		},
		"spec": map[string]any{"logs": logs},
	}}
}

// serveLogs creates rn's pod's Logs, or points the one a previous pod of the same name left at
// this pod's files.
func (r *Runner) serveLogs(ctx context.Context, rn *run) error {
	obj := logsObject(rn)
	res := r.dc.Resource(sandbox.PodLogs).Namespace(rn.pod.Namespace)
	_, err := res.Create(ctx, obj, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		var old *unstructured.Unstructured
		if old, err = res.Get(ctx, rn.pod.Name, metav1.GetOptions{}); err == nil {
			obj.SetResourceVersion(old.GetResourceVersion())
			_, err = res.Update(ctx, obj, metav1.UpdateOptions{})
		}
	}
	if err != nil {
		return fmt.Errorf("serving pod %s's logs through kwok: %w", rn.pod.Name, err)
	}
	return nil
}
