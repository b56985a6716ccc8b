package apihandler

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/handlers"
	"github.com/tidegate/tidegate/shared/policy"
)

func TestPolicyConfig(t *testing.T) {
	tests := []struct {
		name     string
		settings config.PolicySettings
		want     map[string]string // each cap as the Config holds it; absent is nil
		wantErr  []string          // substrings of the error, one per problem
	}{
		{name: "nothing set: no caps, any registry", want: map[string]string{}},
		{name: "caps and registries",
			settings: config.PolicySettings{MaxGPUs: "0", MaxCPU: "500m", MaxMemory: "64Gi", TrustedRegistries: []string{"ghcr.io/acme"}},
			want:     map[string]string{"MaxGPUs": "0", "MaxCPU": "500m", "MaxMemory": "64Gi"}},
		{name: "two caps that are not quantities",
			settings: config.PolicySettings{MaxCPU: "a lot", MaxMemory: "64 GB"},
			wantErr: []string{config.EnvPolicyMaxCPU + `: "a lot" is not a Kubernetes quantity`,
				config.EnvPolicyMaxMemory + `: "64 GB" is not a Kubernetes quantity`}},
		{name: "a negative cap", settings: config.PolicySettings{MaxGPUs: "-1"},
			wantErr: []string{"MaxGPUs -1 must not be negative"}},
		{name: "a registry without a host", settings: config.PolicySettings{TrustedRegistries: []string{"nginx"}},
			wantErr: []string{config.EnvPolicyRegistries + `: trusted registry prefix "nginx" must start with a registry host`}},
		{name: "pod field allowances",
			settings: config.PolicySettings{AllowNodeName: "true", AllowServiceAccountToken: "false", Tolerations: []string{"nvidia.com/gpu"},
				PriorityClasses: []string{"batch"}, RuntimeClasses: []string{"gvisor"}, ServiceAccounts: []string{"builder"},
				StorageClasses: []string{"gp3"}, MaxEphemeralStorage: "40Gi", MaxVolumeSize: "1Ti",
				CSIDrivers: []string{"ebs.csi.aws.com"}, NodeSelectorKeys: []string{"kubernetes.io/arch"}},
			want: map[string]string{"MaxEphemeralStorage": "40Gi", "MaxVolumeSize": "1Ti"}},
		{name: "pod field allowances that no pod could name",
			settings: config.PolicySettings{AllowNodeName: "yes please", Tolerations: []string{"a b"}, PriorityClasses: []string{"Batch"},
				RuntimeClasses: []string{"g_visor"}, ServiceAccounts: []string{"x/y"}, StorageClasses: []string{"-gp3"},
				MaxEphemeralStorage: "-1", MaxVolumeSize: "lots", CSIDrivers: []string{"Secrets_Store"}, NodeSelectorKeys: []string{"node pool"}},
			wantErr: []string{config.EnvPolicyAllowNodeName + `: "yes please" is not true or false`,
				config.EnvPolicyTolerations + `: Tolerations: "a b"`, config.EnvPolicyPriorityClasses + `: PriorityClasses: "Batch"`,
				config.EnvPolicyRuntimeClasses + `: RuntimeClasses: "g_visor"`, config.EnvPolicyServiceAccounts + `: ServiceAccounts: "x/y"`,
				config.EnvPolicyStorageClasses + `: StorageClasses: "-gp3"`, config.EnvPolicyMaxEphemeralStorage + ": MaxEphemeralStorage -1 must not be negative",
				config.EnvPolicyMaxVolumeSize + `: "lots" is not a Kubernetes quantity`,
				config.EnvPolicyCSIDrivers + `: CSIDrivers: "Secrets_Store"`, config.EnvPolicyNodeSelectorKeys + `: NodeSelectorKeys: "node pool"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := policyConfig(tt.settings)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("policyConfig(%+v) = nil error, want %q", tt.settings, tt.wantErr)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("policyConfig(%+v) = %v, want it to say %q", tt.settings, err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("policyConfig(%+v) = %v", tt.settings, err)
			}
			caps := map[string]string{}
			for name, q := range map[string]*resource.Quantity{"MaxGPUs": got.MaxGPUs, "MaxCPU": got.MaxCPU, "MaxMemory": got.MaxMemory,
				"MaxEphemeralStorage": got.Pods.MaxEphemeralStorage, "MaxVolumeSize": got.Pods.MaxVolumeSize} {
				if q != nil {
					caps[name] = q.String()
				}
			}
			if diff := cmp.Diff(tt.want, caps); diff != "" {
				t.Errorf("policyConfig(%+v) caps (-want +got):\n%s", tt.settings, diff)
			}
			if diff := cmp.Diff(tt.settings.TrustedRegistries, got.TrustedRegistries); diff != "" {
				t.Errorf("policyConfig(%+v) registries (-want +got):\n%s", tt.settings, diff)
			}
			pods := got.Pods
			pods.MaxEphemeralStorage, pods.MaxVolumeSize = nil, nil
			wantPods := policy.PodFields{AllowNodeName: tt.settings.AllowNodeName == "true", AllowServiceAccountToken: tt.settings.AllowServiceAccountToken == "true",
				Tolerations: tt.settings.Tolerations, PriorityClasses: tt.settings.PriorityClasses, RuntimeClasses: tt.settings.RuntimeClasses,
				ServiceAccounts: tt.settings.ServiceAccounts, StorageClasses: tt.settings.StorageClasses,
				CSIDrivers: tt.settings.CSIDrivers, NodeSelectorKeys: tt.settings.NodeSelectorKeys}
			if diff := cmp.Diff(wantPods, pods); diff != "" {
				t.Errorf("policyConfig(%+v) pod fields (-want +got):\n%s", tt.settings, diff)
			}
		})
	}
}

// apiConfig is a Config the API starts with; no setting in it reaches a server.
func apiConfig() config.Config {
	return config.Config{
		JobsTable: "jobs", EventsTable: "events", ControlTable: "control", SourcesBucket: "sources",
		DispatchQueueURL: "http://127.0.0.1:9/dispatch", WebhookQueueURL: "http://127.0.0.1:9/webhook",
		Regions: map[string]string{"us-east-1": "a"}, HostingRegion: "us-east-1",
		KMSKey: "alias/tidegate-secrets",
		// As config.Parse leaves it with nothing set: the API reads the container defaults.
		Isolation: config.IsolationSettings{PodsPerJob: config.DefaultPodsPerJob},
	}
}

func TestNewRefusesWhatItCannotStartWith(t *testing.T) {
	noKey := apiConfig()
	noKey.KMSKey = ""
	badPolicy := apiConfig()
	badPolicy.Policy.MaxCPU = "a lot"
	badRuntime := apiConfig()
	badRuntime.Policy.RuntimeClasses = []string{"G Visor"}
	badDefault := apiConfig()
	badDefault.Isolation.DefaultCPURequest = "some"
	for _, tt := range []struct {
		name string
		cfg  config.Config
		want string
	}{
		{"no KMS key", noKey, config.EnvKMSKey + " is not set"},
		{"a cap that is not a quantity", badPolicy, config.EnvPolicyMaxCPU},
		{"a runtime class no pod could name", badRuntime, config.EnvPolicyRuntimeClasses + `: RuntimeClasses: "G Visor"`},
		// A job's demand counts a container that sets nothing at this request.
		{"a container default that is not a quantity", badDefault, config.EnvContainerCPURequest},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg, handlers.NewClients(aws.Config{Region: "us-east-1"}, tt.cfg), nil, discard(), nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New with %s = %v, want an error saying %q", tt.name, err, tt.want)
			}
		})
	}
}

// The API wired here answers without reaching a store or a cluster where it needs neither.
func TestNewServesHealthz(t *testing.T) {
	cfg := apiConfig()
	api, err := New(cfg, handlers.NewClients(aws.Config{Region: "us-east-1"}, cfg), nil, discard(), nil)
	if err != nil {
		t.Fatalf("New = %v", err)
	}
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != http.StatusOK || strings.TrimSpace(rec.Body.String()) != `{"status":"ok"}` {
		t.Errorf("GET /healthz = %d %s, want 200 {\"status\":\"ok\"}", rec.Code, rec.Body)
	}
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// The clusters' capacity-type label is always one a pod may select nodes by, beside the listed
// keys or the policy's default ones.
func TestWithCapacityLabel(t *testing.T) {
	defaults := policy.DefaultNodeSelectorKeys()
	tests := []struct {
		name  string
		keys  []string
		label string
		want  []string
	}{
		{"Karpenter's, among the defaults", nil, "karpenter.sh/capacity-type", defaults},
		{"EKS's, beside the defaults", nil, "eks.amazonaws.com/capacityType", append(policy.DefaultNodeSelectorKeys(), "eks.amazonaws.com/capacityType")},
		{"beside the listed keys", []string{"kubernetes.io/arch"}, "karpenter.sh/capacity-type", []string{"kubernetes.io/arch", "karpenter.sh/capacity-type"}},
		{"already listed", []string{"karpenter.sh/capacity-type"}, "karpenter.sh/capacity-type", []string{"karpenter.sh/capacity-type"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, withCapacityLabel(tt.keys, tt.label)); diff != "" {
			t.Errorf("withCapacityLabel(%v, %q), %s (-want +got):\n%s", tt.keys, tt.label, tt.name, diff)
		}
	}
}
