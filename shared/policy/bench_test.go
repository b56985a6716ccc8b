package policy

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	psa "k8s.io/pod-security-admission/policy"

	"github.com/tidegate/tidegate/shared/manifest"
)

// The benchmarks hold Check against its floor: the upstream evaluator's EvaluatePod on the same
// pods, already decoded into typed objects. Check's side is everything it does from the decoded
// manifests onward, turning them into typed objects included. Each benchmark times its floor in
// the same run, alternating with it, and reports the ratio as x-upstream (the goal is 1.5 or
// less). BenchmarkCopyTypedDeployment and BenchmarkWalkDeployment measure, the same way, what
// the least conceivable check would cost: see BENCHMARKS.md.

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
      - {name: tmp, emptyDir: {sizeLimit: 1Gi}}
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
      volumes: [{name: data, emptyDir: {sizeLimit: 10Gi}}]
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

// decoded is the manifests in s as the API hands them to Check: through the strict decoder.
func decoded(tb testing.TB, s string) []map[string]any {
	tb.Helper()
	ms, err := manifest.DecodeYAML([]byte(s), manifest.DefaultLimits)
	if err != nil {
		tb.Fatalf("decoding a benchmark manifest: %v", err)
	}
	return ms
}

// bundle20 is twenty documents, sixteen of them with a pod.
func bundle20(tb testing.TB) []map[string]any {
	var out []map[string]any
	for _, d := range []struct {
		yaml string
		n    int
	}{{benchDeployment, 4}, {benchJob, 4}, {benchCronJob, 4}, {benchStatefulSet, 2}, {benchPod, 2}, {benchConfigMap, 2}, {benchService, 2}} {
		for range d.n {
			out = append(out, decoded(tb, d.yaml)...)
		}
	}
	return out
}

func benchChecker(tb testing.TB) *Checker {
	gpus, cpu, mem := resource.MustParse("8"), resource.MustParse("64"), resource.MustParse("512Gi")
	return mustChecker(tb, Config{MaxGPUs: &gpus, MaxCPU: &cpu, MaxMemory: &mem, TrustedRegistries: []string{"ghcr.io/acme"}})
}

// typed decodes each manifest with the upstream converter, for the floor. The converter takes
// numbers as encoding/json gives them, not as json.Number, hence the round trip.
func typed(tb testing.TB, manifests []map[string]any) []any {
	var objs []any
	for _, m := range manifests {
		k, _ := kindOf(m)
		b, err := json.Marshal(m)
		if err != nil {
			tb.Fatal(err)
		}
		var u map[string]any
		if err := json.Unmarshal(b, &u); err != nil {
			tb.Fatal(err)
		}
		obj := reflect.New(checkable[k].plan.typ).Interface()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u, obj, true); err != nil {
			tb.Fatalf("converting %s: %v", k, err)
		}
		objs = append(objs, obj)
	}
	return objs
}

// typedPods are the pods of the manifests, typed by the upstream converter.
func typedPods(tb testing.TB, manifests []map[string]any) []podRef {
	var pods []podRef
	for i, obj := range typed(tb, manifests) {
		k, _ := kindOf(manifests[i])
		if r := checkable[k]; r.pod != nil {
			pods = append(pods, r.pod(obj))
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
	againstUpstream(b, typedPods(b, manifests), func() { c.Check(req) })
}

// podsPerBlock is how many pods' worth of rounds one side runs before the other's turn: about
// a millisecond of checking, shorter than the bursts of other work on a shared machine and long
// enough that stopping the timer between blocks costs nothing measurable.
const podsPerBlock = 64

// againstUpstream runs ours b.N times and the floor (EvaluatePod on pods) as many, alternating
// blocks of each so that load on the machine falls on both alike, and reports ours/floor as
// x-upstream. The timer stops for the floor: ns/op, B/op and allocs/op are ours alone.
func againstUpstream(b *testing.B, pods []podRef, ours func()) {
	floor := upstreamRound(b, pods)
	b.ReportMetric(alternate(b, max(1, podsPerBlock/len(pods)), ours, floor), "x-upstream")
}

// alternate runs ours b.N times and floor as many, in alternating blocks of rounds each, and
// answers ours' time over floor's. The timer stops for the floor: ns/op, B/op and allocs/op are
// ours alone.
func alternate(b *testing.B, rounds int, ours, floor func()) float64 {
	var oursTook, floorTook time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += rounds {
		n := min(rounds, b.N-done)
		start := time.Now()
		for range n {
			ours()
		}
		oursTook += time.Since(start)
		b.StopTimer()
		start = time.Now()
		for range n {
			floor()
		}
		floorTook += time.Since(start)
		b.StartTimer()
	}
	return float64(oursTook) / float64(floorTook)
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
	benchCheck(b, decoded(b, benchDeployment))
}

func BenchmarkCheckBundle20(b *testing.B) {
	benchCheck(b, bundle20(b))
}

func BenchmarkUpstreamEvaluatePodDeployment(b *testing.B) {
	benchUpstream(b, typedPods(b, decoded(b, benchDeployment)))
}

func BenchmarkUpstreamEvaluatePodBundle20(b *testing.B) {
	benchUpstream(b, typedPods(b, bundle20(b)))
}

// BenchmarkUpstreamConvertDeployment is what decoding alone would cost with the upstream
// converter in strict mode, the reason this package has its own decoder.
func BenchmarkUpstreamConvertDeployment(b *testing.B) {
	m := fromYAML(b, benchDeployment) // numbers as the converter takes them
	r := checkable[Kind{"apps/v1", "Deployment"}]
	b.ReportAllocs()
	for b.Loop() {
		obj := reflect.New(r.plan.typ).Interface()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(m, obj, true); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStdlibJSONDeployment is the other way to a typed object: encoding/json, refusing
// unknown fields, straight from the manifest's JSON text, as a decoder that kept each
// document's bytes could. It is no faster than this package's decoder from the decoded map.
func BenchmarkStdlibJSONDeployment(b *testing.B) {
	text, err := json.Marshal(decoded(b, benchDeployment)[0])
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		var d appsv1.Deployment
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&d); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeDeployment is this package's decoder alone, for comparison with the two above.
func BenchmarkDecodeDeployment(b *testing.B) {
	m := decoded(b, benchDeployment)[0]
	p := checkable[Kind{"apps/v1", "Deployment"}].plan
	b.ReportAllocs()
	for b.Loop() {
		var d decoder
		d.decode(m, p)
		if len(d.errs) > 0 {
			b.Fatal(d.errs)
		}
	}
}

// BenchmarkCopyTypedDeployment is a bound on any check that makes its typed objects per request,
// from whatever input: the Deployment's typed object copied (generated code that allocates and
// fills it, reading no input and looking nothing up), then evaluated, against the evaluation.
func BenchmarkCopyTypedDeployment(b *testing.B) {
	ms := decoded(b, benchDeployment)
	d := typed(b, ms)[0].(*appsv1.Deployment)
	againstUpstream(b, typedPods(b, ms), func() {
		c := d.DeepCopy()
		evaluatorOnce.EvaluatePod(restricted, &c.Spec.Template.ObjectMeta, &c.Spec.Template.Spec)
	})
}

// BenchmarkWalkDeployment is a bound on any check that reads every value of the decoded
// manifest, as refusing unknown fields and wrong types requires: a walk that visits each value
// and does nothing with it, then the evaluation on the typed pod, against the evaluation.
func BenchmarkWalkDeployment(b *testing.B) {
	ms := decoded(b, benchDeployment)
	pods := typedPods(b, ms)
	var values int
	againstUpstream(b, pods, func() {
		values = countValues(ms[0])
		evaluatorOnce.EvaluatePod(restricted, pods[0].meta, pods[0].spec)
	})
	b.ReportMetric(float64(values), "values")
}

// evaluatorOnce is the upstream evaluator for the bound benchmarks' own side.
var evaluatorOnce = func() psa.Evaluator {
	e, err := psa.NewEvaluator(psa.DefaultChecks(), nil)
	if err != nil {
		panic(err)
	}
	return e
}()

// countValues visits every value under v.
func countValues(v any) int {
	n := 1
	switch t := v.(type) {
	case map[string]any:
		for _, x := range t {
			n += countValues(x)
		}
	case []any:
		for _, x := range t {
			n += countValues(x)
		}
	}
	return n
}

// BenchmarkAPIServerChecksDeployment is what refusing early what the API server would refuse
// adds to a check: the metadata and pod checks alone on the typed Deployment, against the
// evaluation.
func BenchmarkAPIServerChecksDeployment(b *testing.B) {
	ms := decoded(b, benchDeployment)
	k, _ := kindOf(ms[0])
	rule := checkable[k]
	d := typed(b, ms)[0].(*appsv1.Deployment)
	var out []Violation
	r := &report{out: &out}
	againstUpstream(b, typedPods(b, ms), func() {
		checkAPIMeta(rule, &d.ObjectMeta, r)
		checkAPIPod(rule, templateRef(&d.Spec.Template, "spec.template"), r)
	})
	if len(out) > 0 {
		b.Fatalf("the benchmark's Deployment is refused: %v", out)
	}
}
