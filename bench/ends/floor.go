package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kwatch "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/tidegate/tidegate/shared/dev/sandbox"
)

// floorRun is what the floor's run saw: how long its n Jobs took, from the first create to the
// last pod's end, and how long each slot stood empty between a pod's end and the next pod's run.
type floorRun struct {
	took time.Duration
	idle []time.Duration
	cpu  map[string]time.Duration
}

// floorCreators are the floor's creates in flight at once: a dispatch drain's own eight, and more,
// so that it is the sandbox that bounds the floor, not the loop.
const floorCreators = 32

// floor is what the sandbox itself allows, with no Tidegate: a loop that keeps capacity Jobs of
// the run's pod (one pod that kwok ends run after it runs) going in a namespace of its own,
// creating the next as soon as its watch shows a pod of the ones before it end, until n pods have
// ended. Its client has no rate limit of its own.
func floor(ctx context.Context, kubeconfig string, n, capacity int, run time.Duration) (floorRun, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return floorRun{}, fmt.Errorf("reading %s: %w", kubeconfig, err)
	}
	rc.QPS, rc.Burst = -1, 0 // no client-side limit: the floor is the sandbox's
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	kc, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return floorRun{}, err
	}
	ns := fmt.Sprintf("ends-floor-%s", runLabel)
	if err := sandbox.EnsureNamespace(ctx, kubeconfig, ns); err != nil {
		return floorRun{}, err
	}
	defer func() {
		// Its Jobs and pods go with it, in the background.
		_ = kc.CoreV1().Namespaces().Delete(context.WithoutCancel(ctx), ns, metav1.DeleteOptions{})
	}()
	pods, err := kc.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: "floor=" + runLabel})
	if err != nil {
		return floorRun{}, fmt.Errorf("watching the floor's pods: %w", err)
	}
	defer pods.Stop()

	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	errs := make(chan error, floorCreators)
	slots := make(chan struct{}, capacity)
	for range capacity {
		slots <- struct{}{}
	}
	start := time.Now()
	for range floorCreators {
		wg.Go(func() {
			for i := range next {
				select {
				case <-slots:
				case <-ctx.Done():
					return
				}
				if _, err := kc.BatchV1().Jobs(ns).Create(ctx, floorJob(i, run), metav1.CreateOptions{}); err != nil {
					errs <- fmt.Errorf("creating the floor's Job %d: %w", i, err)
					return
				}
			}
		})
	}
	defer wg.Wait()
	defer cancel() // runs before the Wait: a creator waiting for room stops
	return awaitEnds(ctx, pods.ResultChan(), errs, slots, n, capacity, start)
}

// awaitEnds follows the floor's pods until n have ended, giving each end's room back to slots,
// and answers how long that took from start and how long each slot stood empty.
func awaitEnds(ctx context.Context, events <-chan kwatch.Event, errs <-chan error, slots chan<- struct{}, n, capacity int, start time.Time) (floorRun, error) {
	var ends, starts []time.Time
	ended, running := map[string]bool{}, map[string]bool{}
	for len(ends) < n {
		select {
		case err := <-errs:
			return floorRun{}, err
		case <-ctx.Done():
			return floorRun{}, ctx.Err()
		case ev, ok := <-events:
			if !ok {
				return floorRun{}, fmt.Errorf("the floor's watch of its pods ended after %d of %d ends", len(ends), n)
			}
			p, isPod := ev.Object.(*corev1.Pod)
			if !isPod {
				continue
			}
			now := time.Now()
			switch p.Status.Phase {
			case corev1.PodRunning:
				if !running[p.Name] {
					running[p.Name] = true
					starts = append(starts, now)
				}
			case corev1.PodSucceeded, corev1.PodFailed:
				if !ended[p.Name] {
					ended[p.Name] = true
					ends = append(ends, now)
					slots <- struct{}{} // its room is free: the next Job goes in
				}
			}
		}
	}
	out := floorRun{took: time.Since(start)}
	slices.SortFunc(starts, time.Time.Compare)
	for k := 0; k < len(ends) && capacity+k < len(starts); k++ {
		out.idle = append(out.idle, starts[capacity+k].Sub(ends[k]))
	}
	return out, nil
}

// floorJob is the floor's i-th Job: the pod the run submits through Tidegate, whose end kwok
// stages run after it runs.
func floorJob(i int, run time.Duration) *batchv1.Job {
	labels := map[string]string{"floor": runLabel}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("floor-%d", i), Labels: labels},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"pod-complete.stage.kwok.x-k8s.io/delay": run.String()}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "main", Image: "busybox:1.36", Command: []string{"sleep", "1"}}},
				},
			},
		},
	}
}
