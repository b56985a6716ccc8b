package sandbox_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dev/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const (
	// A pod's delay in these tests: long enough to tell from "at once" on a loaded machine, short
	// enough to keep the run brisk.
	stageDelay = 5 * time.Second
	// How late a pod may end past its delay before the test calls it stuck. Loose on purpose: an
	// upper bound only has to catch a pod that never ends, or waits far past what it asked.
	endSlack = 30 * time.Second
	// An undelayed pod ends, by its own status, in the second it started; anything under stageDelay
	// passes, so only a delay applied where none was asked fails.
	atOnce    = stageDelay
	pollEvery = 100 * time.Millisecond
	// Bounds one Job from creation to its end; a Job without delay finishes in ≈1.2 s.
	jobTimeout = 2 * time.Minute
)

// TestKwokStagesEndJobPods creates Jobs whose pod templates carry the sandbox's annotations and
// checks how their pods end: when, in which phase, with what exit code and reason in every
// container, and whether the Job completes or fails.
func TestKwokStagesEndJobPods(t *testing.T) {
	ns, st := testenv.Namespace(t)
	cs, err := sandbox.KubeClient(st.Kubeconfig)
	if err != nil {
		t.Fatalf("KubeClient(%s): %v", st.Kubeconfig, err)
	}
	delay := map[string]string{sandbox.CompleteDelayAnnotation: stageDelay.String()}
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		delayed     bool // the pod should stay Running stageDelay, not end at once
		phase       corev1.PodPhase
		exitCode    int32
		reason      string
		job         batchv1.JobConditionType
	}{
		{"none", nil, false, corev1.PodSucceeded, 0, "Completed", batchv1.JobComplete},
		{"delay", delay, true, corev1.PodSucceeded, 0, "Completed", batchv1.JobComplete},
		{"exit-code", map[string]string{sandbox.ExitCodeAnnotation: "3"}, false, corev1.PodFailed, 3, "Error", batchv1.JobFailed},
		{"exit-code-delay", with(delay, sandbox.ExitCodeAnnotation, "3"), true, corev1.PodFailed, 3, "Error", batchv1.JobFailed},
		{"exit-code-255", map[string]string{sandbox.ExitCodeAnnotation: "255"}, false, corev1.PodFailed, 255, "Error", batchv1.JobFailed},
		{"exit-code-0", map[string]string{sandbox.ExitCodeAnnotation: "0"}, false, corev1.PodSucceeded, 0, "Completed", batchv1.JobComplete},
		{"exit-code-not-a-byte", map[string]string{sandbox.ExitCodeAnnotation: "256"}, false, corev1.PodSucceeded, 0, "Completed", batchv1.JobComplete},
		{"exit-code-not-a-number", map[string]string{sandbox.ExitCodeAnnotation: "three"}, false, corev1.PodSucceeded, 0, "Completed", batchv1.JobComplete},
		{"oom-kill", map[string]string{sandbox.OOMKillAnnotation: "true"}, false, corev1.PodFailed, 137, "OOMKilled", batchv1.JobFailed},
		{"oom-kill-delay", with(delay, sandbox.OOMKillAnnotation, "true"), true, corev1.PodFailed, 137, "OOMKilled", batchv1.JobFailed},
		{"oom-kill-over-exit-code", map[string]string{sandbox.OOMKillAnnotation: "true", sandbox.ExitCodeAnnotation: "3"}, false, corev1.PodFailed, 137, "OOMKilled", batchv1.JobFailed},
		{"oom-kill-false", map[string]string{sandbox.OOMKillAnnotation: "false"}, false, corev1.PodSucceeded, 0, "Completed", batchv1.JobComplete},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), jobTimeout)
			defer cancel()
			r := runJob(ctx, t, cs, ns, twoContainerJob(tc.name, tc.annotations))
			if r.pod.Status.Phase != tc.phase {
				t.Errorf("Job %s with annotations %v: pod phase %s, want %s", tc.name, tc.annotations, r.pod.Status.Phase, tc.phase)
			}
			if !r.finished(tc.job) {
				t.Errorf("Job %s with annotations %v: conditions %v, want %s", tc.name, tc.annotations, r.job.Status.Conditions, tc.job)
			}
			checkContainers(t, tc.name, r.pod, tc.exitCode, tc.reason)

			ran, err := r.ran()
			if err != nil {
				t.Fatalf("Job %s: %v", tc.name, err)
			}
			t.Logf("Job %s: pod ran %s by its status, %s as this test saw it", tc.name, ran, r.seen())
			switch {
			case !tc.delayed && ran >= atOnce:
				t.Errorf("Job %s with annotations %v: pod ran %s by its status, want under %s (at once)", tc.name, tc.annotations, ran, atOnce)
			case tc.delayed && ran < stageDelay:
				t.Errorf("Job %s with annotations %v: pod ran %s by its status, want at least %s", tc.name, tc.annotations, ran, stageDelay)
			case tc.delayed && ran > stageDelay+endSlack:
				t.Errorf("Job %s with annotations %v: pod ran %s by its status, want about %s", tc.name, tc.annotations, ran, stageDelay)
			}
			if tc.delayed {
				if r.running.IsZero() {
					t.Fatalf("Job %s with annotations %v: never saw its pod Running", tc.name, tc.annotations)
				}
				if most := r.ended.Sub(r.notYet); most < stageDelay {
					t.Errorf("Job %s with annotations %v: saw its pod Running for at most %s, want at least %s", tc.name, tc.annotations, most, stageDelay)
				}
			}
		})
	}
}

// TestKwokStagesFailBarePod: the failure annotations end any pod, not only a Job's.
func TestKwokStagesFailBarePod(t *testing.T) {
	ns, st := testenv.Namespace(t)
	cs, err := sandbox.KubeClient(st.Kubeconfig)
	if err != nil {
		t.Fatalf("KubeClient(%s): %v", st.Kubeconfig, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), jobTimeout)
	defer cancel()
	tmpl := twoContainerJob("bare", map[string]string{sandbox.ExitCodeAnnotation: "2"}).Spec.Template
	pod := &corev1.Pod{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec}
	pod.Name = "bare"
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating pod bare: %v", err)
	}
	var lastErr error
	err = wait.PollUntilContextCancel(ctx, pollEvery, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "bare", metav1.GetOptions{})
		if err != nil {
			lastErr = err
			return false, nil
		}
		pod = p
		return ended(pod), nil
	})
	if err != nil {
		t.Fatalf("pod bare with %s=2 did not end: %v (last error %v); status %+v", sandbox.ExitCodeAnnotation, err, lastErr, pod.Status)
	}
	if pod.Status.Phase != corev1.PodFailed {
		t.Errorf("pod bare with %s=2: phase %s, want Failed", sandbox.ExitCodeAnnotation, pod.Status.Phase)
	}
	checkContainers(t, "bare", pod, 2, "Error")
}

// jobRun is what the test saw of one Job's single pod.
type jobRun struct {
	job *batchv1.Job // once finished
	pod *corev1.Pod  // once ended
	// When the last poll that found the pod not yet Running began, when the first that found it
	// Running answered, and when the first that found it ended answered. The pod went Running
	// after notYet and ended before ended, so ended-notYet is at least how long it ran, however
	// late a loaded apiserver answers.
	notYet, running, ended time.Time
	lastErr                error
}

// runJob creates job and follows it until it finishes and its pod has ended.
func runJob(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns string, job *batchv1.Job) jobRun {
	t.Helper()
	if _, err := cs.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Job %s: %v", job.Name, err)
	}
	r := jobRun{notYet: time.Now()}
	err := wait.PollUntilContextCancel(ctx, pollEvery, true, func(ctx context.Context) (bool, error) {
		asked := time.Now()
		if r.pod == nil {
			// A failed read is asked again at the next poll: only the deadline ends the wait.
			pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "job-name=" + job.Name})
			if err != nil {
				r.lastErr = err
				return false, nil
			}
			r.observe(asked, time.Now(), pods.Items)
			if r.pod == nil {
				return false, nil
			}
		}
		j, err := cs.BatchV1().Jobs(ns).Get(ctx, job.Name, metav1.GetOptions{})
		if err != nil {
			r.lastErr = err
			return false, nil
		}
		r.job = j
		return r.finished(batchv1.JobComplete) || r.finished(batchv1.JobFailed), nil
	})
	if err != nil {
		var status any
		if r.job != nil {
			status = r.job.Status
		}
		t.Fatalf("Job %s with annotations %v did not finish: %v (last error %v); pod ended %v, Job status %+v",
			job.Name, job.Spec.Template.Annotations, err, r.lastErr, r.pod != nil, status)
	}
	return r
}

// observe notes what one poll, asked at asked and answered at answered, found of the Job's pods.
func (r *jobRun) observe(asked, answered time.Time, pods []corev1.Pod) {
	for i := range pods {
		p := &pods[i]
		switch {
		case ended(p):
			r.pod, r.ended = p, answered
			return
		case p.Status.Phase == corev1.PodRunning:
			if r.running.IsZero() {
				r.running = answered
			}
			return
		}
	}
	r.notYet = asked
}

// seen is how long the test saw the pod Running at most, or "never Running" when a poll found it
// ended before any found it Running (as an undelayed pod usually is).
func (r jobRun) seen() string {
	if r.running.IsZero() {
		return "never Running"
	}
	return "at most " + r.ended.Sub(r.notYet).Round(time.Millisecond).String() + " Running"
}

// finished reports whether the Job has condition c.
func (r jobRun) finished(c batchv1.JobConditionType) bool {
	if r.job == nil {
		return false
	}
	for _, cond := range r.job.Status.Conditions {
		if cond.Type == c && cond.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// ran is how long the pod's first container ran by its own status: started to finished, both to
// the second as the API keeps them.
func (r jobRun) ran() (time.Duration, error) {
	if len(r.pod.Status.ContainerStatuses) == 0 || r.pod.Status.ContainerStatuses[0].State.Terminated == nil {
		return 0, fmt.Errorf("pod %s has no terminated container: %+v", r.pod.Name, r.pod.Status.ContainerStatuses)
	}
	term := r.pod.Status.ContainerStatuses[0].State.Terminated
	return term.FinishedAt.Sub(term.StartedAt.Time), nil
}

func ended(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// checkContainers checks that every container of pod terminated with exitCode and reason.
func checkContainers(t *testing.T, name string, pod *corev1.Pod, exitCode int32, reason string) {
	t.Helper()
	if got, want := len(pod.Status.ContainerStatuses), len(pod.Spec.Containers); got != want {
		t.Errorf("%s: pod %s has %d container statuses, want %d", name, pod.Name, got, want)
	}
	for _, c := range pod.Status.ContainerStatuses {
		term := c.State.Terminated
		if term == nil {
			t.Errorf("%s: pod %s container %s state %+v, want terminated", name, pod.Name, c.Name, c.State)
			continue
		}
		if term.ExitCode != exitCode || term.Reason != reason {
			t.Errorf("%s: pod %s container %s terminated with exit code %d, reason %q; want %d, %q",
				name, pod.Name, c.Name, term.ExitCode, term.Reason, exitCode, reason)
		}
		if term.StartedAt.After(term.FinishedAt.Time) {
			t.Errorf("%s: pod %s container %s started %s, after it finished %s", name, pod.Name, c.Name, term.StartedAt, term.FinishedAt)
		}
	}
}

// twoContainerJob is a Job of one pod with two containers, so a test sees every container end,
// whose template carries annotations. backoffLimit 0: one failed pod fails the Job.
func twoContainerJob(name string, annotations map[string]string) *batchv1.Job {
	container := func(name string) corev1.Container {
		// Never pulled: kwok runs no containers.
		return corev1.Container{Name: name, Image: "busybox:1.37", Command: []string{"true"}}
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Annotations: annotations},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{container("main"), container("sidecar")},
				},
			},
		},
	}
}

// with is a copy of m with k set to v.
func with(m map[string]string, k, v string) map[string]string {
	out := map[string]string{}
	for mk, mv := range m {
		out[mk] = mv
	}
	out[k] = v
	return out
}
