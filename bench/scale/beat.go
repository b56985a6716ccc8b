package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dispatch"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/reconcile"
	"github.com/tidegate/tidegate/shared/wake"
)

// settleBeats is how many beats may pass before the cluster and the records agree after m jobs
// are dispatched (pods starting, the first beat of an instance reading every record).
const settleBeats = 6

// runningWait bounds the wait for m pods to run, and for the changed ones to complete.
const runningWait = 15 * time.Minute

// beats dispatches m jobs in east (through a drain, as in production; not measured), waits
// until their pods run and the beat has recorded them, then measures a beat where nothing
// changed and one where 1% of the jobs completed.
func (e *env) beats(ctx context.Context, m int) ([]row, error) {
	name := fmt.Sprintf("a%d", m)
	t, drop, err := e.tables(ctx, name)
	if err != nil {
		return nil, err
	}
	defer drop()
	// The sandbox's own nodes take 2,000 pods and are its tests'; these add room for the m.
	// Deferred before the namespace's deletion, they go after it, so the pods are deleted as a
	// tenant's would be.
	removeNodes, err := sandbox.AddNodes(ctx, e.kc, e.prefix+"-"+name, m)
	if err != nil {
		return nil, err
	}
	defer removeNodes()
	ns, dropNS, err := e.namespace(ctx, name)
	if err != nil {
		return nil, err
	}
	defer dropNS()
	store := dynamo.NewJobStore(e.db, t)
	js := make([]jobs.Job, m)
	for i := range js {
		n := fmt.Sprintf("a-%06d", i)
		js[i] = jobs.New("job-"+n, fmt.Sprintf("tenant-%02d", i%tenants), ns, east, 50, nil, []map[string]any{batchJob(ns, n, "1h")}, time.Now())
	}
	if err := load(ctx, store, js); err != nil {
		return nil, err
	}
	leases := dynamo.NewLeaseStore(e.db, t.Control)
	d := &dispatch.Handler{
		Regions: map[string]string{east: "sandbox"}, Capacity: func(string) int { return m },
		Store: store, Leases: leases, Prices: noPrices{}, Clusters: e.clusters, Log: e.log, Now: time.Now,
	}
	progress("dispatching %d jobs", m)
	if err := d.Drain(ctx, east); err != nil {
		return nil, err
	}
	q, err := e.queue.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(e.prefix + "-" + name)})
	if err != nil {
		return nil, err
	}
	defer e.queue.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: q.QueueUrl})
	b := &reconcile.Handler{
		Regions: []string{east}, Queues: store, Ringer: wake.New(e.queue, *q.QueueUrl), Jobs: store,
		Clusters: e.clusters, Leases: leases, Log: e.log, Now: time.Now,
	}
	if err := e.waitPods(ctx, ns, m, corev1.PodRunning); err != nil {
		return nil, err
	}
	beat := func() error { return b.HandleBeat(ctx, events.EventBridgeEvent{ID: "scale"}) }
	if err := e.settle(ctx, beat); err != nil {
		return nil, err
	}
	var rows []row
	r, err := e.measure("beat: nothing changed", "active", m, beat)
	rows = append(rows, r)
	if err != nil {
		return rows, err
	}
	changed := max(m/100, 1)
	if err := e.complete(ctx, ns, changed); err != nil {
		return rows, err
	}
	if err := e.waitPods(ctx, ns, changed, corev1.PodSucceeded); err != nil {
		return rows, err
	}
	r, err = e.measure("beat: 1% of jobs completed", "active", m, beat)
	return append(rows, r), err
}

// settle beats until a beat records nothing (its only writes its lease's): every running job
// recorded running.
func (e *env) settle(ctx context.Context, beat func() error) error {
	for range settleBeats {
		e.counter.Reset()
		if err := beat(); err != nil {
			return err
		}
		recorded := 0
		for k, t := range e.counter.Calls() {
			if k.Operation == "TransactWriteItems" || k.Operation == "UpdateItem" {
				recorded += t.Calls
			}
		}
		if recorded == 0 {
			return nil
		}
		time.Sleep(time.Second)
	}
	return fmt.Errorf("the beat still wrote after %d beats", settleBeats)
}

// waitPods waits until n pods of ns are in phase, printing how many are every half minute. A
// failed LIST is tried again until the deadline: a busy apiserver (a namespace of thousands of
// pods being deleted) can time one out.
func (e *env) waitPods(ctx context.Context, ns string, n int, phase corev1.PodPhase) error {
	deadline := time.Now().Add(runningWait)
	told := time.Now()
	for {
		got := 0
		l, err := e.kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err == nil {
			for _, p := range l.Items {
				if p.Status.Phase == phase {
					got++
				}
			}
		}
		if err == nil && got >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.Join(err, fmt.Errorf("timed out waiting for pods to be %s: %d of %d", phase, got, n))
		}
		if time.Since(told) > 30*time.Second {
			progress("%d of %d pods %s", got, n, phase)
			told = time.Now()
		}
		time.Sleep(2 * time.Second)
	}
}

// complete has the sandbox end n running pods of ns now, by setting their run time to none.
func (e *env) complete(ctx context.Context, ns string, n int) error {
	l, err := e.kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return err
	}
	patch := []byte(`{"metadata":{"annotations":{"` + delayAnnotation + `":"0s"}}}`)
	done := 0
	for _, p := range l.Items {
		if done == n {
			break
		}
		if p.Status.Phase != corev1.PodRunning {
			continue
		}
		if _, err := e.kc.CoreV1().Pods(ns).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("ending pod %s: %w", p.Name, err)
		}
		done++
	}
	return nil
}
