package main

import (
	"regexp"
	"strings"
	"testing"
)

// privilegedJob is the example with one thing the restricted profile forbids.
func privilegedJob(t *testing.T) string {
	return strings.Replace(exampleJob(t, uniqueName("bad")), "allowPrivilegeEscalation: false", "allowPrivilegeEscalation: false\n            privileged: true", 1)
}

// TestMistakesSayWhatToFix: a bad flag or a refusal prints one line with the reason (and the
// API's request id), then what to fix, and exits non-zero.
func TestMistakesSayWhatToFix(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name  string
		stdin string
		args  []string
		// want matches all of standard error.
		want string
	}{
		{"unknown flag", "", []string{"jobs", "list", "--bogus"}, `^tidegate: unknown flag: --bogus\n$`},
		{"missing argument", "", []string{"jobs", "get"}, `^tidegate: accepts 1 arg\(s\), received 0\n$`},
		{"bad output", "", []string{"jobs", "list", "-o", "xml"}, `^tidegate: -o "xml": choose table, json or yaml\n$`},
		{"not found", "", []string{"jobs", "get", "job-nope"}, `^tidegate: no job "job-nope" in your namespaces \(request id \S+\)\n$`},
		{"foreign namespace", "", []string{"jobs", "list", "-n", "kube-system"}, `^tidegate: namespace "kube-system" is not one of tenant dev's: team-a, team-b \(request id \S+\)\n$`},
		{"bad filter", "", []string{"jobs", "list", "--status", "done"}, `^tidegate: fix the listed query parameters \(request id \S+\)\n  - status: must be one of blocked, queued, dispatching, pending, running, succeeded \(or completed\), failed, cancelled\n$`},
		{"policy violation", privilegedJob(t), []string{"jobs", "submit", "-f", "-"},
			`^tidegate: 1 policy violation\(s\)[^\n]*\(request id \S+\)\n  - document 0 Job/bad-\S+ spec\.template\.spec\.containers\[0\]\.securityContext\.privileged: [^\n]+\n$`},
		{"bad settings", exampleJob(t, "x"), []string{"jobs", "submit", "-f", "-", "--priority", "101"},
			`^tidegate: fix the listed fields \(request id \S+\)\n  - region: required; one of us-east-1, us-west-2\n  - priority: must be a whole number from 0 to 100\n$`},
		{"no such file", "", []string{"jobs", "submit", "-f", "nope.yaml"}, `^tidegate: -f nope.yaml: no such file or directory\n$`},
		{"several documents with settings", exampleJob(t, "a") + "---\n" + exampleJob(t, "b"), []string{"jobs", "submit", "-f", "-", "--priority", "9"},
			`^tidegate: --priority, --label and the spot flags set one manifest's job; this input holds 2 documents`},
		{"bad label flag", exampleJob(t, "x"), []string{"jobs", "submit", "-f", "-", "-l", "team"}, `^tidegate: --label "team" is not key=value\n$`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.stdin = tt.stdin
			if e := h.fails(tt.args...); !regexp.MustCompile(tt.want).MatchString(e) {
				t.Errorf("tidegate %s printed\n%s\nwant it to match %s", strings.Join(tt.args, " "), e, tt.want)
			}
		})
	}

	h.stdin = privilegedJob(t)
	out, _, err := h.run("jobs", "submit", "-f", "-", "--dry-run")
	if err == nil || !strings.HasPrefix(out, "not valid: 1 policy violation(s)\n  - document 0 Job/bad-") {
		t.Errorf("a dry run of a refused manifest = %v, printed %q; want an error exit and the violation", err, out)
	}
	h.stdin = exampleJob(t, uniqueName("fine"))
	if out := h.ok("jobs", "submit", "-f", "-", "--dry-run"); out != "valid: 1 manifest(s) would be admitted; nothing was stored\n" {
		t.Errorf("a dry run of the example printed %q", out)
	}
	docs, err := documents([]byte(exampleJob(t, uniqueName("json"))))
	if err != nil || len(docs) != 1 {
		t.Fatalf("documents(example) = %d, %v", len(docs), err)
	}
	h.stdin = string(docs[0])
	if out := h.ok("jobs", "submit", "-f", "-", "--dry-run"); !strings.HasPrefix(out, "valid: 1 manifest(s)") {
		t.Errorf("a dry run of the example as JSON printed %q", out)
	}
	if got := h.ok("jobs", "list"); strings.Count(got, "\n") != 1 {
		t.Errorf("after refusals and dry runs, jobs list = %q, want only the header", got)
	}

	t.Setenv(envAPIKey, "tg_wrong")
	if e := h.fails("queue", "stats"); !regexp.MustCompile(`^tidegate: the API key is not valid; check it, or create one with .tidegate admin keys create. \(request id \S+\)\n$`).MatchString(e) {
		t.Errorf("a wrong key printed %q, want the API's 401 detail", e)
	}
}
