package kube

import (
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/ekstoken"
)

func TestRetryOn401(t *testing.T) {
	tests := []struct {
		name     string
		wantBody bool
		call     func(ctx context.Context, cs kubernetes.Interface) error
	}{
		{"list without a body", false, func(ctx context.Context, cs kubernetes.Interface) error {
			_, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
			return err
		}},
		{"create with a body", true, func(ctx context.Context, cs kubernetes.Interface) error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"k": "v"}}
			_, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newAPIServer(t, func(tok string) bool { return tok == "tok-1" })
			cs, tokens, _ := eksClientFor(t, api)
			if err := tt.call(context.Background(), cs); err != nil {
				t.Fatalf("%s after one 401: %v", tt.name, err)
			}
			seen := api.requests()
			if diff := cmp.Diff([]string{"tok-1", "tok-2"}, tokensOf(seen)); diff != "" {
				t.Errorf("%s: tokens the API server saw (-want +got):\n%s", tt.name, diff)
			}
			if (seen[0].body != "") != tt.wantBody || seen[0].body != seen[1].body {
				t.Errorf("%s: the retry sent body %q, the first try %q", tt.name, seen[1].body, seen[0].body)
			}
			if tokens.count() != 2 {
				t.Errorf("%s: tokens made = %d, want 2", tt.name, tokens.count())
			}
		})
	}
}

func TestRetryOn401OnlyOnce(t *testing.T) {
	api := newAPIServer(t, func(string) bool { return true })
	cs, tokens, _ := eksClientFor(t, api)
	_, err := cs.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
	if !apierrors.IsUnauthorized(err) {
		t.Fatalf("listing at a server refusing every token: error = %v, want Unauthorized", err)
	}
	if diff := cmp.Diff([]string{"tok-1", "tok-2"}, tokensOf(api.requests())); diff != "" {
		t.Errorf("tokens the API server saw (-want +got):\n%s", diff)
	}
	if tokens.count() != 2 {
		t.Errorf("tokens made = %d, want 2", tokens.count())
	}
}

func TestNoRetryForOneShotBody(t *testing.T) {
	api := newAPIServer(t, func(string) bool { return true })
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	tokens := &fakeTokens{now: clock.Now}
	b := &bearer{next: api.Client().Transport, tokens: newTokenSource(func(ctx context.Context) (ekstoken.Token, error) {
		return tokens.Token(ctx, "us-east-1", "prod")
	}, clock.Now)}
	// io.NopCloser hides the reader's type from http.NewRequest, so it sets no GetBody.
	req, err := http.NewRequest(http.MethodPost, api.URL+"/api/v1/namespaces", io.NopCloser(strings.NewReader(`{}`)))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := b.RoundTrip(req)
	if err != nil {
		t.Fatalf("RoundTrip(one-shot body): %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || len(api.requests()) != 1 || tokens.count() != 1 {
		t.Errorf("RoundTrip(one-shot body) = %d after %d requests and %d tokens, want 401 after 1 and 1",
			resp.StatusCode, len(api.requests()), tokens.count())
	}
}

// TestNoRetryWithTheSameToken: a new token identical to the refused one (signed in the same second)
// is not worth a second request.
func TestNoRetryWithTheSameToken(t *testing.T) {
	api := newAPIServer(t, func(string) bool { return true })
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	made := 0
	b := &bearer{next: api.Client().Transport, tokens: newTokenSource(func(context.Context) (ekstoken.Token, error) {
		made++
		return ekstoken.Token{Value: "same", Expires: clock.Now().Add(14 * time.Minute)}, nil
	}, clock.Now)}
	req, err := http.NewRequest(http.MethodGet, api.URL+"/api/v1/namespaces", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := b.RoundTrip(req)
	if err != nil {
		t.Fatalf("RoundTrip: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || len(api.requests()) != 1 || made != 2 {
		t.Errorf("RoundTrip with a token that renews to itself = %d after %d requests and %d tokens, want 401 after 1 and 2",
			resp.StatusCode, len(api.requests()), made)
	}
}

// TestTokenRefreshedAfterExpiry: a token is reused until the expiry its generator gave it, then
// replaced, by the injected clock.
func TestTokenRefreshedAfterExpiry(t *testing.T) {
	api := newAPIServer(t, func(string) bool { return false })
	cs, tokens, clock := eksClientFor(t, api)
	steps := []time.Duration{0, 13*time.Minute + 59*time.Second, time.Second, 5 * time.Minute}
	for _, d := range steps {
		clock.Add(d)
		if _, err := cs.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{}); err != nil {
			t.Fatalf("listing after %v more: %v", d, err)
		}
	}
	if diff := cmp.Diff([]string{"tok-1", "tok-1", "tok-2", "tok-2"}, tokensOf(api.requests())); diff != "" {
		t.Errorf("tokens sent at 0, 13m59s, 14m, 19m (-want +got):\n%s", diff)
	}
	if tokens.count() != 2 {
		t.Errorf("tokens made = %d, want 2", tokens.count())
	}
}

// eksClientFor reaches api through the EKS path: a loopback DescribeCluster names it, and tokens
// come from a fakeTokens on a fake clock.
func eksClientFor(t *testing.T, api *apiServer) (kubernetes.Interface, *fakeTokens, *fakeClock) {
	t.Helper()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: api.Certificate().Raw})
	stub := newEKSStub(t, map[string]stubCluster{"prod": {Status: "ACTIVE", Endpoint: api.URL, CAPEM: ca}})
	clusters, err := New(eksConfig(stub, map[string]string{"us-east-1": "prod"}), testAWSConfig())
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	tokens := &fakeTokens{now: clock.Now}
	clusters.tokens, clusters.now = tokens, clock.Now
	cs, _, err := typedFor(context.Background(), clusters, "us-east-1")
	if err != nil {
		t.Fatalf("For(us-east-1): %v", err)
	}
	return cs, tokens, clock
}

// apiServer is a TLS server on loopback standing in for an API server that refuses some tokens.
type apiServer struct {
	*httptest.Server
	refuse func(token string) bool
	mu     sync.Mutex
	seen   []seenRequest
}

type seenRequest struct{ token, body string }

func newAPIServer(t *testing.T, refuse func(token string) bool) *apiServer {
	t.Helper()
	a := &apiServer{refuse: refuse}
	a.Server = httptest.NewTLSServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.Close)
	return a
}

func (a *apiServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	a.mu.Lock()
	a.seen = append(a.seen, seenRequest{token: tok, body: string(body)})
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case a.refuse(tok):
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`)
	case r.Method == http.MethodPost:
		// Echo the object back in the encoding it came in (client-go sends protobuf).
		w.Header().Set("Content-Type", r.Header.Get("Content-Type"))
		w.WriteHeader(http.StatusCreated)
		w.Write(body)
	default:
		fmt.Fprint(w, `{"kind":"NamespaceList","apiVersion":"v1","metadata":{},"items":[]}`)
	}
}

func (a *apiServer) requests() []seenRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]seenRequest(nil), a.seen...)
}

func tokensOf(seen []seenRequest) []string {
	var out []string
	for _, s := range seen {
		out = append(out, s.token)
	}
	return out
}

// fakeTokens makes tok-1, tok-2, … each good for 14 minutes by its clock.
type fakeTokens struct {
	now func() time.Time
	mu  sync.Mutex
	n   int
}

func (f *fakeTokens) Token(_ context.Context, _, _ string) (ekstoken.Token, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	return ekstoken.Token{Value: fmt.Sprintf("tok-%d", f.n), Expires: f.now().Add(14 * time.Minute)}, nil
}

func (f *fakeTokens) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
