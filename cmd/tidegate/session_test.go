package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/google/go-cmp/cmp"
)

// withConfig points the CLI at a config folder of the test's own holding cfg, with the
// environment cleared.
func withConfig(t *testing.T, cfg cliConfig) {
	t.Helper()
	for _, v := range []string{envURL, envAPIKey, envContext, envProfile} {
		t.Setenv(v, "")
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	path, err := configPath()
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.save(path); err != nil {
		t.Fatal(err)
	}
}

// TestResolve: a flag beats the environment, which beats the context; a context's credentials go
// only to its own URL.
func TestResolve(t *testing.T) {
	cfg := cliConfig{Current: "prod", Contexts: map[string]cliContext{
		"prod": {URL: "https://prod.example.com", APIKey: "tg_prod"},
		"iam":  {URL: "https://abc.execute-api.eu-west-1.amazonaws.com", Profile: "ops", Region: "eu-west-1"},
	}}
	tests := []struct {
		name    string
		flags   session
		env     map[string]string
		want    target
		wantErr string
	}{
		{"current context", session{}, nil, target{url: "https://prod.example.com", apiKey: "tg_prod"}, ""},
		{"context flag", session{context: "iam"}, nil, target{url: "https://abc.execute-api.eu-west-1.amazonaws.com", profile: "ops", region: "eu-west-1"}, ""},
		{"context variable", session{}, map[string]string{envContext: "iam"}, target{url: "https://abc.execute-api.eu-west-1.amazonaws.com", profile: "ops", region: "eu-west-1"}, ""},
		{"AWS_PROFILE picks the IAM context's profile", session{context: "iam"}, map[string]string{envProfile: "other"}, target{url: "https://abc.execute-api.eu-west-1.amazonaws.com", profile: "other", region: "eu-west-1"}, ""},
		{"AWS_PROFILE leaves a key context alone", session{}, map[string]string{envProfile: "other"}, target{url: "https://prod.example.com", apiKey: "tg_prod"}, ""},
		{"key variable", session{}, map[string]string{envAPIKey: "tg_env"}, target{url: "https://prod.example.com", apiKey: "tg_env"}, ""},
		{"url and key variables", session{}, map[string]string{envURL: "http://127.0.0.1:8080", envAPIKey: "tg_env"}, target{url: "http://127.0.0.1:8080", apiKey: "tg_env"}, ""},
		{"url flag beats variable", session{url: "https://prod.example.com/"}, map[string]string{envURL: "http://x"}, target{url: "https://prod.example.com/", apiKey: "tg_prod"}, ""},
		{"profile flag", session{profile: "dev-admin"}, nil, target{url: "https://prod.example.com", profile: "dev-admin"}, ""},
		{"context key not sent elsewhere", session{url: "https://evil.example.com"}, nil, target{}, "no credentials for https://evil.example.com"},
		{"unknown context", session{context: "nope"}, nil, target{}, `no context "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			withConfig(t, cfg)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			got, err := tt.flags.resolve()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("resolve = %+v, %v; want an error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(target{})); diff != "" {
				t.Errorf("resolve (-want +got):\n%s", diff)
			}
		})
	}
}

// TestProfileSignsRequests: with --profile the CLI signs with that profile's credentials for
// execute-api in the profile's region, and the signature holds for the request that arrives, as
// API Gateway checks it. The gateway here is a small recorder that re-signs what it received.
func TestProfileSignsRequests(t *testing.T) {
	withConfig(t, cliConfig{})
	dir := t.TempDir()
	creds := filepath.Join(dir, "credentials")
	conf := filepath.Join(dir, "config")
	writeFile(t, creds, "[tg]\naws_access_key_id = AKIDTEST\naws_secret_access_key = SECRETTEST\n")
	writeFile(t, conf, "[profile tg]\nregion = eu-west-1\n")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", creds)
	t.Setenv("AWS_CONFIG_FILE", conf)
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")

	var problem string
	gateway := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		problem = checkSignature(r, "AKIDTEST", "SECRETTEST", "eu-west-1")
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"items":[],"next_cursor":null}`)
	}))
	defer gateway.Close()

	h := &harness{t: t}
	if out := h.ok("jobs", "list", "--url", gateway.URL, "--profile", "tg", "--status", "queued", "-o", "json"); !strings.Contains(out, `"items": []`) {
		t.Errorf("jobs list through the gateway printed %q", out)
	}
	if problem != "" {
		t.Error(problem)
	}
}

// checkSignature re-signs what arrived with the caller's credentials and reports any difference.
func checkSignature(r *http.Request, key, secret, region string) string {
	got := r.Header.Get("Authorization")
	if !strings.HasPrefix(got, "AWS4-HMAC-SHA256 Credential="+key+"/") || !strings.Contains(got, "/"+region+"/execute-api/aws4_request") {
		return "Authorization " + got + " is not a SigV4 signature by " + key + " for execute-api in " + region
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return "X-Amz-Date: " + err.Error()
	}
	body, _ := io.ReadAll(r.Body)
	sum := sha256.Sum256(body)
	again, _ := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), nil)
	_, signed, _ := strings.Cut(got, "SignedHeaders=")
	signed, _, _ = strings.Cut(signed, ",")
	for _, h := range strings.Split(signed, ";") {
		if h != "host" {
			again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	again.Header.Del("Authorization")
	c := credentials.NewStaticCredentialsProvider(key, secret, "")
	v, _ := c.Retrieve(context.Background())
	if err := v4.NewSigner().SignHTTP(context.Background(), v, again, hex.EncodeToString(sum[:]), "execute-api", region, at); err != nil {
		return "re-signing: " + err.Error()
	}
	if want := again.Header.Get("Authorization"); want != got {
		return "signature does not hold for the request received:\n got  " + got + "\n want " + want
	}
	return ""
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
