package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/deliveryplan"
	"github.com/tidegate/tidegate/shared/outbox"
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

// TestRedirectToPrivateIsAFailedAttempt: a receiver with a public name answers each kind of
// redirect with a private Location. The production client hands the 3xx back as the answer,
// which the delivery plan judges a failed attempt to retry, and dials nothing but the public
// name: the private address is never connected to.
func TestRedirectToPrivateIsAFailedAttempt(t *testing.T) {
	var privateHits atomic.Int32
	private := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { privateHits.Add(1) }))
	defer private.Close()
	var code atomic.Int32
	var location atomic.Value
	public := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, location.Load().(string), int(code.Load()))
	}))
	defer public.Close()
	publicName := "hooks.example.com:" + strconv.Itoa(public.Listener.Addr().(*net.TCPAddr).Port)

	c := NewClient(Options{})
	tr := c.Transport.(*http.Transport)
	filtered := tr.DialContext
	var mu sync.Mutex
	var dialled []string
	// The test's only stand-in for the internet: the public name reaches the public receiver.
	// Every other dial goes through the production dialer and its address filter.
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		dialled = append(dialled, addr)
		mu.Unlock()
		if addr == publicName {
			return (&net.Dialer{}).DialContext(ctx, network, public.Listener.Addr().String())
		}
		return filtered(ctx, network, addr)
	}
	d := deliveryplan.NewDelivery(deliveryplan.Webhook{ID: "wh_1"}, outbox.Event{ID: "evt_1"}, []byte(`{}`), time.Now())
	for _, status := range []int{301, 302, 303, 307, 308} {
		for _, to := range []string{private.URL + "/hook", "http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/"} {
			code.Store(int32(status))
			location.Store(to)
			resp, err := c.Post("http://"+publicName+"/hook", "application/json", strings.NewReader("{}"))
			if err != nil {
				t.Errorf("POST answering %d to %s: %v; want the %d itself", status, to, err, status)
				continue
			}
			Drain(resp.Body)
			if resp.StatusCode != status || resp.Header.Get("Location") != to {
				t.Errorf("POST answering %d to %s came back %d (Location %q); want the redirect itself", status, to, resp.StatusCode, resp.Header.Get("Location"))
			}
			v := deliveryplan.Judge(d, deliveryplan.Webhook{ID: "wh_1"}, deliveryplan.Outcome{StatusCode: resp.StatusCode}, time.Now(), 0.5)
			if v.Delivery.Status != deliveryplan.StatusPending || !v.Failing || v.Healthy {
				t.Errorf("an attempt answered %d is judged %s (failing %v); want a failed attempt, retried", status, v.Delivery.Status, v.Failing)
			}
		}
	}
	if n := privateHits.Load(); n != 0 {
		t.Errorf("the private receiver was reached %d times; want never", n)
	}
	for _, addr := range dialled {
		if addr != publicName {
			t.Errorf("the client dialled %s; want only the public name %s", addr, publicName)
		}
	}
}
