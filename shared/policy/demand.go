package policy

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/tidegate/tidegate/shared/demand"
)

// A job's demand is counted here, where each manifest is decoded into its typed object and its
// pod found, so that there is one reading of a manifest's pods: what the policy judges is what
// is counted.

// podsCounter reads how many pods of its template a workload runs at once; false if that cannot
// be counted, which it reports.
type podsCounter func(obj any, r *report) (int64, bool)

// onePod is a bare Pod's.
func onePod(any, *report) (int64, bool) { return 1, true }

// replicas is a Deployment's, StatefulSet's or ReplicaSet's: spec.replicas, 1 when unset as the
// API server defaults it.
func replicas(n func(obj any) *int32) podsCounter {
	return func(obj any, r *report) (int64, bool) {
		return count(n(obj), 1, "spec.replicas", r)
	}
}

// jobPods is a Job's: the smaller of its parallelism (1 when unset) and its completions (its
// parallelism when unset: the Job ends when any pod succeeds), so a Job of parallelism 10 and 3
// completions runs 3 pods at once, never more. A Job of parallelism 0 runs none until someone
// raises it, and no one does here: its demand is none.
func jobPods(spec *batchv1.JobSpec, at string, r *report) (int64, bool) {
	p, okP := count(spec.Parallelism, 1, at+".parallelism", r)
	c, okC := count(spec.Completions, p, at+".completions", r)
	return min(p, c), okP && okC
}

// cronJobPods is one run of a CronJob's job template: a CronJob whose runs could overlap is
// refused (checkCronJob), and one that says nothing is applied with Forbid (jobobjects.Stamped).
func cronJobPods(obj any, r *report) (int64, bool) {
	return jobPods(&obj.(*batchv1.CronJob).Spec.JobTemplate.Spec, "spec.jobTemplate.spec", r)
}

// daemonPods refuses a DaemonSet: it runs a pod on every node its pods fit, a number no manifest
// says.
func daemonPods(_ any, r *report) (int64, bool) {
	r.add("kind", msgDaemonSetDemand)
	return 0, false
}

// count is *n, def when unset; a negative one is reported at field, as the API server refuses it.
func count(n *int32, def int64, field string, r *report) (int64, bool) {
	switch {
	case n == nil:
		return def, true
	case *n < 0:
		r.addf(field, msgNegativeCount, *n)
		return 0, false
	}
	return int64(*n), true
}

// countDemand adds what the document's pods that can run at once request to the result's
// demand, each pod counted as the kube-scheduler counts it with the namespace's container
// defaults. A pod asking for a negative quantity is not counted: checkAPIPod has refused it.
func (c *Checker) countDemand(rule kindRule, obj any, p podRef, r *report) {
	n, ok := rule.pods(obj, r)
	if !ok || negativeAnywhere(p.spec) {
		return
	}
	d, err := demand.Of(demand.Pod(p.spec, c.defaults), n)
	var tooLarge *demand.TooLargeError
	if errors.As(err, &tooLarge) {
		r.addf(p.specPath+".containers", msgDemandTooLarge, tooLarge.Resource, n)
		return
	}
	if err != nil {
		r.addf(p.specPath+".containers", "%v: fix the pod's resources", err)
		return
	}
	if err := r.res.Demand.Add(d); errors.As(err, &tooLarge) {
		r.addf("", msgJobDemandTooLarge, tooLarge.Resource)
	}
	if n > 0 {
		selectNodes(p, r)
	}
}

// selectNodes adds the pod's node selector to the job's, refusing a key another of its pods
// selects with another value: a job is admitted onto one flavor, whose labels all its pods get.
func selectNodes(p podRef, r *report) {
	for _, k := range slices.Sorted(maps.Keys(p.spec.NodeSelector)) {
		v := p.spec.NodeSelector[k]
		if have, ok := r.res.NodeSelector[k]; ok && have != v {
			r.addf(p.specPath+".nodeSelector["+k+"]", msgNodeSelectorsDisagree, k, have, v)
			continue
		}
		if r.res.NodeSelector == nil {
			r.res.NodeSelector = map[string]string{}
		}
		r.res.NodeSelector[k] = v
	}
}

// checkNonNegative refuses a negative quantity in list, at path[name], as the API server
// refuses one in a container's or pod's resources and a pod's overhead ("must be greater than
// or equal to 0"): counted, it would take from the job's other requests.
func checkNonNegative(list corev1.ResourceList, path string, r *report) {
	var names []corev1.ResourceName
	for name, q := range list {
		if q.Sign() < 0 {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		q := list[name]
		r.addf(fmt.Sprintf("%s[%s]", path, name), msgNegativeQuantity, name, q.String())
	}
}

// checkPodQuantities holds the pod's own resources and overhead to checkNonNegative; its
// containers' are checked with each container.
func checkPodQuantities(p podRef, r *report) {
	s := p.spec
	checkNonNegative(s.Overhead, p.specPath+".overhead", r)
	if s.Resources != nil {
		checkNonNegative(s.Resources.Requests, p.specPath+".resources.requests", r)
		checkNonNegative(s.Resources.Limits, p.specPath+".resources.limits", r)
	}
}

// negativeAnywhere reports whether any quantity the pod's demand reads is negative.
func negativeAnywhere(s *corev1.PodSpec) bool {
	lists := []corev1.ResourceList{s.Overhead}
	if s.Resources != nil {
		lists = append(lists, s.Resources.Requests, s.Resources.Limits)
	}
	for _, cs := range [][]corev1.Container{s.Containers, s.InitContainers} {
		for i := range cs {
			lists = append(lists, cs[i].Resources.Requests, cs[i].Resources.Limits)
		}
	}
	for _, l := range lists {
		for _, q := range l {
			if q.Sign() < 0 {
				return true
			}
		}
	}
	return false
}
