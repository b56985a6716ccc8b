package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// cliConfig is the CLI's file of contexts: each an API and how to authenticate to it, and the one
// in use. It holds API keys, so only its owner may read it.
type cliConfig struct {
	Current  string                `json:"current,omitempty"`
	Contexts map[string]cliContext `json:"contexts"`
}

// cliContext is one API: its URL and either an API key or an AWS profile whose credentials sign
// requests with SigV4 for API Gateway's IAM auth.
type cliContext struct {
	URL     string `json:"url"`
	APIKey  string `json:"api_key,omitempty"`
	Profile string `json:"profile,omitempty"`
	// Region is where SigV4 signatures are scoped when the URL does not name one (a custom domain).
	Region string `json:"region,omitempty"`
}

// devContext is the context `tidegate dev` writes for the stack it runs.
const devContext = "dev"

// configPath is the contexts file in the user's config folder ($XDG_CONFIG_HOME or ~/.config on
// Linux, ~/Library/Application Support on macOS).
func configPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("finding your config folder (set XDG_CONFIG_HOME or HOME): %w", err)
	}
	return filepath.Join(dir, "tidegate", "config.json"), nil
}

// loadConfig reads the contexts file; a missing one is an empty config.
func loadConfig(path string) (cliConfig, error) {
	cfg := cliConfig{Contexts: map[string]cliContext{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return cfg, fmt.Errorf("reading %s: %w", path, err)
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return cfg, fmt.Errorf("reading %s: %w (fix or delete it, then run `tidegate login` again)", path, err)
	}
	if cfg.Contexts == nil {
		cfg.Contexts = map[string]cliContext{}
	}
	return cfg, nil
}

// save writes the contexts file readable by its owner only, replacing it whole so a reader never
// sees half of it.
func (c cliConfig) save(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("making %s: %w", filepath.Dir(path), err)
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".config-*.json")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// names lists the contexts, sorted.
func (c cliConfig) names() []string {
	out := make([]string, 0, len(c.Contexts))
	for n := range c.Contexts {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
