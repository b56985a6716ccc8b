// Package sandbox starts Tidegate's local stand-ins — DynamoDB Local, fauxqs (SQS and S3) and a
// Kubernetes control plane with kwok nodes — as child processes on loopback, from binaries that
// scripts/tools.sh installed into the cache.
package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
)

// CacheDir is where scripts/tools.sh keeps what it installs: outside any clone, so every clone and
// every CI run on this machine reuses one build of the Kubernetes binaries.
func CacheDir() string {
	if d := os.Getenv("TIDEGATE_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "tidegate")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "tidegate-cache")
	}
	return filepath.Join(home, ".cache", "tidegate")
}

// installed returns the path of a file the tools script installs, or an error naming the fix.
func installed(rel string) (string, error) {
	p := filepath.Join(CacheDir(), rel)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%w: %s is missing; run `make tools` (scripts/tools.sh) to install it", errNotInstalled, p)
	}
	return p, nil
}
