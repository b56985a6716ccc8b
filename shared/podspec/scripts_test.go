package podspec

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestScriptsParse(t *testing.T) {
	needTools(t, "sh")
	for name, script := range map[string]string{"timedInstall": timedInstall, "installScript": installScript, "startScript": startScript} {
		if out, err := exec.Command("sh", "-n", "-c", script).CombinedOutput(); err != nil {
			t.Errorf("sh -n %s: %v\n%s", name, err, out)
		}
	}
}

// sources is a gzipped tar of files, and its sha256.
func sources(t *testing.T, files map[string]string) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for name := range files {
			if !yield(name) {
				return
			}
		}
	}) {
		body := files[name]
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return buf.Bytes(), hex.EncodeToString(sum[:])
}

// install runs the pod's install container command here, as the pod would, with its
// directories moved under a temporary one and limit in place of InstallLimit.
type install struct {
	url, sha256, limit string
	out                string
	err                error
	app, home, marker  string
}

func (in *install) run(t *testing.T) {
	t.Helper()
	root := t.TempDir()
	in.app, in.home = filepath.Join(root, "app"), filepath.Join(root, "home")
	scratch := filepath.Join(root, "scratch")
	for _, dir := range []string{in.app, in.home, scratch} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A URL a shell would run a command from, were it ever read as script.
	in.marker = filepath.Join(root, "pwned")
	l := fixture()
	l.SourcesURL = in.url + `?sig='$(touch ` + in.marker + `)'"&x=;touch%20` + in.marker
	l.SourcesSHA256 = in.sha256
	pod, err := Pod(l)
	if err != nil {
		t.Fatalf("Pod: %v", err)
	}
	c := pod.Spec.InitContainers[0]
	moved := map[string]string{installDir: in.home, scratchDir: scratch, appDir: in.app}
	env := []string{"PATH=" + os.Getenv("PATH")}
	for _, e := range c.Env {
		if dir, ok := moved[e.Value]; ok {
			e.Value = dir
		}
		env = append(env, e.Name+"="+e.Value)
	}
	args := slices.Clone(c.Command)
	if in.limit != "" {
		args[4] = in.limit
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env, cmd.Dir = env, root
	out, err := cmd.CombinedOutput()
	in.out, in.err = string(out), err
	if _, statErr := os.Stat(in.marker); statErr == nil {
		t.Errorf("the sources URL ran as shell: %s exists", in.marker)
	}
}

func serve(t *testing.T, handler http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return srv.URL + "/sources"
}

func serveBytes(t *testing.T, body []byte) string {
	return serve(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(body) })
}

func TestInstallUnpacksCheckedSources(t *testing.T) {
	needTools(t, "sh", "node", "sha256sum", "tar", "timeout")
	body, sum := sources(t, map[string]string{"main.py": "print('hi')\n", "lib/util.py": "x = 1\n"})
	in := install{url: serveBytes(t, body), sha256: sum}
	in.run(t)
	if in.err != nil {
		t.Fatalf("install of a release with no dependencies: %v\n%s", in.err, in.out)
	}
	for name, want := range map[string]string{"main.py": "print('hi')\n", "lib/util.py": "x = 1\n"} {
		got, err := os.ReadFile(filepath.Join(in.app, name))
		if err != nil || string(got) != want {
			t.Errorf("installed %s = %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(in.home, "sources.tar.gz")); err == nil {
		t.Errorf("the install left the archive in its home")
	}
	if !strings.Contains(in.out, "nothing to install") {
		t.Errorf("install output does not say there was nothing to install:\n%s", in.out)
	}
}

func TestInstallRunsNpmCi(t *testing.T) {
	needTools(t, "sh", "node", "npm", "sha256sum", "tar", "timeout")
	body, sum := sources(t, map[string]string{
		"package.json":      `{"name": "bot", "version": "1.0.0", "scripts": {"start": "node index.js"}}`,
		"package-lock.json": `{"name": "bot", "version": "1.0.0", "lockfileVersion": 3, "requires": true, "packages": {"": {"name": "bot", "version": "1.0.0"}}}`,
		"index.js":          "console.log('up')\n",
	})
	in := install{url: serveBytes(t, body), sha256: sum}
	in.run(t)
	if in.err != nil || !strings.Contains(in.out, "tidegate install: done") || strings.Contains(in.out, "nothing to install") {
		t.Errorf("install of an npm release: %v\n%s", in.err, in.out)
	}
}

func TestInstallRefuses(t *testing.T) {
	needTools(t, "sh", "node", "sha256sum", "tar", "timeout")
	body, sum := sources(t, map[string]string{"main.py": "print('hi')\n"})
	_, otherSum := sources(t, map[string]string{"main.py": "print('evil')\n"})
	stop := make(chan struct{})
	stalled := serve(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	})
	t.Cleanup(func() { close(stop) })
	tests := []struct {
		name string
		in   install
		says string
	}{
		{"another digest", install{url: serveBytes(t, body), sha256: otherSum}, "not the release's " + otherSum},
		{"a refused GET", install{url: serve(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusForbidden) }), sha256: sum}, "answered HTTP 403"},
		{"past the limit", install{url: stalled, sha256: sum, limit: "1"}, "not done within 1 seconds"},
	}
	for _, tt := range tests {
		tt.in.run(t)
		if tt.in.err == nil || !strings.Contains(tt.in.out, tt.says) {
			t.Errorf("install with %s: %v, output %q; want a failure saying %q", tt.name, tt.in.err, tt.in.out, tt.says)
		}
		if _, err := os.Stat(filepath.Join(tt.in.app, "main.py")); err == nil {
			t.Errorf("install with %s unpacked the sources", tt.name)
		}
	}
}

// start runs the pod's app container command with args in dir, holding files.
func start(t *testing.T, files map[string]string, args ...string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	l := fixture()
	l.Command = args
	pod, err := Pod(l)
	if err != nil {
		t.Fatalf("Pod: %v", err)
	}
	command := pod.Spec.Containers[0].Command
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestStartScript(t *testing.T) {
	needTools(t, "sh", "python3", "npm")
	tests := []struct {
		name  string
		files map[string]string
		args  []string
		want  string
	}{
		{"command as arguments", nil, []string{"printf", "%s|%s", "a;b $(touch x) `id`", "$HOME"}, "a;b $(touch x) `id`|$HOME"},
		{"the venv first", map[string]string{".venv/bin/hello": "#!/bin/sh\necho \"from ${VIRTUAL_ENV##*/}\"\n"}, []string{"hello"}, "from .venv"},
		{"main.py by default", map[string]string{"main.py": "print('main ran')\n"}, nil, "main ran"},
		{"npm start by default", map[string]string{"package.json": `{"name": "bot", "scripts": {"start": "echo npm-started"}}`}, nil, "npm-started"},
	}
	for _, tt := range tests {
		out, err := start(t, tt.files, tt.args...)
		if err != nil || !strings.Contains(out, tt.want) {
			t.Errorf("start with %s: %v, output %q; want %q in it", tt.name, err, out, tt.want)
		}
	}
	out, err := start(t, nil)
	if err == nil || !strings.Contains(out, "no command was given") {
		t.Errorf("start with nothing to start: %v, output %q; want a failure saying so", err, out)
	}
}
