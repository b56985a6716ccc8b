package sandbox

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// How long each server gets to answer its health check. Measured here: etcd is up in well under a
// second, the apiserver in about 2 s, the controllers and kwok in about 1 s; the margins are for a
// loaded CI machine paging in 100 MB binaries.
const (
	etcdStartTimeout       = 30 * time.Second
	apiserverStartTimeout  = 90 * time.Second
	controllerStartTimeout = 60 * time.Second
)

// kubeTools are the files scripts/tools-kube.sh installs, relative to the cache. kwok's stages are
// not among them: they come with this package (kwokstages.go).
var kubeTools = []string{
	"bin/etcd", "bin/kube-apiserver", "bin/kube-controller-manager", "bin/kube-scheduler",
	"bin/kwok",
}

// startEtcd starts etcd with its data in dir and returns its client URL.
func startEtcd(ctx context.Context, c *Cluster, bin, dir string, ports kubePorts) (string, error) {
	clientURL := "http://127.0.0.1:" + strconv.Itoa(ports.etcdClient)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports.etcdPeer)
	p, err := startProcess("etcd", dir, c.logDir, nil, bin,
		"--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", clientURL, "--advertise-client-urls", clientURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "default="+peerURL,
		// The data is thrown away with the sandbox; fsync would only slow every write.
		"--unsafe-no-fsync")
	if err != nil {
		return "", err
	}
	c.procs = append(c.procs, p)
	if err := p.waitReady(ctx, etcdStartTimeout, statusOK(http.DefaultClient, clientURL+"/health", "")); err != nil {
		return "", err
	}
	return clientURL, nil
}

// startAPIServer starts kube-apiserver on etcdURL and returns its https URL once it is ready.
func startAPIServer(ctx context.Context, c *Cluster, bin, dir, etcdURL string, port int, pki kubePKI) (string, error) {
	server := "https://127.0.0.1:" + strconv.Itoa(port)
	p, err := startProcess("kube-apiserver", dir, c.logDir, nil, bin,
		"--etcd-servers", etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port", strconv.Itoa(port),
		"--tls-cert-file", pki.certFile, "--tls-private-key-file", pki.keyFile,
		"--client-ca-file", pki.caFile, "--token-auth-file", pki.tokenFile,
		"--authorization-mode=Node,RBAC",
		"--service-account-key-file", pki.saPubFile, "--service-account-signing-key-file", pki.saKeyFile,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		// A /24 of service IPs is plenty for a cluster whose Services nobody routes to.
		"--service-cluster-ip-range=10.0.0.0/24",
		// The default reconciler publishes the advertise address as the kubernetes Service's
		// endpoint and refuses a loopback one.
		"--endpoint-reconciler-type=none")
	if err != nil {
		return "", err
	}
	c.procs = append(c.procs, p)
	c.apiserver = len(c.procs) - 1
	if err := p.waitReady(ctx, apiserverStartTimeout, apiserverReady(server, pki)); err != nil {
		return "", err
	}
	return server, nil
}

// apiserverReady answers nil once the apiserver at server says it is ready, asked as the admin
// over TLS verified with the cluster's CA.
func apiserverReady(server string, pki kubePKI) func(context.Context) error {
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pki.caPEM)
	// No keep-alive: a connection kept from one poll to the next would outlive an apiserver
	// stopped and started again in between.
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, DisableKeepAlives: true}}
	return statusOK(client, server+"/readyz", pki.adminToken)
}

// startControllers starts kube-controller-manager, kube-scheduler and kwok together and waits for
// all three: they only talk to the apiserver, so none waits on another. kwok reads each of
// kwokConfigs (its stages, its logs).
func startControllers(ctx context.Context, c *Cluster, paths map[string]string, dir, kubeconfig string, ports kubePorts, pki kubePKI, kwokConfigs []string) error {
	cmPort, schedPort, kwokPort := strconv.Itoa(ports.controllerManager), strconv.Itoa(ports.scheduler), strconv.Itoa(ports.kwok)
	common := []string{
		"--kubeconfig", kubeconfig, "--authentication-kubeconfig", kubeconfig,
		"--authorization-kubeconfig", kubeconfig, "--bind-address=127.0.0.1", "--leader-elect=false",
	}
	schedConfig, err := writeSchedulerConfig(dir, kubeconfig)
	if err != nil {
		return err
	}
	kwokAddr := "127.0.0.1:" + kwokPort
	// Logs come from the cluster as well as the config: a pod with a Logs object of its own shows
	// the files it names (kwoklogs.go), any other the ClusterLogs config's FakePodLog.
	kwokArgv := []string{paths["kwok"], "--kubeconfig", kubeconfig, "--enable-crds=Logs"}
	for _, c := range kwokConfigs {
		kwokArgv = append(kwokArgv, "-c", c)
	}
	servers := []struct {
		name   string
		argv   []string
		health string
	}{
		{"kube-controller-manager", append([]string{paths["kube-controller-manager"], "--secure-port", cmPort,
			// Its self-signed serving certificate goes here rather than in /var/run/kubernetes.
			"--cert-dir", filepath.Join(dir, "controller-manager"),
			"--service-account-private-key-file", pki.saKeyFile, "--root-ca-file", pki.caFile,
			"--controllers=*",
			// Its default 20 requests a second would take 25 minutes to make the scale suite's
			// 30,000 pods; an EKS control plane allows its controllers far more.
			"--kube-api-qps=200", "--kube-api-burst=400"}, common...), "https://127.0.0.1:" + cmPort + "/healthz"},
		{"kube-scheduler", append([]string{paths["kube-scheduler"], "--secure-port", schedPort, "--config", schedConfig,
			"--cert-dir", filepath.Join(dir, "scheduler")}, common...), "https://127.0.0.1:" + schedPort + "/healthz"},
		// kwok serves logs on the port it advertises as the node's kubelet port, over both HTTP
		// and HTTPS; the apiserver reaches it there for `kubectl logs`. It renews each node's
		// Lease, which its heartbeat stage relies on: without one the node controller finds the
		// node's ten-minute heartbeat stale after 50 s and marks its pods not ready, again and
		// again, and each such change restarts a pod's pod-complete delay.
		{"kwok", append(kwokArgv, "--manage-all-nodes=true", "--node-lease-duration-seconds", "40",
			"--server-address", kwokAddr, "--node-ip", "127.0.0.1", "--node-port", kwokPort),
			"http://" + kwokAddr + "/healthz"},
	}
	started := make([]*process, len(servers))
	for i, srv := range servers {
		p, err := startProcess(srv.name, dir, c.logDir, nil, srv.argv...)
		if err != nil {
			return err
		}
		c.procs = append(c.procs, p)
		started[i] = p
	}
	// The controllers serve a certificate they made for themselves a moment ago; there is nothing
	// to verify it against, and the check only asks whether they are up.
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	defer insecure.CloseIdleConnections()
	for i, p := range started {
		if err := p.waitReady(ctx, controllerStartTimeout, statusOK(insecure, servers[i].health, "")); err != nil {
			return err
		}
	}
	return nil
}

// kubePorts are the loopback ports of one sandbox cluster.
type kubePorts struct {
	etcdClient, etcdPeer, apiserver, controllerManager, scheduler, kwok int
}

func (p *kubePorts) all() []*int {
	return []*int{&p.etcdClient, &p.etcdPeer, &p.apiserver, &p.controllerManager, &p.scheduler, &p.kwok}
}

// freePorts fills each port with a distinct free loopback port. Unlike calling freePort in a loop,
// it holds every port until all are chosen, so the kernel cannot hand out one twice.
func freePorts(ports []*int) error {
	for _, p := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("finding a free loopback port: %w", err)
		}
		defer l.Close()
		*p = l.Addr().(*net.TCPAddr).Port
	}
	return nil
}

// statusOK answers nil once url returns 200, sending token as a bearer token when it is set.
func statusOK(client *http.Client, url, token string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s answered %s", url, resp.Status)
		}
		return nil
	}
}

// schedulerConfig makes the scheduler prefer the spot node for a pod that does not choose, as
// Karpenter launches spot capacity for a pod that allows both, it being the cheaper: the sandbox's
// pods run on FakeNodeName, as they did when it was the only node, and only a pod selecting
// on-demand capacity runs on OnDemandNodeName. It prefers, half as much, a node other than a
// flavor's (FlavorNodeLabel), so that a pod selecting no flavor keeps to the sandbox's own nodes
// and leaves the flavors' room to their pods, and still a flavor's spot node over an on-demand
// one. A preference, weighted above the spreading scores, never keeps a pod from a node it
// requires. With --config the scheduler ignores --kubeconfig, so the file names it too.
const schedulerConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  # Its default 50 a second, one binding and one event a pod, would take 13 minutes to place the
  # scale suite's 20,000 pods; the controller manager has the same allowance.
  qps: 200
  burst: 400
leaderElection:
  leaderElect: false
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 100
          preference:
            matchExpressions:
            - key: %q
              operator: In
              values: [spot]
        - weight: 50
          preference:
            matchExpressions:
            - key: %q
              operator: DoesNotExist
`

// writeSchedulerConfig writes schedulerConfig for the cluster kubeconfig reaches into dir and
// answers its path.
func writeSchedulerConfig(dir, kubeconfig string) (string, error) {
	path := filepath.Join(dir, "kube-scheduler.yaml")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(schedulerConfig, kubeconfig, CapacityTypeLabel, FlavorNodeLabel)), 0o644); err != nil {
		return "", fmt.Errorf("writing kube-scheduler's configuration: %w", err)
	}
	return path, nil
}
