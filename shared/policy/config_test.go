package policy

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

func TestConfigValidate(t *testing.T) {
	negative, huge := resource.MustParse("-1"), resource.MustParse("1e999999999")
	tests := []struct {
		name string
		cfg  Config
		want []string // substrings of the error, one per problem; none for a valid config
	}{
		{"zero config: the defaults", Config{}, nil},
		{"the defaults spelt out", Config{Kinds: DefaultKinds()}, nil},
		{"an extra namespaced kind", Config{Kinds: append(DefaultKinds(), Kind{"v1", "Secret"})}, nil},
		{"ClusterRole", Config{Kinds: []Kind{{"rbac.authorization.k8s.io/v1", "ClusterRole"}}},
			[]string{"kind rbac.authorization.k8s.io/v1 ClusterRole can never be allowed, even if configured: it is an RBAC object"}},
		{"Role", Config{Kinds: []Kind{{"rbac.authorization.k8s.io/v1", "Role"}}},
			[]string{"Role can never be allowed, even if configured: it is an RBAC object"}},
		{"Namespace", Config{Kinds: []Kind{{"v1", "Namespace"}}},
			[]string{"kind v1 Namespace can never be allowed, even if configured: it is cluster-scoped"}},
		{"an unknown kind", Config{Kinds: []Kind{{"kubeflow.org/v1", "PyTorchJob"}}},
			[]string{"kind kubeflow.org/v1 PyTorchJob is not one this policy knows how to check"}},
		{"negative caps", Config{MaxCPU: &negative, MaxGPUs: &negative},
			[]string{"MaxGPUs -1 must not be negative", "MaxCPU -1 must not be negative"}},
		{"a ruinous cap", Config{MaxMemory: &huge}, []string{"MaxMemory 1e999999999 is too large to be a cap"}},
		{"pod field allow-lists", Config{Pods: PodFields{Tolerations: []string{"nvidia.com/gpu", "", "bad key!"},
			PriorityClasses: []string{"batch-low"}, RuntimeClasses: []string{"gVisor"}, ServiceAccounts: []string{"builder"}, StorageClasses: []string{"gp3", "io2 "}}},
			[]string{`Tolerations: "" is not a name a pod could give`, `Tolerations: "bad key!"`, `RuntimeClasses: "gVisor"`, `StorageClasses: "io2 "`}},
		{"CSI drivers and node selector keys", Config{Pods: PodFields{CSIDrivers: []string{"ebs.csi.aws.com", "Secrets-Store"},
			NodeSelectorKeys: []string{"karpenter.sh/capacity-type", "node pool"}}},
			[]string{`CSIDrivers: "Secrets-Store" is not a name a pod could give`, `NodeSelectorKeys: "node pool" is not a name a pod could give`}},
		{"storage caps", Config{Pods: PodFields{MaxEphemeralStorage: &negative, MaxVolumeSize: &huge}},
			[]string{"MaxEphemeralStorage -1 must not be negative", "MaxVolumeSize 1e999999999 is too large to be a cap"}},
		{"registry prefixes", Config{TrustedRegistries: []string{"", "https://ghcr.io/acme", "nginx", "ghcr.io/acme"}},
			[]string{"must not be empty", "must not have a scheme", `"nginx" must start with a registry host`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Errorf("Config{%s}.Validate() = %v, want nil", tt.name, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Config{%s}.Validate() = nil, want errors %q", tt.name, tt.want)
			}
			if got := strings.Count(err.Error(), "\n") + 1; got != len(tt.want) {
				t.Errorf("Config{%s}.Validate() reported %d problems, want %d: %v", tt.name, got, len(tt.want), err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Config{%s}.Validate() = %v, want it to say %q", tt.name, err, w)
				}
			}
			if _, err := NewChecker(tt.cfg); err == nil {
				t.Errorf("NewChecker(Config{%s}) accepted an invalid config", tt.name)
			}
		})
	}
}

func TestEveryCheckableKindDecodes(t *testing.T) {
	for k, r := range checkable {
		if never(k) != "" {
			t.Errorf("checkable kind %s is also never allowed", k)
		}
		if r.plan == nil || r.plan.typ == nil {
			t.Errorf("checkable kind %s has no decoding plan", k)
		}
	}
	for _, k := range DefaultKinds() {
		if _, ok := checkable[k]; !ok {
			t.Errorf("default kind %s is not checkable", k)
		}
	}
}
