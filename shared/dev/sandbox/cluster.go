package sandbox

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ClusterState is how to reach one sandbox cluster: its name (the context naming it in a
// State's RegionsKubeconfig, and the cluster name a region maps to in TIDEGATE_REGIONS), its admin
// kubeconfig and its API server.
type ClusterState struct {
	Name       string `json:"name"`
	Kubeconfig string `json:"kubeconfig"`
	Server     string `json:"server"` // https://127.0.0.1:P
}

// Cluster is one sandbox Kubernetes cluster this process started: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and kwok, each a child process on its own free loopback
// ports, seeded with kwok's nodes, the Logs CRD and the gvisor RuntimeClass.
type Cluster struct {
	ClusterState
	logDir string

	mu        sync.Mutex
	procs     []*process // in start order; stopped in reverse
	apiserver int        // kube-apiserver's place in procs
	pki       kubePKI
}

// ClusterName is the name of a sandbox's i-th cluster, from 0: "sandbox", then "sandbox-2", …
func ClusterName(i int) string {
	if i == 0 {
		return "sandbox"
	}
	return "sandbox-" + strconv.Itoa(i+1)
}

// StartCluster brings up a Kubernetes control plane named name whose nodes are faked by kwok: pods
// are scheduled, go Running and a Job's complete (or fail, as their annotations ask:
// kwokstages.go), but no container ever runs. Its data is in dir/kube and its servers' logs in
// dir. Every server listens on a free loopback port, so several clusters can run at once. progress,
// when set, is told each step a person waits on.
func StartCluster(ctx context.Context, dir, name string, progress func(string)) (*Cluster, error) {
	say := progress
	if say == nil {
		say = func(string) {}
	}
	c := &Cluster{ClusterState: ClusterState{Name: name}, logDir: dir}
	if err := c.start(ctx, filepath.Join(dir, "kube"), say); err != nil {
		c.Stop()
		return nil, fmt.Errorf("starting sandbox cluster %s: %w", name, err)
	}
	return c, nil
}

// start starts the cluster's servers in order with their data in dir and seeds the cluster.
func (c *Cluster) start(ctx context.Context, dir string, say func(string)) error {
	paths := map[string]string{}
	for _, rel := range kubeTools {
		p, err := installed(rel)
		if err != nil {
			return fmt.Errorf("%w (scripts/tools-kube.sh installs the Kubernetes sandbox)", err)
		}
		paths[filepath.Base(rel)] = p
	}
	var ports kubePorts
	if err := freePorts(ports.all()); err != nil {
		return err
	}
	var err error
	if c.pki, err = writeKubePKI(filepath.Join(dir, "pki")); err != nil {
		return err
	}
	say("cluster " + c.Name + ": etcd and kube-apiserver")
	etcdURL, err := startEtcd(ctx, c, paths["etcd"], dir, ports)
	if err != nil {
		return err
	}
	if c.Server, err = startAPIServer(ctx, c, paths["kube-apiserver"], dir, etcdURL, ports.apiserver, c.pki); err != nil {
		return err
	}
	c.Kubeconfig = filepath.Join(dir, "admin.kubeconfig")
	if err := writeKubeconfig(c.Kubeconfig, c.Server, c.pki); err != nil {
		return err
	}
	kwokStages, err := writeKwokStages(dir)
	if err != nil {
		return err
	}
	kwokLogs, err := writeKwokLogs(dir)
	if err != nil {
		return err
	}
	if err := installLogsCRD(ctx, c.Kubeconfig); err != nil {
		return err
	}
	say("cluster " + c.Name + ": controller-manager, scheduler and kwok")
	if err := startControllers(ctx, c, paths, dir, c.Kubeconfig, ports, c.pki, []string{kwokStages, kwokLogs}); err != nil {
		return err
	}
	return seedCluster(ctx, c.Kubeconfig)
}

// ErrAPIServerStopped is StopAPIServer's answer when the API server is not running.
var ErrAPIServerStopped = errors.New("the sandbox cluster's kube-apiserver is not running")

// StopAPIServer sends the cluster's kube-apiserver SIGTERM, by its own pid, and waits until it has
// exited (killing it after stopGrace): the cluster's clients then meet a refused connection, as a
// region whose control plane is down. etcd, the controllers and kwok keep running, and reconnect
// once StartAPIServer brings it back.
func (c *Cluster) StopAPIServer() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.procs) == 0 {
		return fmt.Errorf("stopping cluster %s's API server: the cluster is stopped", c.Name)
	}
	p := c.procs[c.apiserver]
	if p.exited() {
		return fmt.Errorf("stopping cluster %s's API server: %w (start it with StartAPIServer)", c.Name, ErrAPIServerStopped)
	}
	p.stop()
	return nil
}

// How StartAPIServer retries when the port was taken while the server was down: a client's
// outgoing connection may be given it as its own port, which lasts until that connection closes.
const (
	restartAttempts = 10
	restartPause    = time.Second
)

// StartAPIServer starts the cluster's kube-apiserver again after StopAPIServer, with exactly the
// arguments it first ran with (the same port, certificates and etcd, so every kubeconfig still
// reaches it), and waits until it answers /readyz. Then it starts kwok afresh (restartKwok).
func (c *Cluster) StartAPIServer(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.procs) == 0 {
		return fmt.Errorf("starting cluster %s's API server: the cluster is stopped; start another with StartCluster", c.Name)
	}
	old := c.procs[c.apiserver]
	if !old.exited() {
		return fmt.Errorf("starting cluster %s's API server: it is already running (pid %d); stop it first with StopAPIServer", c.Name, old.cmd.Process.Pid)
	}
	for attempt := 1; ; attempt++ {
		p, err := old.again()
		if err != nil {
			return fmt.Errorf("starting cluster %s's API server again: %w", c.Name, err)
		}
		c.procs[c.apiserver] = p
		err = p.waitReady(ctx, apiserverStartTimeout, apiserverReady(c.Server, c.pki))
		if err == nil {
			return c.restartKwok()
		}
		if !p.exited() || !strings.Contains(p.logTail(), "address already in use") || attempt == restartAttempts {
			p.stop()
			return fmt.Errorf("starting cluster %s's API server again: %w", c.Name, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("starting cluster %s's API server again: its port %s is taken: %w", c.Name, c.Server, ctx.Err())
		case <-time.After(restartPause):
		}
	}
}

// restartKwok starts kwok again, as it first ran. kwok plays the nodes, whose pods run on through
// an outage of their control plane; but a step it timed while the API server was down (a pod's
// completion after its delay) is lost with the write that failed, and the pod would run for ever.
// A kwok started afresh lists the pods again and times each step anew from now: a pod whose delay
// ran out during an outage completes that delay after the API server's return. An outage of a few
// seconds loses nothing; one of minutes leaves every running pod stuck without this.
func (c *Cluster) restartKwok() error {
	for i, p := range c.procs {
		if p.name != "kwok" {
			continue
		}
		p.stop()
		again, err := p.again()
		if err != nil {
			return fmt.Errorf("starting cluster %s's kwok again after its API server: %w", c.Name, err)
		}
		c.procs[i] = again
	}
	return nil
}

// Stop ends every server of the cluster, newest first.
func (c *Cluster) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].stop()
	}
	c.procs = nil
}

// PIDs are the process ids of the cluster's running servers by name (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, kwok), for a benchmark reading their CPU and memory.
func (c *Cluster) PIDs() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for _, p := range c.procs {
		if !p.exited() {
			out[p.name] = p.cmd.Process.Pid
		}
	}
	return out
}

// Logs is the folder holding the cluster's servers' logs, one file each (kube-apiserver.log, …).
func (c *Cluster) Logs() string { return c.logDir }
