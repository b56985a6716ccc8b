package sandbox

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/yaml"
)

// TestKwokStagesYAML: what kwok is given is one stream of Stage documents with distinct names, and
// the annotations the package documents are the ones the stages read.
func TestKwokStagesYAML(t *testing.T) {
	b, err := stagesYAML()
	if err != nil {
		t.Fatalf("stagesYAML: %v", err)
	}
	type stage struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	seen := map[string]bool{}
	for {
		var s stage
		err := dec.Decode(&s)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("stagesYAML: decoding document %d: %v", len(seen)+1, err)
		}
		if s.APIVersion != "kwok.x-k8s.io/v1alpha1" || s.Kind != "Stage" || s.Metadata.Name == "" {
			t.Errorf("stagesYAML: document %+v, want a named kwok.x-k8s.io/v1alpha1 Stage", s)
		}
		if seen[s.Metadata.Name] {
			t.Errorf("stagesYAML: stage %s twice", s.Metadata.Name)
		}
		seen[s.Metadata.Name] = true
	}
	for _, name := range []string{"node-initialize", "node-heartbeat-with-lease", "pod-ready", "pod-complete",
		"pod-fail-exit-code", "pod-fail-oom-kill", "pod-delete"} {
		if !seen[name] {
			t.Errorf("stagesYAML: no stage %s; have %v", name, seen)
		}
	}
	for _, a := range []string{CompleteDelayAnnotation, ExitCodeAnnotation, OOMKillAnnotation, ProcessAnnotation} {
		if !strings.Contains(string(b), `.metadata.annotations["`+a+`"]`) {
			t.Errorf("stagesYAML: no stage reads annotation %s", a)
		}
	}
}
