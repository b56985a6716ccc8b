package devstack

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tidegate/tidegate/shared/dev/sandbox"
)

// State is what a running `tidegate dev` tells other commands: where its API and price endpoint
// listen, its key, and the environment that reaches its stand-ins.
type State struct {
	PID        int               `json:"pid"`
	URL        string            `json:"url"`
	APIKey     string            `json:"api_key"`
	Kubeconfig string            `json:"kubeconfig"` // every cluster; with several, a context each
	Clusters   []Cluster         `json:"clusters"`   // the clusters the regions run on
	PricesURL  string            `json:"prices_url"`
	Env        map[string]string `json:"env"` // TIDEGATE_* and AWS_* settings of the functions
}

// DefaultDir is where `tidegate dev` keeps its state unless told otherwise.
func DefaultDir() string { return filepath.Join(sandbox.CacheDir(), "dev") }

func statePath(dir string) string { return filepath.Join(dir, "state.json") }

// ErrNotRunning is what ReadState answers when no `tidegate dev` is up.
var ErrNotRunning = errors.New("tidegate dev is not running; start it with `make dev`")

// ReadState reads the running dev stack's state from dir. With none there it answers
// ErrNotRunning, naming dir: a stack started with another --dir is found with that --dir.
func ReadState(dir string) (State, error) {
	b, err := os.ReadFile(statePath(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return State{}, fmt.Errorf("%w (none keeps its state in %s; pass --dir if it was started with another)", ErrNotRunning, dir)
	}
	if err != nil {
		return State{}, fmt.Errorf("reading dev state: %w", err)
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return State{}, fmt.Errorf("reading dev state %s: %w", statePath(dir), err)
	}
	return st, nil
}

// write saves the state where only this user can read it: it holds an API key.
func (st State) write(dir string) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := statePath(dir) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("writing dev state: %w", err)
	}
	return os.Rename(tmp, statePath(dir))
}

// Exports is `tidegate dev env`'s output: shell exports for the CLI, kubectl and the admin commands.
func (st State) Exports() string {
	vars := map[string]string{
		"TIDEGATE_URL":     st.URL,
		"TIDEGATE_API_KEY": st.APIKey,
		"KUBECONFIG":       st.Kubeconfig,
	}
	for k, v := range st.Env {
		vars[k] = v
	}
	names := make([]string, 0, len(vars))
	for k := range vars {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("export")
	for _, k := range names {
		fmt.Fprintf(&b, " %s=%s", k, shellQuote(vars[k]))
	}
	b.WriteString("\n")
	return b.String()
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,@+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
