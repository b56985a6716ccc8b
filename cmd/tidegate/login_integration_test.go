package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestLoginAndContexts: the dev stack's context works with no setup; login checks a key before
// saving it, in a file only its owner reads; contexts switch; a context's key never goes to
// another URL.
func TestLoginAndContexts(t *testing.T) {
	h := newHarness(t)
	path, err := configPath()
	if err != nil {
		t.Fatal(err)
	}
	h.ok("jobs", "list") // through the context "dev" the stack saved

	h.stdin = "tg_wrong\n"
	if e := h.fails("login", "--url", h.state.URL, "--context", "staging"); !strings.HasPrefix(e, "tidegate: checking the credentials with "+h.state.URL+": the API key is not valid") {
		t.Errorf("login with a wrong key printed %q", e)
	}
	if cfg, _ := loadConfig(path); cfg.Current != devContext || len(cfg.Contexts) != 1 {
		t.Errorf("after a refused login the config is %+v, want only dev, current", cfg)
	}

	h.stdin = h.state.APIKey + "\n"
	if out := h.ok("login", "--url", h.state.URL+"/", "--context", "staging"); !strings.HasPrefix(out, `logged in to `+h.state.URL+` as context "staging"`) {
		t.Errorf("login printed %q", out)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("config file %s: %v, mode %v; want 0600", path, err, info.Mode().Perm())
	}
	cfg, _ := loadConfig(path)
	if cfg.Current != "staging" || cfg.Contexts["staging"].APIKey != h.state.APIKey || cfg.Contexts["staging"].URL != h.state.URL {
		t.Errorf("after login the config is %+v, want staging current with the key", cfg)
	}
	h.ok("queue", "stats")
	h.ok("queue", "stats", "--context", "dev")
	if out := h.ok("login", "--context", "dev"); out != `using context "dev": `+h.state.URL+"\n" {
		t.Errorf("switching context printed %q", out)
	}
	if e := h.fails("jobs", "list", "--context", "prod"); !strings.HasPrefix(e, `tidegate: no context "prod" in `+path+"; the saved ones are: dev, staging") {
		t.Errorf("an unknown context printed %q", e)
	}

	// Another URL gets no key from the context: the key must come with it.
	t.Setenv(envURL, "http://127.0.0.1:9")
	if e := h.fails("jobs", "list"); e != "tidegate: no credentials for http://127.0.0.1:9: set TIDEGATE_API_KEY, sign with an AWS profile (--profile), or save them with `tidegate login --url http://127.0.0.1:9`\n" {
		t.Errorf("another URL without a key printed %q", e)
	}
	t.Setenv(envAPIKey, "tg_x")
	if e := h.fails("jobs", "list"); !regexp.MustCompile(`^tidegate: reaching the API at 127\.0\.0\.1:9: .*connection refused\n$`).MatchString(e) {
		t.Errorf("an unreachable API printed %q", e)
	}
	if e := h.fails("jobs", "list", "--url", "not a url"); e != "tidegate: the API URL \"not a url\" is not an http(s) URL such as https://api.example.com\n" {
		t.Errorf("a bad --url printed %q", e)
	}
}

// TestNoAPIConfigured: with nothing saved and nothing set, a command says how to choose an API.
func TestNoAPIConfigured(t *testing.T) {
	for _, v := range []string{envURL, envAPIKey, envContext} {
		t.Setenv(v, "")
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	h := &harness{t: t}
	if e := h.fails("jobs", "list"); e != "tidegate: "+msgNoURL+"\n" {
		t.Errorf("with no API configured, jobs list printed %q", e)
	}
}
