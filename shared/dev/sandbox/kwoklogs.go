package sandbox

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

// PodLogs is kwok's namespaced Logs resource: one, named for a pod, makes `kubectl logs` of that
// pod's containers read the files it names rather than FakePodLog. The sandbox serves it from
// the cluster (kwok's --enable-crds=Logs), so a pod whose process really runs on this machine
// (shared/dev/hostrun) shows that process's output through the apiserver, as a kubelet would.
var PodLogs = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "logs"}

// The CRD establishes in well under a second; the margin is for a loaded machine.
const crdTimeout = 30 * time.Second

// logsCRD is kwok v0.8.0's kustomize/crd/bases/kwok.x-k8s.io_logs.yaml cut to what kwok reads:
// kwok parses the objects itself, so the schema keeps every field.
func logsCRD() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "logs.kwok.x-k8s.io"},
		"spec": map[string]any{
			"group": PodLogs.Group,
			"names": map[string]any{"kind": "Logs", "listKind": "LogsList", "plural": "logs", "singular": "logs"},
			"scope": "Namespaced",
			"versions": []any{map[string]any{
				"name": PodLogs.Version, "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object", "x-kubernetes-preserve-unknown-fields": true,
				}},
			}},
		},
	}}
}

// installLogsCRD creates kwok's Logs CRD and waits until the apiserver serves it, so kwok, started
// next, finds it to watch.
func installLogsCRD(ctx context.Context, kubeconfig string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("reading kubeconfig %s: %w", kubeconfig, err)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	crds := dc.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	if _, err := crds.Create(ctx, logsCRD(), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating kwok's Logs CRD: %w", err)
	}
	err = wait.PollUntilContextTimeout(ctx, kubePollInterval, crdTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := dc.Resource(PodLogs).List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for kwok's Logs CRD to be served: %w", err)
	}
	return nil
}
