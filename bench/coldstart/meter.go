package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/tidegate/tidegate/shared/dev/sandbox"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// meter counts the requests the functions send to the stand-ins, by service and operation,
// through loopback proxies that stand in the functions' environment for the stand-ins'
// endpoints: an AWS request is named by its X-Amz-Target header (DynamoDB's, SQS's and KMS's
// JSON protocols all carry one), a Kubernetes request by its verb and resource.
type meter struct {
	mu     sync.Mutex
	counts map[string]int
	stops  []func()
}

func newMeter() *meter { return &meter{counts: map[string]int{}} }

// take answers the counts since the last take and starts afresh.
func (m *meter) take() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.counts
	m.counts = map[string]int{}
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
	st.Kubeconfig, err = m.kubeProxy(st.Kubeconfig, dir)
	return st, err
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

// kubeProxy proxies the cluster kubeconfig names, authenticating as it does, and writes to dir
// a kubeconfig for the proxy (plain HTTP on loopback, no credentials); it answers that file.
func (m *meter) kubeProxy(kubeconfig, dir string) (string, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return "", fmt.Errorf("reading the sandbox's kubeconfig: %w", err)
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		return "", err
	}
	addr, err := m.proxy("Kubernetes", cfg.Host, transport, kubeOperation)
	if err != nil {
		return "", err
	}
	out := clientcmdapi.NewConfig()
	out.Clusters["metered"] = &clientcmdapi.Cluster{Server: addr}
	out.AuthInfos["metered"] = &clientcmdapi.AuthInfo{}
	out.Contexts["metered"] = &clientcmdapi.Context{Cluster: "metered", AuthInfo: "metered"}
	out.CurrentContext = "metered"
	path := filepath.Join(dir, "metered-kubeconfig")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	return path, clientcmd.WriteToFile(*out, path)
}

// kubeOperation names a Kubernetes API request by verb and resource: "LIST pods", "PATCH
// networkpolicies".
func kubeOperation(r *http.Request) string {
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	// /api/v1/... or /apis/GROUP/VERSION/...: what follows is [namespaces/NS/]RESOURCE[/NAME].
	var rest []string
	switch {
	case len(segs) >= 2 && segs[0] == "api":
		rest = segs[2:]
	case len(segs) >= 3 && segs[0] == "apis":
		rest = segs[3:]
	}
	if len(rest) >= 3 && rest[0] == "namespaces" {
		rest = rest[2:]
	}
	if len(rest) == 0 {
		return r.Method + " " + r.URL.Path
	}
	verb := r.Method
	if r.Method == http.MethodGet && len(rest) == 1 {
		verb = "LIST"
		if r.URL.Query().Get("watch") == "true" {
			verb = "WATCH"
		}
	}
	return verb + " " + strings.Join(rest[:1], "")
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
