package policy

import (
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	psa "k8s.io/pod-security-admission/policy"
)

// The benchmarks hold Check against its floor: the upstream evaluator's EvaluatePod on the same
// pods, already decoded. Each Check benchmark measures its floor in the same run and reports
// the ratio as x-upstream (the goal is 1.5 or less).

const benchDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: team-a, labels: {app: web, team: a}}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      securityContext: {runAsNonRoot: true, runAsUser: 10001, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: web
        image: ghcr.io/acme/web:1.4.2
        args: [--port=8080]
        ports: [{name: http, containerPort: 8080}]
        env: [{name: LOG_LEVEL, value: info}, {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
        resources: {requests: {cpu: 250m, memory: 256Mi}, limits: {cpu: "1", memory: 512Mi}}
        readinessProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 5}
        volumeMounts: [{name: config, mountPath: /etc/web, readOnly: true}, {name: tmp, mountPath: /tmp}]
        securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
      volumes:
      - {name: config, configMap: {name: web}}
      - {name: tmp, emptyDir: {}}
`

const benchJob = `
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  backoffLimit: 2
  template:
    spec:
      restartPolicy: Never
      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      initContainers:
      - name: fetch
        image: ghcr.io/acme/fetch:2
        args: [s3://bucket/data, /data]
        volumeMounts: [{name: data, mountPath: /data}]
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
      containers:
      - name: train
        image: ghcr.io/acme/train:1.0
        command: [python, train.py]
        resources: {requests: {cpu: "4", memory: 16Gi, nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 1}}
        volumeMounts: [{name: data, mountPath: /data}]
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
      volumes: [{name: data, emptyDir: {}}]
`

const benchCronJob = `
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
          containers:
          - name: report
            image: ghcr.io/acme/report:3
            resources: {requests: {cpu: 500m, memory: 1Gi}}
            securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
`

const benchStatefulSet = `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: cache}
spec:
  serviceName: cache
  replicas: 3
  selector: {matchLabels: {app: cache}}
  template:
    metadata: {labels: {app: cache}}
    spec:
      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: cache
        image: ghcr.io/acme/cache:7
        ports: [{containerPort: 6379}]
        resources: {requests: {cpu: "1", memory: 2Gi}}
        volumeMounts: [{name: data, mountPath: /data}]
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}}
`

const benchPod = `
apiVersion: v1
kind: Pod
metadata: {name: debug}
spec:
  securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: shell
    image: ghcr.io/acme/tools:1
    command: [sleep, "3600"]
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
`

const benchConfigMap = `{apiVersion: v1, kind: ConfigMap, metadata: {name: web}, data: {config.yaml: "port: 8080\n"}}`

const benchService = `{apiVersion: v1, kind: Service, metadata: {name: web}, spec: {selector: {app: web}, ports: [{port: 80, targetPort: http}]}}`

// bundle20 is twenty documents, sixteen of them with a pod.
func bundle20(tb testing.TB) []map[string]any {
	var out []map[string]any
	for _, d := range []struct {
		yaml string
		n    int
	}{{benchDeployment, 4}, {benchJob, 4}, {benchCronJob, 4}, {benchStatefulSet, 2}, {benchPod, 2}, {benchConfigMap, 2}, {benchService, 2}} {
		for range d.n {
			out = append(out, fromYAML(tb, d.yaml))
		}
	}
	return out
}

func benchChecker(tb testing.TB) *Checker {
	gpus, cpu, mem := resource.MustParse("8"), resource.MustParse("64"), resource.MustParse("512Gi")
	return mustChecker(tb, Config{MaxGPUs: &gpus, MaxCPU: &cpu, MaxMemory: &mem, TrustedRegistries: []string{"ghcr.io/acme"}})
}

// typedPods decodes each manifest's pod with the upstream converter, for the floor.
func typedPods(tb testing.TB, manifests []map[string]any) []podRef {
	var pods []podRef
	for _, m := range manifests {
		k, _ := kindOf(m)
		r := checkable[k]
		obj := reflect.New(r.plan.typ).Interface()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(m, obj, true); err != nil {
			tb.Fatalf("converting %s: %v", k, err)
		}
		if r.pod != nil {
			p := r.pod(obj)
			pods = append(pods, p)
		}
	}
	return pods
}

func benchCheck(b *testing.B, manifests []map[string]any) {
	c := benchChecker(b)
	req := Request{Manifests: manifests, Namespaces: []string{"team-a"}, DefaultNamespace: "team-a"}
	if res := c.Check(req); !res.Allowed() {
		b.Fatalf("the benchmark's manifests are refused: %v", res.Violations)
	}
	b.ReportAllocs()
	for b.Loop() {
		c.Check(req)
	}
	// The floor, timed here for as many rounds, so that both run on the same machine at the
	// same moment. (A nested testing.Benchmark would wait for this one to finish.)
	floor := upstreamRound(b, typedPods(b, manifests))
	start := time.Now()
	for range b.N {
		floor()
	}
	b.ReportMetric(float64(b.Elapsed())/float64(time.Since(start)), "x-upstream")
}

// upstreamRound returns one round of the floor: EvaluatePod on every pod.
func upstreamRound(b *testing.B, pods []podRef) func() {
	evaluator, err := psa.NewEvaluator(psa.DefaultChecks(), nil)
	if err != nil {
		b.Fatal(err)
	}
	return func() {
		for _, p := range pods {
			for _, r := range evaluator.EvaluatePod(restricted, p.meta, p.spec) {
				if !r.Allowed {
					b.Fatalf("upstream refuses a benchmark pod: %s", r.ForbiddenReason)
				}
			}
		}
	}
}

func benchUpstream(b *testing.B, pods []podRef) {
	round := upstreamRound(b, pods)
	b.ReportAllocs()
	for b.Loop() {
		round()
	}
}

func BenchmarkCheckDeployment(b *testing.B) {
	benchCheck(b, []map[string]any{fromYAML(b, benchDeployment)})
}

func BenchmarkCheckBundle20(b *testing.B) {
	benchCheck(b, bundle20(b))
}

func BenchmarkUpstreamEvaluatePodDeployment(b *testing.B) {
	benchUpstream(b, typedPods(b, []map[string]any{fromYAML(b, benchDeployment)}))
}

func BenchmarkUpstreamEvaluatePodBundle20(b *testing.B) {
	benchUpstream(b, typedPods(b, bundle20(b)))
}

// BenchmarkUpstreamConvertDeployment is what decoding alone would cost with the upstream
// converter in strict mode, the reason this package has its own decoder.
func BenchmarkUpstreamConvertDeployment(b *testing.B) {
	m := fromYAML(b, benchDeployment)
	r := checkable[Kind{"apps/v1", "Deployment"}]
	b.ReportAllocs()
	for b.Loop() {
		obj := reflect.New(r.plan.typ).Interface()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(m, obj, true); err != nil {
			b.Fatal(err)
		}
	}
}
