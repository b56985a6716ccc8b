package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Options choose what Start brings up.
type Options struct {
	// Dir holds the servers' data and logs; Start creates it.
	Dir string
	// Kube starts the Kubernetes sandbox too (etcd, apiserver, controller-manager, scheduler, kwok).
	Kube bool
	// Progress, when set, is told what is starting, for anything a person waits on.
	Progress func(msg string)
}

// State is how to reach a running sandbox: written to a file so tests and `tidegate dev env` can
// reuse servers another process started.
type State struct {
	DynamoDBEndpoint string `json:"dynamodb_endpoint"`     // http://127.0.0.1:P
	AWSEndpoint      string `json:"aws_endpoint"`          // fauxqs: SQS and S3 on one port
	KMSEndpoint      string `json:"kms_endpoint"`          // local-kms: http://127.0.0.1:P
	Kubeconfig       string `json:"kubeconfig,omitempty"`  // admin kubeconfig of the sandbox cluster
	KubeServer       string `json:"kube_server,omitempty"` // https://127.0.0.1:P
}

// Sandbox is a set of running stand-ins this process started.
type Sandbox struct {
	State
	dir   string
	procs []*process // in start order; stopped in reverse
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
		steps = append(steps, struct {
			what string
			run  func(context.Context, *Sandbox) error
		}{"Kubernetes (etcd, kube-apiserver, controller-manager, scheduler, kwok)", startKube})
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

// Stop ends every server this sandbox started, newest first.
func (s *Sandbox) Stop() {
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
