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
			wantErr: []string{`"nginx" must start with a registry host`}},
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
			for name, q := range map[string]*resource.Quantity{"MaxGPUs": got.MaxGPUs, "MaxCPU": got.MaxCPU, "MaxMemory": got.MaxMemory} {
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
	}
}

func TestNewRefusesWhatItCannotStartWith(t *testing.T) {
	noKey := apiConfig()
	noKey.KMSKey = ""
	badPolicy := apiConfig()
	badPolicy.Policy.MaxCPU = "a lot"
	for _, tt := range []struct {
		name string
		cfg  config.Config
		want string
	}{
		{"no KMS key", noKey, config.EnvKMSKey + " is not set"},
		{"a cap that is not a quantity", badPolicy, config.EnvPolicyMaxCPU},
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
