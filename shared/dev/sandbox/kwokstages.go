package sandbox

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Annotations that choose how a sandbox pod ends. kwok runs no containers, so without them every
// Job's pod completes the moment it runs; with them a test (or someone trying a flow in `tidegate
// dev`) can watch a job run for a while, or fail. Put them on a Job's pod template: its pods
// inherit them. stages/*.yaml reads them; a pod carrying none ends as kwok's fast stages end it.
const (
	// CompleteDelayAnnotation is kwok's own: a Go duration ("20s") the pod stays Running, counted
	// from when kwok saw it Running, before it ends (by any of the stages below). A value that is
	// not a duration counts as none. As in kwok, a change to the pod meanwhile starts the count
	// again.
	CompleteDelayAnnotation = "pod-complete.stage.kwok.x-k8s.io/delay"
	// ExitCodeAnnotation ("1" to "255") ends the pod Failed, every container terminated with that
	// exit code and reason Error. "0", or anything but a whole number up to 255 written without a
	// leading zero, counts as none.
	ExitCodeAnnotation = "tidegate.io/sandbox-exit-code"
	// OOMKillAnnotation ("true") ends the pod Failed, every container terminated with reason
	// OOMKilled and exit code 137. It wins over ExitCodeAnnotation.
	OOMKillAnnotation = "tidegate.io/sandbox-oom-kill"
	// ProcessAnnotation ("true") says a process on this machine plays the pod
	// (shared/dev/hostrun), which writes its status itself and, once the pod is deleted and its
	// process has ended, removes it: kwok's pod-ready and pod-delete stages leave it alone.
	ProcessAnnotation = "tidegate.io/sandbox-process"
)

// The stages are the repository's, not the cache's: built into the binary, written into each
// sandbox's folder when it starts, so a change here reaches the next sandbox with nothing to
// refresh.
//
//go:embed stages/*.yaml
var kwokStages embed.FS

// writeKwokStages writes every stage into one file in dir, for kwok's -c, and returns its path.
func writeKwokStages(dir string) (string, error) {
	b, err := stagesYAML()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "kwok-stages.yaml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return "", fmt.Errorf("writing kwok's stages: %w", err)
	}
	return path, nil
}

// stagesYAML is every file under stages/ as one multi-document YAML stream, in name order.
func stagesYAML() ([]byte, error) {
	names, err := fs.Glob(kwokStages, "stages/*.yaml")
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	for _, name := range names {
		b, err := kwokStages.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("reading kwok stage %s: %w", name, err)
		}
		out.WriteString("---\n")
		out.Write(b)
		if !bytes.HasSuffix(b, []byte("\n")) {
			out.WriteByte('\n')
		}
	}
	return out.Bytes(), nil
}
