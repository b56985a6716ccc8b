package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The "done when" cases, with the whole violation compared: document, field and the
// message a user reads.
func TestCheckDoneWhen(t *testing.T) {
	c := mustChecker(t, Config{})
	tests := []struct {
		name string
		doc  string
		want []Violation
	}{{
		name: "compliant Job",
		doc: `
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  template:
    spec:
      restartPolicy: Never
      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: main
        image: ghcr.io/acme/train:1.0
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
`,
	}, {
		name: "privileged container",
		doc: `
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: team-b}
spec:
  template:
    spec:
      restartPolicy: Never
      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: main
        image: ghcr.io/acme/train:1.0
        securityContext: {privileged: true, allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
`,
		want: []Violation{{Document: 0, Kind: "Job", Name: "train",
			Field:   "spec.template.spec.containers[0].securityContext.privileged",
			Message: `container "main" runs privileged: remove securityContext.privileged or set it to false (Pod Security Standards "restricted": privileged)`}},
	}, {
		name: "hostPath volume in a CronJob's job template",
		doc: `
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
          volumes:
          - {name: docker, hostPath: {path: /var/run/docker.sock}}
          containers:
          - name: main
            image: ghcr.io/acme/report:2
            securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
`,
		want: []Violation{{Document: 0, Kind: "CronJob", Name: "nightly",
			Field:   "spec.jobTemplate.spec.template.spec.volumes[0].hostPath",
			Message: `volume "docker" uses hostPath, which pods may not mount: use configMap, csi, downwardAPI, emptyDir, ephemeral, image, persistentVolumeClaim, projected or secret (Pod Security Standards "restricted": restricted volume types)`}},
	}, {
		name: "missing runAsNonRoot",
		doc: `
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  securityContext: {seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: web
    image: ghcr.io/acme/web:1
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
`,
		want: []Violation{{Document: 0, Kind: "Pod", Name: "web",
			Field:   "spec.securityContext.runAsNonRoot",
			Message: `container "web" may run as root: set securityContext.runAsNonRoot to true for the pod (or in each of those containers) (Pod Security Standards "restricted": runAsNonRoot != true)`}},
	}, {
		name: "ClusterRole",
		doc: `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: admin-ish}
rules: [{apiGroups: ["*"], resources: ["*"], verbs: ["*"]}]
`,
		want: []Violation{{Document: 0, Kind: "ClusterRole", Name: "admin-ish", Field: "kind",
			Message: "rbac.authorization.k8s.io/v1 ClusterRole is never allowed: it is an RBAC object, and tenants may not create those; use one of batch/v1 Job, batch/v1 CronJob, apps/v1 Deployment, apps/v1 StatefulSet, v1 Pod, v1 ConfigMap, v1 Service"}},
	}, {
		name: "Secret, a kind outside the default allow-list",
		doc:  `{apiVersion: v1, kind: Secret, metadata: {name: creds}, stringData: {password: hunter2}}`,
		want: []Violation{{Document: 0, Kind: "Secret", Name: "creds", Field: "kind",
			Message: "v1 Secret is not allowed here: use one of batch/v1 Job, batch/v1 CronJob, apps/v1 Deployment, apps/v1 StatefulSet, v1 Pod, v1 ConfigMap, v1 Service"}},
	}, {
		name: "namespace outside the tenant's",
		doc:  `{apiVersion: v1, kind: ConfigMap, metadata: {name: cfg, namespace: team-z}, data: {a: b}}`,
		want: []Violation{{Document: 0, Kind: "ConfigMap", Name: "cfg", Field: "metadata.namespace",
			Message: `namespace "team-z" is not one of this tenant's: use one of ["team-a" "team-b"]`}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := c.Check(tenantRequest(fromYAML(t, tt.doc)))
			if diff := cmp.Diff(tt.want, res.Violations); diff != "" {
				t.Errorf("Check(%s) violations (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// A bundle with problems in every document reports them all, in document order and, within a
// document, in the order the checks run.
func TestCheckBundleReportsEverything(t *testing.T) {
	c := mustChecker(t, Config{TrustedRegistries: []string{"ghcr.io/acme"}})
	bundle := docs(t, `
apiVersion: v1
kind: Namespace
metadata: {name: mine}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: team-c}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      hostNetwork: true
      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: web
        image: nginx:1.27
        imagePullPolicy: Always
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {type: NodePort, selector: {app: web}, ports: [{port: 80, nodePort: 30080}], clusterIp: None}
`)
	res := c.Check(Request{Manifests: bundle, Namespaces: []string{"team-a"}, DefaultNamespace: "team-a"})
	want := []Violation{
		{Document: 0, Kind: "Namespace", Name: "mine", Field: "kind",
			Message: "v1 Namespace is never allowed: it is cluster-scoped, and tenants may not create those; use one of batch/v1 Job, batch/v1 CronJob, apps/v1 Deployment, apps/v1 StatefulSet, v1 Pod, v1 ConfigMap, v1 Service"},
		{Document: 1, Kind: "Deployment", Name: "web", Field: "metadata.namespace",
			Message: `namespace "team-c" is not one of this tenant's: use one of ["team-a"]`},
		{Document: 1, Kind: "Deployment", Name: "web", Field: "spec.template.spec.hostNetwork",
			Message: `the pod shares the host's network namespace: remove hostNetwork or set it to false (Pod Security Standards "restricted": host namespaces)`},
		{Document: 1, Kind: "Deployment", Name: "web", Field: "spec.template.spec.containers[0].image",
			Message: `image "nginx:1.27" (docker.io/library/nginx:1.27) is not from a trusted registry: use an image under ghcr.io/acme`},
		{Document: 2, Kind: "Service", Name: "web", Field: "spec.clusterIp",
			Message: `unknown field "clusterIp": remove it or correct its spelling`},
		{Document: 2, Kind: "Service", Name: "web", Field: "spec.type",
			Message: `Service type "NodePort" is not allowed: remove spec.type or set it to ClusterIP`},
	}
	if diff := cmp.Diff(want, res.Violations); diff != "" {
		t.Errorf("Check(3-document bundle) violations (-want +got):\n%s", diff)
	}
	again := c.Check(Request{Manifests: bundle, Namespaces: []string{"team-a"}, DefaultNamespace: "team-a"})
	if diff := cmp.Diff(res, again); diff != "" {
		t.Errorf("Check(3-document bundle) differs between runs (-first +second):\n%s", diff)
	}
}

func TestCheckKinds(t *testing.T) {
	c := mustChecker(t, Config{})
	tests := []struct {
		name string
		doc  map[string]any
		want []located
	}{
		{"nil document", nil, []located{{0, ""}}},
		{"no apiVersion or kind", map[string]any{"metadata": meta("x")}, []located{{0, "apiVersion"}, {0, "kind"}}},
		{"kind not a string", map[string]any{"apiVersion": "v1", "kind": 3.0}, []located{{0, "kind"}}},
		{"ClusterRoleBinding", map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": meta("x")}, []located{{0, "kind"}}},
		{"Role, namespaced but RBAC, also in a foreign namespace", map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": map[string]any{"name": "r", "namespace": "other"}}, []located{{0, "kind"}, {0, "metadata.namespace"}}},
		{"CustomResourceDefinition", map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": meta("x")}, []located{{0, "kind"}}},
		{"a CRD's kind", map[string]any{"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": meta("x")}, []located{{0, "kind"}}},
		{"Job at another version", map[string]any{"apiVersion": "batch/v1beta1", "kind": "Job", "metadata": meta("x")}, []located{{0, "kind"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := c.Check(tenantRequest(tt.doc))
			if diff := cmp.Diff(tt.want, fieldsOf(res.Violations)); diff != "" {
				t.Errorf("Check(%s) fields (-want +got):\n%s\nviolations: %v", tt.name, diff, res.Violations)
			}
		})
	}
}

func TestCheckService(t *testing.T) {
	c := mustChecker(t, Config{})
	tests := []struct {
		spec string
		want []located
	}{
		{`{ports: [{port: 80}]}`, nil},
		{`{type: ClusterIP, ports: [{port: 80}]}`, nil},
		{`{type: NodePort, ports: [{port: 80}]}`, []located{{0, "spec.type"}}},
		{`{type: LoadBalancer, ports: [{port: 80}]}`, []located{{0, "spec.type"}}},
		{`{type: ExternalName, externalName: example.com}`, []located{{0, "spec.type"}}},
		{`{externalIPs: [1.2.3.4], ports: [{port: 80}]}`, []located{{0, "spec.externalIPs"}}},
	}
	for _, tt := range tests {
		res := c.Check(tenantRequest(fromYAML(t, `{apiVersion: v1, kind: Service, metadata: {name: s}, spec: `+tt.spec+`}`)))
		if diff := cmp.Diff(tt.want, fieldsOf(res.Violations)); diff != "" {
			t.Errorf("Check(Service %s) fields (-want +got):\n%s", tt.spec, diff)
		}
	}
}

func TestCheckSecretWhereAllowed(t *testing.T) {
	c := mustChecker(t, Config{Kinds: []Kind{{"v1", "Secret"}}})
	for typ, want := range map[string][]located{
		"Opaque":                              nil,
		"kubernetes.io/service-account-token": {{0, "type"}},
	} {
		res := c.Check(tenantRequest(map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": meta("s"), "type": typ}))
		if diff := cmp.Diff(want, fieldsOf(res.Violations)); diff != "" {
			t.Errorf("Check(Secret of type %s) fields (-want +got):\n%s", typ, diff)
		}
	}
}

func TestCheckSchema(t *testing.T) {
	c := mustChecker(t, Config{})
	spec := fromYAML(t, goodPodSpec)
	at(spec, "containers", 0)["imagePullPolcy"] = "Always"
	at(spec, "containers", 0, "securityContext")["privileged"] = "no"
	at(spec, "containers", 0, "resources", "limits")["memory"] = "lots"
	at(spec, "containers", 0)["ports"] = []any{map[string]any{"containerPort": 1e12}}
	spec["hostNetwork"] = "false"
	res := c.Check(tenantRequest(workloads[3].wrap(spec)))
	want := []Violation{
		{Document: 0, Kind: "Deployment", Name: "d", Field: "spec.template.spec.containers[0].imagePullPolcy",
			Message: `unknown field "imagePullPolcy": remove it or correct its spelling`},
		{Document: 0, Kind: "Deployment", Name: "d", Field: "spec.template.spec.containers[0].ports[0].containerPort",
			Message: "1000000000000 is out of range for this field"},
		{Document: 0, Kind: "Deployment", Name: "d", Field: "spec.template.spec.containers[0].resources.limits[memory]",
			Message: `"lots" is not a quantity: write one such as 500m, 2, 512Mi or 4Gi`},
		{Document: 0, Kind: "Deployment", Name: "d", Field: "spec.template.spec.containers[0].securityContext.privileged",
			Message: "must be true or false, not a string"},
		{Document: 0, Kind: "Deployment", Name: "d", Field: "spec.template.spec.hostNetwork",
			Message: "must be true or false, not a string"},
	}
	if diff := cmp.Diff(want, res.Violations); diff != "" {
		t.Errorf("Check(Deployment with schema errors) violations (-want +got):\n%s", diff)
	}
}

func TestCheckBoundsSchemaErrors(t *testing.T) {
	c := mustChecker(t, Config{})
	m := fromYAML(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: cfg}}`)
	for i := range 3 * maxFieldErrors {
		m[string(rune('a'+i%26))+string(rune('a'+i/26))] = 1.0
	}
	res := c.Check(tenantRequest(m))
	if got, want := len(res.Violations), maxFieldErrors+1; got != want {
		t.Fatalf("Check(ConfigMap with %d unknown fields) = %d violations, want %d", 3*maxFieldErrors, got, want)
	}
	if last := res.Violations[maxFieldErrors]; last.Message != "100 more problems like the ones above were not listed: fix those and submit again" {
		t.Errorf("Check(ConfigMap with many unknown fields) last violation = %v", last)
	}
}
