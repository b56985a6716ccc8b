package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
)

// TestWebhooks: subscribe a receiver, send it a test event, see the delivery, rotate the secret,
// redeliver, delete. The receiver is a plain HTTP server on loopback, which the dev stack allows.
func TestWebhooks(t *testing.T) {
	h := newHarness(t)
	var received atomic.Int32
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("webhook-signature") != "" {
			received.Add(1)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()

	out := h.ok("webhooks", "create", "--url", receiver.URL+"/hooks", "--event", "job.completed,job.failed", "--event", "webhook.test")
	secret := regexp.MustCompile(`whsec_\S+`).FindString(out)
	if !strings.HasPrefix(out, "webhook ") || secret == "" {
		t.Fatalf("webhooks create printed %q, want the webhook and its secret", out)
	}
	var list struct {
		Items []struct {
			ID     string   `json:"id"`
			URL    string   `json:"url"`
			Events []string `json:"events"`
			Secret string   `json:"secret"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(h.ok("webhooks", "list", "-o", "json")), &list); err != nil || len(list.Items) != 1 {
		t.Fatalf("webhooks list -o json = %+v (%v), want the one webhook", list, err)
	}
	hook := list.Items[0]
	if hook.URL != receiver.URL+"/hooks" || len(hook.Events) != 3 || hook.Secret != "" {
		t.Errorf("listed webhook = %+v, want its URL and three events and never its secret", hook)
	}
	if table := h.ok("webhooks", "list"); !strings.HasPrefix(table, "ID ") || !strings.Contains(table, hook.ID) {
		t.Errorf("webhooks list =\n%s", table)
	}
	if get := h.ok("webhooks", "get", hook.ID); !regexp.MustCompile(`(?m)^Events:\s+job.completed, job.failed, webhook.test$`).MatchString(get) {
		t.Errorf("webhooks get =\n%s", get)
	}

	h.ok("webhooks", "test", hook.ID)
	h.eventually("the test event reaching the receiver", func() bool { return received.Load() >= 1 })
	var deliveries struct {
		Items []struct {
			ID, EventType, Status string
		} `json:"items"`
	}
	h.eventually("the delivery being recorded as succeeded", func() bool {
		_ = json.Unmarshal([]byte(h.ok("webhooks", "deliveries", hook.ID, "-o", "json")), &deliveries)
		return len(deliveries.Items) == 1 && deliveries.Items[0].Status == "succeeded"
	})
	if table := h.ok("webhooks", "deliveries", hook.ID); !strings.Contains(table, "webhook.test") || !strings.Contains(table, "succeeded") {
		t.Errorf("webhooks deliveries =\n%s", table)
	}

	rotated := h.ok("webhooks", "rotate-secret", hook.ID)
	if fresh := regexp.MustCompile(`whsec_\S+`).FindString(rotated); fresh == "" || fresh == secret {
		t.Errorf("rotate-secret printed %q, want a new secret", rotated)
	}
	h.ok("webhooks", "redeliver", hook.ID, deliveries.Items[0].ID)
	h.eventually("the redelivery reaching the receiver", func() bool { return received.Load() >= 2 })

	if out := h.ok("webhooks", "delete", hook.ID); out != "webhook "+hook.ID+" deleted\n" {
		t.Errorf("webhooks delete = %q", out)
	}
	if e := h.fails("webhooks", "get", hook.ID); !strings.Contains(e, "(request id ") {
		t.Errorf("webhooks get after delete printed %q, want the API's not found", e)
	}
	if e := h.fails("webhooks", "create", "--url", "ftp://x", "--event", "job.completed"); !strings.HasPrefix(e, "tidegate: ") || !strings.Contains(e, "url") {
		t.Errorf("a bad receiver URL printed %q, want the API's reason naming url", e)
	}
}

// TestSecrets: set from standard input and from a file, list names only, remove.
func TestSecrets(t *testing.T) {
	h := newHarness(t)
	h.stdin = "postgres://u:p@db/app\n"
	if out := h.ok("secrets", "set", "DATABASE_URL"); out != "secret DATABASE_URL set; the org's apps restart to read it\n" {
		t.Errorf("secrets set = %q", out)
	}
	path := t.TempDir() + "/key.pem"
	writeFile(t, path, "-----BEGIN KEY-----\nabc\n-----END KEY-----\n")
	h.ok("secrets", "set", "TLS_KEY", "--from-file", path)
	list := h.ok("secrets", "list")
	if !regexp.MustCompile(`(?m)^DATABASE_URL\s`).MatchString(list) || !regexp.MustCompile(`(?m)^TLS_KEY\s`).MatchString(list) || strings.Contains(list, "postgres") {
		t.Errorf("secrets list =\n%s\nwant both names and no value", list)
	}
	h.ok("secrets", "rm", "TLS_KEY")
	if list := h.ok("secrets", "list", "-o", "json"); strings.Contains(list, "TLS_KEY") || !strings.Contains(list, "DATABASE_URL") {
		t.Errorf("after rm, secrets list -o json = %s", list)
	}
	h.stdin = "x"
	if e := h.fails("secrets", "set", "lower-case"); !strings.HasPrefix(e, "tidegate: ") || !strings.Contains(e, "(request id ") {
		t.Errorf("a bad secret name printed %q, want the API's reason", e)
	}
	h.stdin = ""
	if e := h.fails("secrets", "set", "EMPTY"); e != "tidegate: no value for EMPTY: pipe it in, type it when asked, or use --from-file\n" {
		t.Errorf("no value printed %q", e)
	}
}
