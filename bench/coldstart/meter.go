package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/tidegate/tidegate/shared/dev/kubemeter"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
)

// meter counts the requests the functions send to the stand-ins, by service and operation,
// through loopback proxies that stand in the functions' environment for the stand-ins'
// endpoints: an AWS request is named by its X-Amz-Target header (DynamoDB's, SQS's and KMS's
// JSON protocols all carry one), a Kubernetes request by its verb and resource (kubemeter).
type meter struct {
	mu     sync.Mutex
	counts map[string]int
	kube   *kubemeter.Proxy
	stops  []func()
}

func newMeter() *meter { return &meter{counts: map[string]int{}} }

// take answers the counts since the last take and starts afresh.
func (m *meter) take() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.counts
	m.counts = map[string]int{}
	if m.kube != nil {
		for op, n := range m.kube.Counts(true) {
			c["Kubernetes "+op] += n
		}
	}
	return c
}

func (m *meter) count(name string) {
	m.mu.Lock()
	m.counts[name]++
	m.mu.Unlock()
}

// stop closes every proxy.
func (m *meter) stop() {
	for _, s := range m.stops {
		s()
	}
}

// proxy serves, on a loopback port, a proxy to target that counts each request under
// service and name(r); it answers the proxy's URL.
func (m *meter) proxy(service, target string, transport http.RoundTripper, name func(*http.Request) string) (string, error) {
	u, err := url.Parse(target)
	if err != nil {
		return "", fmt.Errorf("the %s endpoint %q: %w", service, target, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(u) }, Transport: transport}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.count(service + " " + name(r))
		rp.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(l) }()
	m.stops = append(m.stops, func() { _ = srv.Close() })
	return "http://" + l.Addr().String(), nil
}

// meterStandins answers st with its endpoints and kubeconfig replaced by m's proxies to them;
// dir takes the proxy's kubeconfig.
func meterStandins(m *meter, st sandbox.State, dir string) (sandbox.State, error) {
	var err error
	for _, e := range []struct {
		service  string
		endpoint *string
	}{{"DynamoDB", &st.DynamoDBEndpoint}, {"SQS", &st.AWSEndpoint}, {"KMS", &st.KMSEndpoint}} {
		if *e.endpoint, err = m.awsProxy(e.service, *e.endpoint); err != nil {
			return st, err
		}
	}
	if m.kube, err = kubemeter.Start(st.Kubeconfig, dir); err != nil {
		return st, err
	}
	m.stops = append(m.stops, m.kube.Close)
	st.Kubeconfig = m.kube.Kubeconfig
	return st, nil
}

// awsProxy proxies an AWS endpoint, naming requests by operation.
func (m *meter) awsProxy(service, endpoint string) (string, error) {
	return m.proxy(service, endpoint, http.DefaultTransport, func(r *http.Request) string {
		_, op, ok := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
		if !ok {
			return r.Method + " " + r.URL.Path
		}
		return op
	})
}

// describeCalls is counts as text, by service then operation: "DynamoDB 3 (Query 2, PutItem 1)".
func describeCalls(counts map[string]int) string {
	if len(counts) == 0 {
		return "none"
	}
	byService := map[string][]string{}
	totals := map[string]int{}
	for name, n := range counts {
		service, op, _ := strings.Cut(name, " ")
		byService[service] = append(byService[service], fmt.Sprintf("%s %d", op, n))
		totals[service] += n
	}
	services := make([]string, 0, len(byService))
	for s := range byService {
		services = append(services, s)
	}
	slices.Sort(services)
	var parts []string
	for _, s := range services {
		ops := byService[s]
		slices.Sort(ops)
		parts = append(parts, fmt.Sprintf("%s %d (%s)", s, totals[s], strings.Join(ops, ", ")))
	}
	return strings.Join(parts, "; ")
}
