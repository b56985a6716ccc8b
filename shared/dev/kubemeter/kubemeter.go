// Package kubemeter counts the Kubernetes API requests a process makes, by verb and resource: a
// loopback reverse proxy to the API server, holding its credentials, behind a kubeconfig the
// process is given in place of the real one. The benchmarks that count calls use it.
package kubemeter

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Proxy counts the Kubernetes API requests made through it. It counts at the wire, under
// client-go's retries and rate limiter.
type Proxy struct {
	mu     sync.Mutex
	counts map[string]int // "LIST jobs", "POST jobs", "GET nodes/{name}", …
	srv    *http.Server
	// Kubeconfig is the file that reaches the API server through the proxy.
	Kubeconfig string
}

// Start proxies the API server kubeconfig names, on a loopback port, and writes to dir the
// kubeconfig that reaches it through the proxy (Proxy.Kubeconfig).
func Start(kubeconfig, dir string) (*Proxy, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig %s: %w", kubeconfig, err)
	}
	transport, err := rest.TransportFor(rc)
	if err != nil {
		return nil, fmt.Errorf("making the API server's transport: %w", err)
	}
	target, err := url.Parse(rc.Host)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the Kubernetes proxy: %w", err)
	}
	p := &Proxy{counts: map[string]int{}}
	rp := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target); r.Out.Host = target.Host },
		Transport:     transport,
		FlushInterval: -1,
	}
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.add(r)
		rp.ServeHTTP(w, r)
	})}
	go func() { _ = p.srv.Serve(ln) }()
	p.Kubeconfig = filepath.Join(dir, "kubeconfig-counted")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["counted"] = &clientcmdapi.Cluster{Server: "http://" + ln.Addr().String()}
	cfg.AuthInfos["counted"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["counted"] = &clientcmdapi.Context{Cluster: "counted", AuthInfo: "counted"}
	cfg.CurrentContext = "counted"
	if err := clientcmd.WriteToFile(*cfg, p.Kubeconfig); err != nil {
		p.srv.Close()
		return nil, err
	}
	return p, nil
}

func (p *Proxy) add(r *http.Request) {
	k := Operation(r.Method, r.URL)
	p.mu.Lock()
	p.counts[k]++
	p.mu.Unlock()
}

// Operation names a request by its verb and resource: the namespace and object names dropped,
// a GET of a collection called LIST (WATCH when it watches), as the API server's audit log does.
func Operation(method string, u *url.URL) string {
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	// /api/v1/… or /apis/GROUP/VERSION/…
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return method + " " + u.Path
	}
	if len(parts) >= 2 && parts[0] == "namespaces" && len(parts) != 2 {
		parts = parts[2:]
	}
	resource, named := "", false
	switch len(parts) {
	case 0:
		resource = "(discovery)"
	case 1:
		resource = parts[0]
	default:
		resource, named = parts[0]+"/"+strings.Join(parts[2:], "/"), true
		resource = strings.TrimSuffix(resource, "/")
	}
	verb := method
	if method == http.MethodGet && !named {
		verb = "LIST"
		if u.Query().Get("watch") == "true" {
			verb = "WATCH"
		}
	}
	return verb + " " + resource
}

// Counts is a copy of the counts so far; reset starts them again.
func (p *Proxy) Counts(reset bool) map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.counts))
	for k, n := range p.counts {
		out[k] = n
	}
	if reset {
		p.counts = map[string]int{}
	}
	return out
}

// Close stops the proxy and removes its kubeconfig.
func (p *Proxy) Close() { _ = p.srv.Close(); _ = os.Remove(p.Kubeconfig) }
