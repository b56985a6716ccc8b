package policy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/tidegate/tidegate/shared/demand"
)

// tidegateDefaults are the LimitRange's defaultRequest a tenant namespace has by default
// (config.DefaultContainerCPURequest and DefaultContainerMemoryRequest).
var tidegateDefaults = demand.Defaults{CPU: resource.MustParse("100m"), Memory: resource.MustParse("256Mi")}

// ctr is a compliant container, in YAML, asking for res ("" for nothing).
func ctr(name, res string) string {
	if res == "" {
		res = "{}"
	}
	return fmt.Sprintf("{name: %s, image: busybox, securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}, resources: %s}", name, res)
}

// podYAML is a compliant pod spec, in YAML, with extra fields (restartPolicy, initContainers,
// overhead) and containers.
func podYAML(extra string, containers ...string) string {
	if extra != "" {
		extra += ", "
	}
	return fmt.Sprintf("{%ssecurityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}, containers: [%s]}", extra, strings.Join(containers, ", "))
}

func jobYAML(spec, pod string) string {
	return fmt.Sprintf("{apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {%stemplate: {spec: %s}}}", spec, pod)
}

func TestCheckDemand(t *testing.T) {
	c := mustChecker(t, Config{ContainerDefaults: tidegateDefaults})
	small := ctr("main", "{requests: {cpu: 100m, memory: 32Mi}}")
	never := "restartPolicy: Never"
	tests := []struct {
		name string
		docs []string
		want map[string]string
	}{{
		name: "a Pod",
		docs: []string{fmt.Sprintf("{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: %s}", podYAML(never, ctr("main", "{requests: {cpu: 500m, memory: 1Gi, ephemeral-storage: 1Gi}}")))},
		want: map[string]string{"cpu": "500m", "memory": "1Gi", "ephemeral-storage": "1Gi", "pods": "1"},
	}, {
		name: "a Job of parallelism 10 and 3 completions runs 3 pods",
		docs: []string{jobYAML("parallelism: 10, completions: 3, ", podYAML(never, small))},
		want: map[string]string{"cpu": "300m", "memory": "96Mi", "pods": "3"},
	}, {
		name: "a Job of parallelism 200 pods of 100m",
		docs: []string{jobYAML("parallelism: 200, ", podYAML(never, small))},
		want: map[string]string{"cpu": "20", "memory": "6400Mi", "pods": "200"},
	}, {
		name: "a Job without parallelism runs one pod",
		docs: []string{jobYAML("completions: 50, ", podYAML(never, small))},
		want: map[string]string{"cpu": "100m", "memory": "32Mi", "pods": "1"},
	}, {
		name: "a Job of parallelism 0 runs none",
		docs: []string{jobYAML("parallelism: 0, ", podYAML(never, small))},
		want: nil,
	}, {
		name: "a Deployment of 5 replicas",
		docs: []string{fmt.Sprintf("{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {replicas: 5, selector: {matchLabels: {app: x}}, template: {metadata: {labels: {app: x}}, spec: %s}}}", podYAML("", small))},
		want: map[string]string{"cpu": "500m", "memory": "160Mi", "pods": "5"},
	}, {
		name: "a StatefulSet without replicas runs one",
		docs: []string{fmt.Sprintf("{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: s}, spec: {selector: {matchLabels: {app: x}}, template: {metadata: {labels: {app: x}}, spec: %s}}}", podYAML("", small))},
		want: map[string]string{"cpu": "100m", "memory": "32Mi", "pods": "1"},
	}, {
		name: "an init container bigger than the containers",
		docs: []string{jobYAML("parallelism: 2, ", podYAML(never+", initContainers: ["+ctr("fetch", "{requests: {cpu: 4, memory: 8Gi}}")+"]", small))},
		want: map[string]string{"cpu": "8", "memory": "16Gi", "pods": "2"},
	}, {
		name: "a sidecar adds to the containers",
		docs: []string{jobYAML("", podYAML(never+", initContainers: [{name: proxy, restartPolicy: Always, image: busybox, securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}, resources: {requests: {cpu: 1, memory: 64Mi}}}]", small))},
		want: map[string]string{"cpu": "1100m", "memory": "96Mi", "pods": "1"},
	}, {
		name: "overhead",
		docs: []string{jobYAML("", podYAML(never+", overhead: {cpu: 250m, memory: 120Mi}", small))},
		want: map[string]string{"cpu": "350m", "memory": "152Mi", "pods": "1"},
	}, {
		name: "only limits set: the request is the limit",
		docs: []string{jobYAML("", podYAML(never, ctr("main", "{limits: {cpu: 2, memory: 4Gi}}")))},
		want: map[string]string{"cpu": "2", "memory": "4Gi", "pods": "1"},
	}, {
		name: "nothing set: the LimitRange's defaults",
		docs: []string{jobYAML("parallelism: 4, ", podYAML(never, ctr("main", ""), ctr("side", "")))},
		want: map[string]string{"cpu": "800m", "memory": "2Gi", "pods": "4"},
	}, {
		name: "extended resources",
		docs: []string{jobYAML("parallelism: 2, ", podYAML(never, ctr("main", "{limits: {nvidia.com/gpu: 4, vendor.example/fpga: 1}}")))},
		want: map[string]string{"cpu": "200m", "memory": "512Mi", "nvidia.com/gpu": "8", "vendor.example/fpga": "2", "pods": "2"},
	}, {
		name: "a job's documents summed",
		docs: []string{
			jobYAML("parallelism: 3, ", podYAML(never, ctr("main", "{requests: {cpu: 1, memory: 1Gi}}"))),
			"{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {k: v}}",
			fmt.Sprintf("{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: %s}", podYAML(never, ctr("main", "{requests: {cpu: 500m, memory: 512Mi}}"))),
		},
		want: map[string]string{"cpu": "3500m", "memory": "3584Mi", "pods": "4"},
	}, {
		name: "a CronJob counts one run of its job template",
		docs: []string{fmt.Sprintf(`{apiVersion: batch/v1, kind: CronJob, metadata: {name: nightly}, spec: {schedule: "0 3 * * *", jobTemplate: {spec: {parallelism: 4, completions: 8, template: {spec: %s}}}}}`, podYAML(never, small))},
		want: map[string]string{"cpu": "400m", "memory": "128Mi", "pods": "4"},
	}, {
		name: "a ConfigMap alone asks for nothing",
		docs: []string{"{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {k: v}}"},
		want: nil,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := c.Check(tenantRequest(docs(t, strings.Join(tt.docs, "\n---\n"))...))
			if !res.Allowed() {
				t.Fatalf("Check(%s) refused it: %v", tt.name, res.Violations)
			}
			if diff := cmp.Diff(tt.want, res.Demand.Strings()); diff != "" {
				t.Errorf("Check(%s) demand: -want +got\n%s", tt.name, diff)
			}
		})
	}
}

// What cannot be counted, or would read smaller than what runs, is refused naming the field.
func TestCheckDemandRefuses(t *testing.T) {
	c := mustChecker(t, Config{ContainerDefaults: tidegateDefaults})
	never := "restartPolicy: Never"
	small := ctr("main", "{requests: {cpu: 100m}}")
	const pod = "spec.template.spec"
	tests := []struct {
		name string
		doc  string
		want []located
	}{{
		name: "a negative request beside a large one",
		doc:  jobYAML("", podYAML(never, ctr("main", "{requests: {cpu: 8}}"), ctr("thief", "{requests: {cpu: -7}}"))),
		want: []located{{0, pod + ".containers[1].resources.requests[cpu]"}},
	}, {
		name: "a negative limit",
		doc:  jobYAML("", podYAML(never, ctr("main", "{limits: {memory: -1Gi}}"))),
		want: []located{{0, pod + ".containers[0].resources.limits[memory]"}},
	}, {
		name: "a negative init container request",
		doc:  jobYAML("", podYAML(never+", initContainers: ["+ctr("i", "{requests: {cpu: -1}}")+"]", small)),
		want: []located{{0, pod + ".initContainers[0].resources.requests[cpu]"}},
	}, {
		name: "a negative overhead",
		doc:  jobYAML("", podYAML(never+", overhead: {cpu: -1}", small)),
		want: []located{{0, pod + ".overhead[cpu]"}},
	}, {
		name: "negative parallelism",
		doc:  jobYAML("parallelism: -5, ", podYAML(never, small)),
		want: []located{{0, "spec.parallelism"}},
	}, {
		name: "negative completions",
		doc:  jobYAML("completions: -1, ", podYAML(never, small)),
		want: []located{{0, "spec.completions"}},
	}, {
		name: "negative replicas",
		doc:  fmt.Sprintf("{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {replicas: -3, selector: {matchLabels: {app: x}}, template: {metadata: {labels: {app: x}}, spec: %s}}}", podYAML("", small)),
		want: []located{{0, "spec.replicas"}},
	}, {
		name: "a request times the replicas past what can be counted",
		doc:  fmt.Sprintf("{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {replicas: 2147483647, selector: {matchLabels: {app: x}}, template: {metadata: {labels: {app: x}}, spec: %s}}}", podYAML("", ctr("main", "{requests: {memory: 8Ei}}"))),
		want: []located{{0, "spec.template.spec.containers"}},
	}, {
		name: "a CronJob whose runs may overlap",
		doc:  fmt.Sprintf(`{apiVersion: batch/v1, kind: CronJob, metadata: {name: nightly}, spec: {schedule: "0 3 * * *", concurrencyPolicy: Allow, jobTemplate: {spec: {template: {spec: %s}}}}}`, podYAML(never, small)),
		want: []located{{0, "spec.concurrencyPolicy"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := c.Check(tenantRequest(fromYAML(t, tt.doc)))
			if diff := cmp.Diff(tt.want, fieldsOf(res.Violations)); diff != "" {
				t.Errorf("Check(%s) violations: -want +got\n%s\n%v", tt.name, diff, res.Violations)
			}
		})
	}
}

// Two documents each within what can be counted, together past it, are refused as a job.
func TestCheckDemandSumPastCounting(t *testing.T) {
	c := mustChecker(t, Config{})
	doc := jobYAML("parallelism: 1000000, ", podYAML("restartPolicy: Never", ctr("main", "{requests: {memory: 5Ti}}")))
	res := c.Check(tenantRequest(docs(t, doc+"\n---\n"+strings.Replace(doc, "name: j", "name: k", 1))...))
	want := []Violation{{Document: 1, Kind: "Job", Name: "k", Message: "the job's manifests ask for more memory in all than can be counted (past 2^63 of the scheduler's units): lower their requests or the pods they run at once"}}
	if diff := cmp.Diff(want, res.Violations); diff != "" {
		t.Errorf("Check(two Jobs of 5Pi each): -want +got\n%s", diff)
	}
}

func TestCheckDemandMessages(t *testing.T) {
	c := mustChecker(t, Config{Kinds: append(DefaultKinds(), Kind{"apps/v1", "DaemonSet"})})
	cron := fmt.Sprintf(`{apiVersion: batch/v1, kind: CronJob, metadata: {name: nightly}, spec: {schedule: "0 3 * * *", concurrencyPolicy: Allow, jobTemplate: {spec: {template: {spec: %s}}}}}`, podYAML("restartPolicy: Never", ctr("main", "")))
	daemon := fmt.Sprintf("{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: d}, spec: {selector: {matchLabels: {app: x}}, template: {metadata: {labels: {app: x}}, spec: %s}}}", podYAML("", ctr("main", "")))
	res := c.Check(tenantRequest(fromYAML(t, cron), fromYAML(t, daemon)))
	want := []Violation{
		{Document: 0, Kind: "CronJob", Name: "nightly", Field: "spec.concurrencyPolicy", Message: "concurrencyPolicy Allow lets the CronJob's runs overlap, so what it runs at once has no bound: set it to Forbid (a run waits for the last to end) or Replace (a run replaces the last), or remove it for Forbid"},
		{Document: 1, Kind: "DaemonSet", Name: "d", Field: "kind", Message: "a DaemonSet runs a pod on every node its pods fit, so what it asks of the cluster cannot be counted at submission: run a Deployment with replicas instead"},
	}
	if diff := cmp.Diff(want, res.Violations); diff != "" {
		t.Errorf("Check(CronJob with Allow, DaemonSet): -want +got\n%s", diff)
	}
}
