package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// templateFile is the example Job with its image tag, command text and parallelism as
// placeholders, written as a template file (name, description, manifest, parameters).
func templateFile(t *testing.T) string {
	t.Helper()
	job := exampleJob(t, "from-template")
	job = strings.Replace(job, "image: busybox:1.36", "image: busybox:{{ tag }}", 1)
	job = strings.Replace(job, "echo hello from tidegate", "echo {{ message }}", 1)
	job = strings.Replace(job, "  backoffLimit: 0\n", "  backoffLimit: 0\n  parallelism: \"{{ workers }}\"\n", 1)
	job = strings.Replace(job, "  namespace: team-a\n", "", 1)
	var b strings.Builder
	b.WriteString("name: train\ndescription: a training run\nparameters:\n  tag: \"1.36\"\nmanifest:\n")
	for _, line := range strings.Split(strings.TrimSpace(job), "\n") {
		if !strings.HasPrefix(line, "#") {
			b.WriteString("  " + line + "\n")
		}
	}
	path := filepath.Join(t.TempDir(), "train.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTemplates(t *testing.T) {
	h := newHarness(t)
	file := templateFile(t)
	if out := h.ok("templates", "create", "-f", file, "--param", "message=hi"); !strings.HasPrefix(out, "template train created") {
		t.Errorf("templates create = %q", out)
	}
	// A bare manifest takes its name from --name and its defaults from --param.
	h.stdin = exampleJob(t, "plain")
	h.ok("templates", "create", "-f", "-", "--name", "plain", "--description", "no placeholders")
	golden(t, "templates_list", h.ok("templates", "list"))

	if get := h.ok("templates", "get", "train"); !strings.Contains(get, `"image": "busybox:{{ tag }}"`) || !regexp.MustCompile(`(?m)^Defaults:\s+\{"message":"hi","tag":"1.36"\}$`).MatchString(get) {
		t.Errorf("templates get train =\n%s\nwant the manifest with its placeholders and the defaults", get)
	}
	if e := h.fails("templates", "create", "-f", file); !regexp.MustCompile(`^tidegate: template "train" exists; replace it with PUT /api/v1/templates/train \(request id \S+\)\n$`).MatchString(e) {
		t.Errorf("creating train again printed %q", e)
	}
	e := h.fails("templates", "run", "train", "--name", "x", "-n", "team-a", "--region", "us-east-1", "--param", "bogus=1", "--param-json", "workers=1")
	if !strings.Contains(e, "\n  - parameters.bogus: unknown: the template has no {{ bogus }}\n") {
		t.Errorf("running with an unknown parameter printed %q, want it named", e)
	}
	if e := h.fails("templates", "run", "train", "--name", "x", "-n", "team-a", "--param-json", "workers=one"); e != "tidegate: --param-json workers: \"one\" is not JSON (quote text, or use --param)\n" {
		t.Errorf("a --param-json that is not JSON printed %q", e)
	}

	name := uniqueName("train")
	out := h.ok("templates", "run", "train", "--name", name, "-n", "team-a", "--region", "us-west-2", "--param-json", "workers=1", "--wait")
	if !strings.HasPrefix(out, "job ") || !regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d  succeeded`).MatchString(out) {
		t.Errorf("templates run --wait printed\n%s\nwant the job followed to succeeded", out)
	}
	id := jobID.FindString(out)
	if get := h.ok("jobs", "get", id); !regexp.MustCompile(`(?m)^Template:\s+train$`).MatchString(get) || !strings.Contains(get, "Job/"+name) {
		t.Errorf("jobs get of the template's job =\n%s\nwant it to name the template and the job's object", get)
	}

	if out := h.ok("templates", "delete", "train"); out != "template train deleted\n" {
		t.Errorf("templates delete = %q", out)
	}
	if e := h.fails("templates", "get", "train"); !strings.HasPrefix(e, `tidegate: no template "train"`) {
		t.Errorf("templates get after delete printed %q", e)
	}
}
