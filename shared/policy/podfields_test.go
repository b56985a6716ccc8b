package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
)

func quantity(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}

// claimVolume is a pod volume whose ephemeral claim has spec (YAML).
func claimVolume(t testing.TB, spec string) map[string]any {
	return map[string]any{"name": "scratch", "ephemeral": map[string]any{"volumeClaimTemplate": map[string]any{"spec": fromYAML(t, spec)}}}
}

// podFieldCases each set one pod field a hostile tenant would use to leave its namespace. field
// is the violation's path under the pod spec; allow is a config that admits it, nil if none may.
func podFieldCases(t testing.TB) []struct {
	name   string
	mutate func(s map[string]any)
	field  string
	allow  *Config
} {
	volumes := func(vs ...map[string]any) func(s map[string]any) {
		return func(s map[string]any) { s["volumes"] = anys(vs) }
	}
	emptyDir := func(name, yaml string) map[string]any {
		return map[string]any{"name": name, "emptyDir": fromYAML(t, yaml)}
	}
	return []struct {
		name   string
		mutate func(s map[string]any)
		field  string
		allow  *Config
	}{
		{"nodeName", func(s map[string]any) { s["nodeName"] = "hosting-1" }, ".nodeName",
			&Config{Pods: PodFields{AllowNodeName: true}}},
		{"toleration of an unlisted taint", func(s map[string]any) {
			s["tolerations"] = []any{fromYAML(t, `{key: tidegate.io/hosting, operator: Exists, effect: NoSchedule}`)}
		}, ".tolerations[0].key", &Config{Pods: PodFields{Tolerations: []string{"tidegate.io/hosting"}}}},
		{"toleration of every taint", func(s map[string]any) {
			s["tolerations"] = []any{fromYAML(t, `{operator: Exists}`)}
		}, ".tolerations[0].key", nil},
		{"priorityClassName", func(s map[string]any) { s["priorityClassName"] = "system-cluster-critical" }, ".priorityClassName",
			&Config{Pods: PodFields{PriorityClasses: []string{"system-cluster-critical"}}}},
		{"runtimeClassName", func(s map[string]any) { s["runtimeClassName"] = "gvisor" }, ".runtimeClassName",
			&Config{Pods: PodFields{RuntimeClasses: []string{"gvisor"}}}},
		{"serviceAccountName", func(s map[string]any) { s["serviceAccountName"] = "tidegate-dispatch" }, ".serviceAccountName",
			&Config{Pods: PodFields{ServiceAccounts: []string{"tidegate-dispatch"}}}},
		{"serviceAccount, the deprecated spelling", func(s map[string]any) { s["serviceAccount"] = "tidegate-dispatch" }, ".serviceAccount",
			&Config{Pods: PodFields{ServiceAccounts: []string{"tidegate-dispatch"}}}},
		{"automountServiceAccountToken true", func(s map[string]any) { s["automountServiceAccountToken"] = true }, ".automountServiceAccountToken",
			&Config{Pods: PodFields{AllowServiceAccountToken: true}}},
		{"projected service account token", volumes(map[string]any{"name": "token", "projected": fromYAML(t,
			`{sources: [{configMap: {name: ca}}, {serviceAccountToken: {path: token, audience: sts.amazonaws.com}}]}`)}),
			".volumes[0].projected.sources[1].serviceAccountToken", &Config{Pods: PodFields{AllowServiceAccountToken: true}}},
		{"emptyDir without sizeLimit", volumes(emptyDir("scratch", `{}`)), ".volumes[0].emptyDir.sizeLimit", nil},
		{"memory emptyDir without sizeLimit", volumes(emptyDir("shm", `{medium: Memory}`)), ".volumes[0].emptyDir.sizeLimit", nil},
		{"emptyDir sizeLimit 0, which is no limit", volumes(emptyDir("scratch", `{sizeLimit: "0"}`)), ".volumes[0].emptyDir.sizeLimit", nil},
		{"emptyDirs on disk over the ephemeral storage cap together",
			volumes(emptyDir("a", `{sizeLimit: 15Gi}`), emptyDir("shm", `{medium: Memory, sizeLimit: 15Gi}`), emptyDir("b", `{sizeLimit: 15Gi}`)),
			".volumes[2].emptyDir.sizeLimit", &Config{Pods: PodFields{MaxEphemeralStorage: quantity("30Gi")}}},
		{"ephemeral storage over the cap", func(s map[string]any) {
			at(s, "containers", 0, "resources", "limits")["ephemeral-storage"] = "21Gi"
		}, ".containers[0].resources", &Config{Pods: PodFields{MaxEphemeralStorage: quantity("21Gi")}}},
		{"ephemeral volume binding a PersistentVolume by name",
			volumes(claimVolume(t, `{volumeName: team-b-data, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}`)),
			".volumes[0].ephemeral.volumeClaimTemplate.spec.volumeName", nil},
		{"ephemeral volume of an unlisted storage class",
			volumes(claimVolume(t, `{storageClassName: io2, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}`)),
			".volumes[0].ephemeral.volumeClaimTemplate.spec.storageClassName", &Config{Pods: PodFields{StorageClasses: []string{"io2"}}}},
		{"ephemeral volume of the empty storage class, which binds existing volumes",
			volumes(claimVolume(t, `{storageClassName: "", accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}`)),
			".volumes[0].ephemeral.volumeClaimTemplate.spec.storageClassName", nil},
		{"ephemeral volume over the size cap",
			volumes(claimVolume(t, `{accessModes: [ReadWriteOnce], resources: {requests: {storage: 51Gi}}}`)),
			".volumes[0].ephemeral.volumeClaimTemplate.spec.resources.requests[storage]", &Config{Pods: PodFields{MaxVolumeSize: quantity("1Ti")}}},
		{"inline CSI volume of an unlisted driver", volumes(map[string]any{"name": "secrets", "csi": fromYAML(t,
			`{driver: secrets-store.csi.k8s.io, readOnly: true, volumeAttributes: {secretProviderClass: team-b-db}}`)}),
			".volumes[0].csi.driver", &Config{Pods: PodFields{CSIDrivers: []string{"secrets-store.csi.k8s.io"}}}},
		{"nodeSelector on an unlisted label", func(s map[string]any) {
			s["nodeSelector"] = map[string]any{"karpenter.sh/capacity-type": "spot", "eks.amazonaws.com/nodegroup": "system"}
		}, ".nodeSelector[eks.amazonaws.com/nodegroup]", &Config{Pods: PodFields{NodeSelectorKeys: []string{"karpenter.sh/capacity-type", "eks.amazonaws.com/nodegroup"}}}},
		{"required node affinity on an unlisted label", func(s map[string]any) {
			s["affinity"] = fromYAML(t, `{nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [
				{matchExpressions: [{key: kubernetes.io/arch, operator: In, values: [arm64]}]},
				{matchExpressions: [{key: topology.kubernetes.io/zone, operator: Exists}, {key: node-role.kubernetes.io/control-plane, operator: Exists}]}]}}}`)
		}, ".affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[1].matchExpressions[1].key",
			&Config{Pods: PodFields{NodeSelectorKeys: []string{"kubernetes.io/arch", "topology.kubernetes.io/zone", "node-role.kubernetes.io/control-plane"}}}},
		{"preferred node affinity on an unlisted label", func(s map[string]any) {
			s["affinity"] = fromYAML(t, `{nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [
				{weight: 100, preference: {matchExpressions: [{key: karpenter.k8s.aws/instance-size, operator: In, values: [48xlarge]}]}}]}}`)
		}, ".affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].key",
			&Config{Pods: PodFields{NodeSelectorKeys: []string{"karpenter.k8s.aws/instance-size"}}}},
		{"node affinity picking a node by name", func(s map[string]any) {
			s["affinity"] = fromYAML(t, `{nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [
				{matchFields: [{key: metadata.name, operator: In, values: [hosting-1]}]}]}}}`)
		}, ".affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].key",
			&Config{Pods: PodFields{NodeSelectorKeys: []string{"metadata.name"}}}},
		{"pod affinity naming another namespace", func(s map[string]any) {
			s["affinity"] = fromYAML(t, `{podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [
				{topologyKey: kubernetes.io/hostname, namespaces: [team-a, team-c], labelSelector: {matchLabels: {app: db}}}]}}`)
		}, ".affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].namespaces[1]", nil},
		{"preferred pod affinity selecting every namespace", func(s map[string]any) {
			s["affinity"] = fromYAML(t, `{podAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [
				{weight: 100, podAffinityTerm: {topologyKey: kubernetes.io/hostname, namespaceSelector: {}, labelSelector: {matchLabels: {app: db}}}}]}}`)
		}, ".affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.namespaceSelector", nil},
		{"pod anti-affinity selecting namespaces by label", func(s map[string]any) {
			s["affinity"] = fromYAML(t, `{podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [
				{topologyKey: kubernetes.io/hostname, namespaceSelector: {matchLabels: {tenant: b}}}]}}`)
		}, ".affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].namespaceSelector", nil},
		{"preferred pod anti-affinity naming another namespace", func(s map[string]any) {
			s["affinity"] = fromYAML(t, `{podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [
				{weight: 1, podAffinityTerm: {topologyKey: kubernetes.io/hostname, namespaces: [kube-system]}}]}}`)
		}, ".affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.namespaces[0]", nil},
	}
}

// Each field is refused, naming it, in a Pod and in every kind's pod template; and admitted
// where the config allows it.
func TestCheckPodFieldsInEveryKind(t *testing.T) {
	strict := mustChecker(t, Config{})
	for _, m := range podFieldCases(t) {
		for _, w := range workloads {
			t.Run(w.kind.Kind+"/"+m.name, func(t *testing.T) {
				spec := fromYAML(t, goodPodSpec)
				m.mutate(spec)
				res := strict.Check(tenantRequest(w.wrap(spec)))
				want := []located{{0, w.specPath + m.field}}
				if diff := cmp.Diff(want, fieldsOf(res.Violations)); diff != "" {
					t.Errorf("Check(%s with %s) fields (-want +got):\n%s\nviolations: %v", w.kind, m.name, diff, res.Violations)
				}
				if m.allow == nil {
					return
				}
				spec = fromYAML(t, goodPodSpec)
				m.mutate(spec)
				if res := mustChecker(t, *m.allow).Check(tenantRequest(w.wrap(spec))); !res.Allowed() {
					t.Errorf("Check(%s with %s) under %+v = %v, want it allowed", w.kind, m.name, m.allow.Pods, res.Violations)
				}
			})
		}
	}
}

// What stays allowed with nothing configured: the default service account, a toleration-free
// pod, an emptyDir with a limit, a token not mounted, a claim of the default class within the
// caps, the default node labels, and pod affinity within the pod's own namespace.
func TestCheckPodFieldsDefaultsAdmit(t *testing.T) {
	c := mustChecker(t, Config{})
	for _, w := range workloads {
		spec := fromYAML(t, goodPodSpec)
		spec["serviceAccountName"] = "default"
		spec["serviceAccount"] = "default"
		spec["automountServiceAccountToken"] = false
		at(spec, "containers", 0, "resources", "limits")["ephemeral-storage"] = "20Gi"
		spec["volumes"] = []any{
			map[string]any{"name": "a", "emptyDir": fromYAML(t, `{sizeLimit: 5Gi}`)},
			map[string]any{"name": "shm", "emptyDir": fromYAML(t, `{medium: Memory, sizeLimit: 64Gi}`)},
			map[string]any{"name": "b", "emptyDir": fromYAML(t, `{sizeLimit: 15Gi}`)},
			claimVolume(t, `{accessModes: [ReadWriteOnce], resources: {requests: {storage: 50Gi}, limits: {storage: 50Gi}}}`),
			map[string]any{"name": "cm", "projected": fromYAML(t, `{sources: [{configMap: {name: ca}}]}`)},
		}
		// Every default node label, in the nodeSelector and in node affinity's terms, and pod
		// (anti-)affinity within the pod's own namespace, by name or by leaving it out.
		spec["nodeSelector"] = map[string]any{"karpenter.sh/capacity-type": "spot", "nvidia.com/gpu.product": "NVIDIA-A10G"}
		spec["affinity"] = fromYAML(t, `{
			nodeAffinity: {
				requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [
					{key: node.kubernetes.io/instance-type, operator: In, values: [g5.xlarge, g5.2xlarge]},
					{key: kubernetes.io/arch, operator: In, values: [amd64]}]}]},
				preferredDuringSchedulingIgnoredDuringExecution: [{weight: 50, preference: {matchExpressions: [
					{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a]}]}}]},
			podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [
				{topologyKey: kubernetes.io/hostname, namespaces: [team-a], labelSelector: {matchLabels: {app: x}}}]},
			podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [
				{weight: 10, podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: x}}}}]}}`)
		if res := c.Check(tenantRequest(w.wrap(spec))); !res.Allowed() {
			t.Errorf("Check(%s within the defaults) = %v, want no violation", w.kind, res.Violations)
		}
	}
}

func TestCheckPodFieldsMessages(t *testing.T) {
	c := mustChecker(t, Config{Pods: PodFields{PriorityClasses: []string{"batch-low", "batch-high"}}})
	spec := fromYAML(t, goodPodSpec)
	spec["priorityClassName"] = "system-node-critical"
	spec["serviceAccountName"] = "admin"
	spec["volumes"] = []any{
		map[string]any{"name": "scratch", "emptyDir": map[string]any{}},
		claimVolume(t, `{storageClassName: "", resources: {requests: {storage: 1Gi}}}`),
	}
	res := c.Check(tenantRequest(workloads[2].wrap(spec)))
	const pod = "spec.jobTemplate.spec.template.spec"
	v := func(field, message string) Violation {
		return Violation{Document: 0, Kind: "CronJob", Name: "cj", Field: pod + field, Message: message}
	}
	want := []Violation{
		v(".priorityClassName", `priority class "system-node-critical" is not allowed (a higher priority preempts other tenants' pods): remove priorityClassName, or use one of batch-low, batch-high`),
		v(".serviceAccountName", `service account "admin" is not allowed (it may hold permissions meant for another workload): remove serviceAccountName to run as "default"`),
		v(".volumes[0].emptyDir.sizeLimit", `emptyDir volume "scratch" has no sizeLimit, so it can fill its node's disk: set sizeLimit, e.g. 1Gi`),
		v(".volumes[1].ephemeral.volumeClaimTemplate.spec.storageClassName", `storageClassName "" binds the claim to an existing PersistentVolume, which may hold another tenant's data: remove storageClassName to use the cluster's default class`),
	}
	if diff := cmp.Diff(want, res.Violations); diff != "" {
		t.Errorf("Check(CronJob with four pod fields refused) violations (-want +got):\n%s", diff)
	}
}

// A StatefulSet's claim templates, and a PersistentVolumeClaim where an operator allows the
// kind, are claims like a pod's ephemeral volumes.
func TestCheckClaimsOutsideThePod(t *testing.T) {
	sts := func(claim string) map[string]any {
		m := workloads[4].wrap(fromYAML(t, goodPodSpec))
		at(m, "spec")["volumeClaimTemplates"] = []any{map[string]any{"metadata": meta("data"), "spec": fromYAML(t, claim)}}
		return m
	}
	pvc := func(claim string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta("data"), "spec": fromYAML(t, claim)}
	}
	kinds := append(DefaultKinds(), Kind{"v1", "PersistentVolumeClaim"})
	strict := mustChecker(t, Config{Kinds: kinds})
	allowing := mustChecker(t, Config{Kinds: kinds, Pods: PodFields{StorageClasses: []string{"gp3"}, MaxVolumeSize: quantity("100Gi")}})
	tests := []struct {
		name      string
		doc       map[string]any
		field     string // "" when admitted by default
		allowable bool
	}{
		{"StatefulSet claim of the default class", sts(`{accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}}`), "", true},
		{"StatefulSet claim naming a volume", sts(`{volumeName: pv-1, accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}}`),
			"spec.volumeClaimTemplates[0].spec.volumeName", false},
		{"StatefulSet claim of an unlisted class", sts(`{storageClassName: gp3, accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}}`),
			"spec.volumeClaimTemplates[0].spec.storageClassName", true},
		{"StatefulSet claim over the cap", sts(`{accessModes: [ReadWriteOnce], resources: {requests: {storage: 80Gi}}}`),
			"spec.volumeClaimTemplates[0].spec.resources.requests[storage]", true},
		{"PersistentVolumeClaim naming a volume", pvc(`{volumeName: pv-1, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}`),
			"spec.volumeName", false},
		{"PersistentVolumeClaim with a limit over the cap", pvc(`{accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}, limits: {storage: 60Gi}}}`),
			"spec.resources.limits[storage]", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want []located
			if tt.field != "" {
				want = []located{{0, tt.field}}
			}
			if diff := cmp.Diff(want, fieldsOf(strict.Check(tenantRequest(tt.doc)).Violations)); diff != "" {
				t.Errorf("Check(%s) fields (-want +got):\n%s", tt.name, diff)
			}
			if res := allowing.Check(tenantRequest(tt.doc)); res.Allowed() != tt.allowable {
				t.Errorf("Check(%s) where gp3 and 100Gi are allowed: allowed = %v, want %v: %v", tt.name, res.Allowed(), tt.allowable, res.Violations)
			}
		})
	}
}
