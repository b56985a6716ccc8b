package main

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kwatch "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tidegate/tidegate/shared/jobs"
)

// life is when the run's own watches first saw a job's Job made, its pod Running, then
// Succeeded or Failed, and its Job's Complete or Failed condition.
type life struct {
	created, running, ended, complete time.Time
}

// objectWatch keeps each job's life as watches of a namespace's Jobs and pods show it.
type objectWatch struct {
	mu    sync.Mutex
	lives map[string]life
}

// watchObjects watches the Jobs and pods carrying a job id in namespace until ctx ends, resuming
// when a watch drops.
func watchObjects(ctx context.Context, kubeconfig, namespace string) (*objectWatch, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", kubeconfig, err)
	}
	kc, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	w := &objectWatch{lives: map[string]life{}}
	pl, err := kc.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: jobs.IDKey})
	if err != nil {
		return nil, fmt.Errorf("listing %s's pods: %w", namespace, err)
	}
	jl, err := kc.BatchV1().Jobs(namespace).List(ctx, metav1.ListOptions{LabelSelector: jobs.IDKey})
	if err != nil {
		return nil, fmt.Errorf("listing %s's Jobs: %w", namespace, err)
	}
	go w.run(ctx, pl.ResourceVersion, func(ctx context.Context, o metav1.ListOptions) (kwatch.Interface, error) {
		return kc.CoreV1().Pods(namespace).Watch(ctx, o)
	})
	go w.run(ctx, jl.ResourceVersion, func(ctx context.Context, o metav1.ListOptions) (kwatch.Interface, error) {
		return kc.BatchV1().Jobs(namespace).Watch(ctx, o)
	})
	return w, nil
}

func (w *objectWatch) run(ctx context.Context, version string, watch func(context.Context, metav1.ListOptions) (kwatch.Interface, error)) {
	for ctx.Err() == nil {
		wi, err := watch(ctx, metav1.ListOptions{LabelSelector: jobs.IDKey, ResourceVersion: version})
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		for ev := range wi.ResultChan() {
			now := time.Now()
			switch o := ev.Object.(type) {
			case *corev1.Pod:
				version = o.ResourceVersion
				w.sawPod(o.Labels[jobs.IDKey], o.Status.Phase, now)
			case *batchv1.Job:
				version = o.ResourceVersion
				w.sawJob(o.Labels[jobs.IDKey], o.Status.Conditions, now)
			}
		}
		wi.Stop()
	}
}

func (w *objectWatch) sawPod(id string, phase corev1.PodPhase, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	l := w.lives[id]
	switch phase {
	case corev1.PodRunning:
		l.running = first(l.running, at)
	case corev1.PodSucceeded, corev1.PodFailed:
		l.ended = first(l.ended, at)
	}
	w.lives[id] = l
}

func (w *objectWatch) sawJob(id string, conds []batchv1.JobCondition, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	l := w.lives[id]
	l.created = first(l.created, at)
	for _, c := range conds {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			l.complete = first(l.complete, at)
		}
	}
	w.lives[id] = l
}

// first is seen, or at if nothing was seen yet.
func first(seen, at time.Time) time.Time {
	if seen.IsZero() {
		return at
	}
	return seen
}

// snapshot is a copy of the lives seen so far.
func (w *objectWatch) snapshot() map[string]life {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.lives)
}
