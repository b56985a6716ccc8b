package devstack_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/dev/devstack"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/signing"
)

// hookSecret is the secret the test registers its webhook with: 32 bytes, as whsec_ base64.
var hookSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("tidegate-dev-stack-webhook-test!"))

// jobEvents are the events of a job that runs to success, in the order they happen.
var jobEvents = []string{"job.queued", "job.dispatched", "job.started", "job.completed"}

// TestWebhooksOnTheDevStack is the webhooks' done-when on `tidegate dev`: a webhook registered
// through the API receives the example Job's events, signed, once each, in the order they
// happened. Then the receiver answers 503 while a second job runs to the end and is mended
// afterwards: every event of that job still arrives, and none is taken twice.
func TestWebhooksOnTheDevStack(t *testing.T) {
	kube := testenv.Kube(t)
	opt := devstack.Options{
		Addr: freeAddr(t), APIKey: "k", Beat: time.Second, WebhooksAllowPrivate: true, Dir: t.TempDir(),
		Standins: &kube, Prefix: fmt.Sprintf("hooks-%d", os.Getpid()),
	}
	st := startDev(t, opt)
	c := client{t: t, url: st.URL}
	rcv := newHookReceiver(t)
	secret, err := signing.ParseSecret(hookSecret)
	if err != nil {
		t.Fatal(err)
	}

	code, body := c.do("POST", "/api/v1/webhooks", mustMarshal(t, map[string]any{"url": rcv.srv.URL + "/hook", "events": jobEvents, "secret": hookSecret}))
	var hook struct {
		ID string `json:"id"`
	}
	if code != 201 || json.Unmarshal([]byte(body), &hook) != nil || hook.ID == "" {
		t.Fatalf("POST /api/v1/webhooks = %d %s, want 201 with the webhook", code, body)
	}

	first := c.submitExample(t, "hooks-1")
	c.waitJob(first, "succeeded")
	got := rcv.waitFor(t, first, len(jobEvents), "the first job's four events")
	if types := typesOf(got); !slices.Equal(types, jobEvents) {
		t.Errorf("the first job's events arrived as %v, want %v: each once, in the order they happened", types, jobEvents)
	}
	for _, r := range got {
		if err := signing.Verify([]signing.Secret{secret}, r.id, r.timestamp, r.signature, r.body, time.Now()); err != nil {
			t.Errorf("signing.Verify refused the %s delivery %s: %v", r.typ, r.id, err)
		}
	}

	// The receiver goes down while the second job runs to its end.
	rcv.answer(http.StatusServiceUnavailable)
	second := c.submitExample(t, "hooks-2")
	c.waitJob(second, "succeeded")
	rcv.waitFor(t, second, len(jobEvents), "a first attempt of each of the second job's events")
	time.Sleep(2 * time.Second)
	rcv.answer(http.StatusOK)
	c.waitDelivered(hook.ID, rcv.ids(second))

	taken := map[string]int{}
	var types []string
	for _, r := range rcv.requests(second) {
		if err := signing.Verify([]signing.Secret{secret}, r.id, r.timestamp, r.signature, r.body, time.Now()); err != nil {
			t.Errorf("signing.Verify refused an attempt of %s (%s): %v", r.id, r.typ, err)
		}
		if r.status == http.StatusOK {
			taken[r.id]++
			types = append(types, r.typ)
		}
	}
	slices.Sort(types)
	if want := slices.Sorted(slices.Values(jobEvents)); !slices.Equal(types, want) {
		t.Errorf("the second job's events taken with a 200: %v, want each of %v", types, want)
	}
	for id, n := range taken {
		if n != 1 {
			t.Errorf("delivery %s was taken %d times, want once", id, n)
		}
	}
	if n := len(rcv.requests(first)); n != len(jobEvents) {
		t.Errorf("the first job's deliveries reached the receiver %d times by the end, want %d", n, len(jobEvents))
	}
}

// hookRequest is one request the receiver got, and what it answered.
type hookRequest struct {
	id, timestamp, signature string
	body                     []byte
	job, typ                 string
	status                   int
}

// hookReceiver is a webhook endpoint on 127.0.0.1 whose answer the test sets.
type hookReceiver struct {
	mu     sync.Mutex
	status int
	got    []hookRequest
	srv    *httptest.Server
}

func newHookReceiver(t *testing.T) *hookReceiver {
	r := &hookReceiver{status: http.StatusOK}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var ev struct {
			Type string `json:"type"`
			Data struct {
				JobID string `json:"job_id"`
			} `json:"data"`
		}
		_ = json.Unmarshal(body, &ev)
		r.mu.Lock()
		status := r.status
		r.got = append(r.got, hookRequest{
			id: req.Header.Get(signing.HeaderID), timestamp: req.Header.Get(signing.HeaderTimestamp),
			signature: req.Header.Get(signing.HeaderSignature), body: body, job: ev.Data.JobID, typ: ev.Type, status: status,
		})
		r.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *hookReceiver) answer(status int) {
	r.mu.Lock()
	r.status = status
	r.mu.Unlock()
}

// requests are the requests about job, in the order they came.
func (r *hookReceiver) requests(job string) []hookRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []hookRequest
	for _, g := range r.got {
		if g.job == job {
			out = append(out, g)
		}
	}
	return out
}

// ids are the distinct webhook-ids of job's requests.
func (r *hookReceiver) ids(job string) []string {
	var out []string
	for _, g := range r.requests(job) {
		if !slices.Contains(out, g.id) {
			out = append(out, g.id)
		}
	}
	return out
}

// waitFor waits until job's requests carry n distinct webhook-ids, and answers its requests.
func (r *hookReceiver) waitFor(t *testing.T, job string, n int, what string) []hookRequest {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if len(r.ids(job)) >= n {
			return r.requests(job)
		}
	}
	t.Fatalf("waiting for %s: job %s's requests so far %v", what, job, typesOf(r.requests(job)))
	return nil
}

func typesOf(rs []hookRequest) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.typ)
	}
	return out
}

// submitExample submits examples/job.yaml, named name-<pid> so that no other test's Job in the
// shared cluster's team-a has its name, and answers the job's id.
func (c client) submitExample(t *testing.T, name string) string {
	return c.submitExampleWith(t, name, nil)
}

// submitExampleWith submits examples/job.yaml as submitExample does, with annotations on its pod
// template.
func (c client) submitExampleWith(t *testing.T, name string, podAnnotations map[string]string) string {
	t.Helper()
	return c.submitExampleEdited(t, name, func(manifest string) string {
		if len(podAnnotations) == 0 {
			return manifest
		}
		meta := "\n  template:\n    metadata:\n      annotations:\n"
		for k, v := range podAnnotations {
			meta += fmt.Sprintf("        %s: %q\n", k, v)
		}
		annotated := strings.Replace(manifest, "\n  template:\n", meta, 1)
		if annotated == manifest {
			t.Fatal("examples/job.yaml no longer has a pod template at spec.template; update submitExampleWith")
		}
		return annotated
	})
}

// submitExampleEdited submits examples/job.yaml as submitExample does, edited by edit.
func (c client) submitExampleEdited(t *testing.T, name string, edit func(manifest string) string) string {
	t.Helper()
	b, err := os.ReadFile("../../../examples/job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	manifest := strings.Replace(string(b), "\n  name: hello\n", fmt.Sprintf("\n  name: %s-%d\n", name, os.Getpid()), 1)
	if manifest == string(b) {
		t.Fatal("examples/job.yaml no longer names its Job hello; update submitExample")
	}
	manifest = edit(manifest)
	req, err := http.NewRequest("POST", c.url+"/api/v1/manifests?namespace=team-a", strings.NewReader(manifest))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer k")
	req.Header.Set("Content-Type", "application/yaml")
	code, body := c.send(req)
	var out struct {
		Job struct {
			ID string `json:"id"`
		} `json:"job"`
	}
	if code != 202 || json.Unmarshal([]byte(body), &out) != nil || out.Job.ID == "" {
		t.Fatalf("POST /api/v1/manifests with examples/job.yaml = %d %s, want 202 with the job", code, body)
	}
	return out.Job.ID
}

// waitJob waits until job id has status.
func (c client) waitJob(id, status string) {
	c.t.Helper()
	var last string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		code, body := c.do("GET", "/api/v1/jobs/"+id, "")
		var j struct {
			Status string `json:"status"`
		}
		if code == 200 && json.Unmarshal([]byte(body), &j) == nil && j.Status == status {
			return
		}
		last = body
	}
	c.t.Fatalf("job %s was not %s within 30 s; last: %s", id, status, last)
}

// waitDelivered waits until each of the deliveries ids of webhook hook has succeeded. One whose
// next attempt is minutes away (two failures in a row put it on the schedule's 5 minutes) is
// sent again through the API's redeliver route, as its owner would once the endpoint is mended:
// the schedule itself is not shortened for the test.
func (c client) waitDelivered(hook string, ids []string) {
	c.t.Helper()
	var last []delivery
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		last = c.deliveries(hook, ids)
		left := 0
		for _, d := range last {
			if d.Status == "succeeded" {
				continue
			}
			left++
			if d.Status == "pending" && d.NextAttemptAt != nil && time.Until(*d.NextAttemptAt) > 30*time.Second {
				// A 409 means an attempt is under way; the next round looks again.
				c.do("POST", "/api/v1/webhooks/"+hook+"/deliveries/"+d.ID+"/redeliver", "")
			}
		}
		if left == 0 && len(last) == len(ids) {
			return
		}
	}
	c.t.Fatalf("the deliveries %v did not all succeed within 30 s of the receiver's recovery: %+v", ids, last)
}

// delivery is what the test reads of a delivery in the webhook's log.
type delivery struct {
	ID            string     `json:"id"`
	Status        string     `json:"status"`
	AttemptCount  int        `json:"attempt_count"`
	NextAttemptAt *time.Time `json:"next_attempt_at"`
}

// deliveries reads hook's log (one page holds this test's eight) and answers the entries of ids.
func (c client) deliveries(hook string, ids []string) []delivery {
	c.t.Helper()
	code, body := c.do("GET", "/api/v1/webhooks/"+hook+"/deliveries?limit=100", "")
	var page struct {
		Items []delivery `json:"items"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &page) != nil {
		c.t.Fatalf("GET deliveries of %s = %d %s", hook, code, body)
	}
	var out []delivery
	for _, d := range page.Items {
		if slices.Contains(ids, d.ID) {
			out = append(out, d)
		}
	}
	return out
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
