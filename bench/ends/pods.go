package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tidegate/tidegate/shared/jobs"
)

// life is when the run's own watch first saw a job's pod Running, and then Succeeded or Failed.
type life struct {
	running, ended time.Time
}

// podWatch keeps each job's pod's life as a watch of namespace shows it.
type podWatch struct {
	mu    sync.Mutex
	lives map[string]life
}

// watchPods watches the pods carrying a job id in namespace until ctx ends, resuming when the
// watch drops.
func watchPods(ctx context.Context, kubeconfig, namespace string) (*podWatch, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", kubeconfig, err)
	}
	kc, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	w := &podWatch{lives: map[string]life{}}
	l, err := kc.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: jobs.IDKey})
	if err != nil {
		return nil, fmt.Errorf("listing %s's pods: %w", namespace, err)
	}
	go w.run(ctx, kc, namespace, l.ResourceVersion)
	return w, nil
}

func (w *podWatch) run(ctx context.Context, kc kubernetes.Interface, namespace, version string) {
	for ctx.Err() == nil {
		wi, err := kc.CoreV1().Pods(namespace).Watch(ctx, metav1.ListOptions{LabelSelector: jobs.IDKey, ResourceVersion: version})
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		for ev := range wi.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				break
			}
			version = p.ResourceVersion
			w.saw(p.Labels[jobs.IDKey], p.Status.Phase, time.Now())
		}
		wi.Stop()
	}
}

func (w *podWatch) saw(id string, phase corev1.PodPhase, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	l := w.lives[id]
	switch phase {
	case corev1.PodRunning:
		if l.running.IsZero() {
			l.running = at
		}
	case corev1.PodSucceeded, corev1.PodFailed:
		if l.ended.IsZero() {
			l.ended = at
		}
	}
	w.lives[id] = l
}

func (w *podWatch) snapshot() map[string]life {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]life, len(w.lives))
	for id, l := range w.lives {
		out[id] = l
	}
	return out
}
