package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Options choose what Start brings up.
type Options struct {
	// Dir holds the servers' data and logs; Start creates it.
	Dir string
	// Kube starts the Kubernetes sandbox too (etcd, apiserver, controller-manager, scheduler, kwok).
	Kube bool
	// Clusters is how many Kubernetes clusters Kube starts, each a set of those five servers on
	// ports of its own (StartCluster), named by ClusterName: 0 or 1 starts one, "sandbox", in Dir;
	// 2 adds "sandbox-2" in Dir/sandbox-2, so two regions can each have a cluster to lose.
	Clusters int
	// Progress, when set, is told what is starting, for anything a person waits on.
	Progress func(msg string)
}

// State is how to reach a running sandbox: written to a file so tests and `tidegate dev env` can
// reuse servers another process started.
type State struct {
	DynamoDBEndpoint string `json:"dynamodb_endpoint"`     // http://127.0.0.1:P
	AWSEndpoint      string `json:"aws_endpoint"`          // fauxqs: SQS and S3 on one port
	KMSEndpoint      string `json:"kms_endpoint"`          // local-kms: http://127.0.0.1:P
	Kubeconfig       string `json:"kubeconfig,omitempty"`  // admin kubeconfig of the (first) sandbox cluster
	KubeServer       string `json:"kube_server,omitempty"` // https://127.0.0.1:P
	// Clusters are every sandbox cluster, the first the one Kubeconfig reaches. A state file
	// written before there could be several has none: KubeClusters derives the one.
	Clusters []ClusterState `json:"clusters,omitempty"`
	// RegionsKubeconfig has a context per cluster, named by its Name, the first current: what
	// TIDEGATE_KUBECONFIG is given when regions map to different clusters.
	RegionsKubeconfig string `json:"regions_kubeconfig,omitempty"`
}

// KubeClusters are st's clusters: Clusters, or for a state that predates it, the one Kubeconfig
// reaches, named ClusterName(0); none without Kubernetes.
func (st State) KubeClusters() []ClusterState {
	if len(st.Clusters) > 0 || st.Kubeconfig == "" {
		return st.Clusters
	}
	return []ClusterState{{Name: ClusterName(0), Kubeconfig: st.Kubeconfig, Server: st.KubeServer}}
}

// Sandbox is a set of running stand-ins this process started.
type Sandbox struct {
	State
	dir      string
	procs    []*process // the AWS stand-ins, in start order; stopped in reverse
	clusters []*Cluster // started after procs; stopped before them
}

// Start brings up the stand-ins on free loopback ports and waits until each answers.
func Start(ctx context.Context, opt Options) (*Sandbox, error) {
	if opt.Dir == "" {
		return nil, errors.New("sandbox: Options.Dir is required")
	}
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("making sandbox folder: %w", err)
	}
	say := opt.Progress
	if say == nil {
		say = func(string) {}
	}
	s := &Sandbox{dir: opt.Dir}
	steps := []struct {
		what string
		run  func(context.Context, *Sandbox) error
	}{
		{"DynamoDB Local", startDynamoDB},
		{"fauxqs (SQS and S3)", startFauxqs},
		{"local-kms", startKMS},
	}
	if opt.Kube {
		what := "Kubernetes (etcd, kube-apiserver, controller-manager, scheduler, kwok)"
		if opt.Clusters > 1 {
			what = fmt.Sprintf("%d Kubernetes clusters (each etcd, kube-apiserver, controller-manager, scheduler, kwok)", opt.Clusters)
		}
		steps = append(steps, struct {
			what string
			run  func(context.Context, *Sandbox) error
		}{what, func(ctx context.Context, s *Sandbox) error { return startKube(ctx, s, opt.Clusters, say) }})
	}
	for _, st := range steps {
		say("starting " + st.what)
		if err := st.run(ctx, s); err != nil {
			s.Stop()
			return nil, fmt.Errorf("starting %s: %w", st.what, err)
		}
	}
	return s, nil
}

// Cluster is the sandbox's i-th cluster, from 0, as State.Clusters lists them; nil if it has no
// such cluster.
func (s *Sandbox) Cluster(i int) *Cluster {
	if i < 0 || i >= len(s.clusters) {
		return nil
	}
	return s.clusters[i]
}

// startKube starts n clusters (at least one), the first in the sandbox's own folder, as it always
// was, each other in a subfolder named for it, and writes the kubeconfig with a context for each.
// They start side by side: each waits on its own servers most of the time, so on two cores two
// took 4.6 s together against 8.4 s one after the other (bench/clusters).
func startKube(ctx context.Context, s *Sandbox, n int, say func(string)) error {
	started := make([]*Cluster, max(n, 1))
	errs := make([]error, len(started))
	// The clusters' progress comes from their goroutines; the caller's say is told one at a time.
	var sayMu sync.Mutex
	sayOne := func(m string) {
		sayMu.Lock()
		defer sayMu.Unlock()
		say(m)
	}
	var wg sync.WaitGroup
	for i := range started {
		name, dir := ClusterName(i), s.dir
		if i > 0 {
			dir = filepath.Join(s.dir, name)
		}
		wg.Go(func() { started[i], errs[i] = StartCluster(ctx, dir, name, sayOne) })
	}
	wg.Wait()
	// Those that started are kept, whatever the others did, so that Stop ends them.
	for _, c := range started {
		if c != nil {
			s.clusters = append(s.clusters, c)
			s.Clusters = append(s.Clusters, c.ClusterState)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	s.Kubeconfig, s.KubeServer = s.Clusters[0].Kubeconfig, s.Clusters[0].Server
	s.RegionsKubeconfig = filepath.Join(s.dir, "regions.kubeconfig")
	return WriteRegionsKubeconfig(s.RegionsKubeconfig, s.Clusters)
}

// Stop ends every server this sandbox started, newest first.
func (s *Sandbox) Stop() {
	for i := len(s.clusters) - 1; i >= 0; i-- {
		s.clusters[i].Stop()
	}
	s.clusters = nil
	for i := len(s.procs) - 1; i >= 0; i-- {
		s.procs[i].stop()
	}
	s.procs = nil
}

// WriteState records how to reach the sandbox in path, for other processes to Attach to.
func (st State) WriteState(path string) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("writing sandbox state: %w", err)
	}
	return os.Rename(tmp, path)
}

// ReadState reads what WriteState wrote.
func ReadState(path string) (State, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return State{}, fmt.Errorf("reading sandbox state: %w", err)
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return State{}, fmt.Errorf("reading sandbox state %s: %w", path, err)
	}
	return st, nil
}

// EnvState names the state file of stand-ins another process runs (`tidegate sandbox --kube`, as
// `make test` starts them); a benchmark attaches to them (Attach) instead of starting its own.
const EnvState = "TIDEGATE_SANDBOX_STATE"

// Attach attaches to the stand-ins, with their cluster, that EnvState names, or else starts its
// own in dir, saying each step to progress. stop ends only what Attach started.
func Attach(ctx context.Context, dir string, progress func(string)) (st State, stop func(), err error) {
	if path := os.Getenv(EnvState); path != "" {
		progress("attaching to the stand-ins in " + path)
		if st, err = ReadState(path); err != nil {
			return State{}, nil, fmt.Errorf("%s: %w", EnvState, err)
		}
		if st.Kubeconfig == "" {
			return State{}, nil, fmt.Errorf("the sandbox in %s has no cluster; start it with --kube", path)
		}
		return st, func() {}, nil
	}
	sb, err := Start(ctx, Options{Dir: dir, Kube: true, Progress: progress})
	if err != nil {
		return State{}, nil, err
	}
	return sb.State, sb.Stop, nil
}

// AttachTemp is Attach with a new temporary folder of the caller's own, named for pattern as
// os.MkdirTemp names it, which holds the stand-ins Attach starts. stop also deletes the folder.
func AttachTemp(ctx context.Context, pattern string, progress func(string)) (st State, work string, stop func(), err error) {
	if work, err = os.MkdirTemp("", pattern); err != nil {
		return State{}, "", nil, fmt.Errorf("making a folder for the stand-ins: %w", err)
	}
	st, stopStandins, err := Attach(ctx, filepath.Join(work, "sandbox"), progress)
	if err != nil {
		os.RemoveAll(work)
		return State{}, "", nil, err
	}
	return st, work, func() {
		stopStandins()
		os.RemoveAll(work)
	}, nil
}
