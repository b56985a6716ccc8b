package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestClientRefusesLocalAddressesAtDialTime(t *testing.T) {
	var hits int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	c := NewClient(Options{})
	for _, target := range []string{
		srv.URL, // 127.0.0.1
		fmt.Sprintf("http://localhost:%d/", port), // a name resolving to 127.0.0.1: refused on the resolved address
		fmt.Sprintf("http://[::1]:%d/", port),
		fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", port),
		"http://169.254.169.254/latest/meta-data/",
		"http://10.0.0.1/",
		"http://0.0.0.0/",
	} {
		resp, err := c.Post(target, "application/json", strings.NewReader("{}"))
		if err == nil {
			resp.Body.Close()
			t.Errorf("POST %s answered %d; want the dial refused", target, resp.StatusCode)
			continue
		}
		if !IsRefused(err) {
			t.Errorf("POST %s: %v; want a RefusedError", target, err)
		}
	}
	if hits != 0 {
		t.Errorf("the loopback receiver was reached %d times; want never", hits)
	}
}

// TestClientRefusesRebindingName resolves a name through a resolver that answers 127.0.0.1 for
// everything, as a rebinding DNS server would: the refusal comes from the dial, not the URL.
func TestClientRefusesRebindingName(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the receiver was reached through a rebinding name")
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	dns := fakeDNS(t, [4]byte{127, 0, 0, 1})
	c := NewClient(Options{Resolver: &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "udp", dns)
	}}})
	resp, err := c.Get(fmt.Sprintf("http://hooks.example.com:%d/", port))
	if err == nil {
		resp.Body.Close()
		t.Fatalf("GET through a name resolving to 127.0.0.1 answered %d; want the dial refused", resp.StatusCode)
	}
	if !IsRefused(err) {
		t.Fatalf("GET through a rebinding name: %v; want a RefusedError", err)
	}
}

func TestClientAllowPrivateReachesLoopback(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	defer srv.Close()
	resp, err := NewClient(Options{AllowPrivate: true}).Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatalf("with the allowance, POST %s: %v", srv.URL, err)
	}
	Drain(resp.Body)
	if resp.StatusCode != 204 {
		t.Errorf("status = %d, want 204", resp.StatusCode)
	}
}

func TestClientFollowsNoRedirect(t *testing.T) {
	var followed bool
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { followed = true }))
	defer target.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	resp, err := NewClient(Options{AllowPrivate: true}).Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	Drain(resp.Body)
	if resp.StatusCode != http.StatusTemporaryRedirect || followed {
		t.Errorf("status = %d, followed = %v; want the 307 itself, not followed", resp.StatusCode, followed)
	}
}

func TestClientIgnoresProxyEnvironment(t *testing.T) {
	var proxied bool
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { proxied = true }))
	defer proxy.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")
	resp, err := NewClient(Options{AllowPrivate: true}).Get(srv.URL)
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	Drain(resp.Body)
	if proxied {
		t.Errorf("the request went through HTTP_PROXY; want proxies ignored")
	}
}

func TestRefusedErrorSurvivesURLError(t *testing.T) {
	err := &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Err: &RefusedError{Reason: "loopback"}}}
	if !IsRefused(err) || !errors.As(err, new(*RefusedError)) {
		t.Errorf("IsRefused(%v) = false; want the refusal found through the wrapping", err)
	}
}
