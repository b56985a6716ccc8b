package apps

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

var offered = []string{"node22", "python3.12"}

func TestParseLaunch(t *testing.T) {
	tests := []struct {
		in   string
		want Launch
	}{
		{`{}`, Launch{}},
		{`{"start": ["node", "server.js", "--port", "8080"], "runtime": "node22"}`, Launch{Start: []string{"node", "server.js", "--port", "8080"}, Runtime: "node22"}},
		{`{"runtime": "python3.12", "ready": {"http_path": "/healthz", "port": 8080}}`, Launch{Runtime: "python3.12", Ready: &Ready{Path: "/healthz", Port: 8080}}},
		{`{"ready": {"exec": ["test", "-f", "/tmp/ready"]}}`, Launch{Ready: &Ready{Exec: []string{"test", "-f", "/tmp/ready"}}}},
	}
	for _, tt := range tests {
		got, err := ParseLaunch([]byte(tt.in), offered)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseLaunch(%s) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseLaunchNamesTheField(t *testing.T) {
	tests := []struct{ in, field, says string }{
		{`{"strat": ["node"]}`, "", `unknown field "strat"`},
		{`[]`, "", "not a JSON object"},
		{`{} {}`, "", "more after its JSON object"},
		{`{"start": [""]}`, "start[0]", "name the program"},
		{`{"start": ["node", "a\u0000b"]}`, "start[1]", "NUL"},
		{`{"start": "npm start"}`, "", "not a JSON object"}, // a string, which would want a shell
		{`{"runtime": "ruby3"}`, "runtime", "choose node22, python3.12"},
		{`{"ready": {"http_path": "/healthz"}}`, "ready.port", "from 1 to 65535"},
		{`{"ready": {"http_path": "healthz", "port": 80}}`, "ready.http_path", "starting with '/'"},
		{`{"ready": {"exec": ["true"], "port": 80}}`, "ready", "give one"},
		{`{"ready": {"exec": [""]}}`, "ready.exec[0]", "name the program"},
		{`{"start": [` + strings.Repeat(`"x",`, maxArgs) + `"x"]}`, "start", "more than 64"},
	}
	for _, tt := range tests {
		_, err := ParseLaunch([]byte(tt.in), offered)
		var le *LaunchError
		if !errors.As(err, &le) || le.Field != tt.field || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("ParseLaunch(%.60s) = %v; want a LaunchError on %q saying %q", tt.in, err, tt.field, tt.says)
		}
	}
	if _, err := ParseLaunch([]byte(`{"runtime": "node22"}`), nil); err == nil || !strings.Contains(err.Error(), "only the default") {
		t.Errorf("ParseLaunch naming a runtime where none is offered = %v; want a refusal saying only the default", err)
	}
}

func TestParseRuntimes(t *testing.T) {
	const digest = "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	got, err := ParseRuntimes("node22=docker.io/library/node:22-bookworm-slim" + digest + ", python3.12=docker.io/library/python:3.12-slim" + digest)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"node22", "python3.12"}; !reflect.DeepEqual(got.Names(), want) || got["node22"] != "docker.io/library/node:22-bookworm-slim"+digest {
		t.Errorf("ParseRuntimes = %v", got)
	}
	if rs, err := ParseRuntimes(""); err != nil || len(rs) != 0 {
		t.Errorf("ParseRuntimes(\"\") = %v, %v; want none", rs, err)
	}
	for in, says := range map[string]string{
		"node22=docker.io/library/node:22":             "not pinned by digest",
		"Node22=docker.io/library/node" + digest:       "lower-case",
		"node22":                                       "name=image",
		"node22=a" + digest + ",node22=b" + digest:     "twice",
		"node22=docker.io/library/node@sha256:abc":     "not pinned",
		"node22=docker.io/library/node" + digest + "x": "not pinned",
	} {
		if _, err := ParseRuntimes(in); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("ParseRuntimes(%q) = %v; want an error saying %q", in, err, says)
		}
	}
}
