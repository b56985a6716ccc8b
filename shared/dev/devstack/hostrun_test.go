package devstack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/dev/devstack"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dev/testenv"
)

// slowApp serves nothing: it says who it runs as and what it can reach, registers itself after
// a pause (so a test sees the release before it serves), then stays up.
const slowApp = `const fs = require("node:fs");
let ro = "writable";
try { fs.writeFileSync("/usr/tidegate-probe", "x"); } catch (e) { ro = "read-only"; }
console.log("uid=" + process.getuid() + " leak=" + (process.env.TIDEGATE_TEST_LEAK || "none") + " usr=" + ro);
setTimeout(async () => {
  const res = await fetch(process.env.TIDEGATE_REGISTER_URL, {
    method: "POST", headers: { authorization: "Bearer " + process.env.TIDEGATE_HOST_TOKEN },
  });
  console.log("release 2 registered: " + res.status);
}, 6000);
setInterval(() => {}, 1000);
`

// crashApp prints a line and exits with code 3 before it registers.
const crashApp = `console.error("release 3 gives up"); process.exit(3);`

// TestHostedAppsRunForReal runs `tidegate dev` with hosts run on this machine: examples/app goes
// live because its own process registered, and its output is what the logs route shows; release
// 2 serves only once its own process registered, as user 1000, with none of this machine's
// environment and a read-only system; release 1's process ends with its pod; release 3's process
// exits 3, which, with its last line, is what the failed release says. An app --never-register names is left to kwok, and never
// goes live.
func TestHostedAppsRunForReal(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not on PATH: scripts/tools-hostrun.sh installs bubblewrap")
	}
	t.Setenv("TIDEGATE_TEST_LEAK", "this machine's environment")
	kube := testenv.Kube(t)
	opt := devstack.Options{
		Addr: freeAddr(t), APIKey: "k", Beat: time.Second, WebhooksAllowPrivate: true, Dir: t.TempDir(),
		Standins: &kube, Prefix: fmt.Sprintf("run-%d", os.Getpid()), RegisterHosts: true, RunHosts: true,
		NeverRegister: []string{"quiet"},
	}
	st := startDev(t, opt)
	cs, err := sandbox.KubeClient(kube.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ns := opt.Prefix + "-apps"
	c := client{t: t, url: st.URL}

	example := map[string]string{}
	for _, name := range []string{"package.json", "package-lock.json", "server.js"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "app", name))
		if err != nil {
			t.Fatal(err)
		}
		example[name] = string(b)
	}
	for _, app := range []string{"quiet", "hello"} {
		if code, body := c.upload(app, tarball(t, example)); code != 201 {
			t.Fatalf("upload of examples/app as %s = %d %s, want 201", app, code, body)
		}
	}
	r1 := c.waitLive("hello", 1)
	pod1 := played(t, cs, ns, r1)
	c.waitLogs("hello", 0, "registered "+r1)

	code, body := c.upload("hello", tarball(t, map[string]string{"tidegate.json": `{"start":["node","server.js"]}`, "server.js": slowApp}))
	if code != 201 {
		t.Fatalf("upload of release 2 = %d %s, want 201", code, body)
	}
	lines := c.waitLogs("hello", 2, "uid=") // the live host is release 1's: ask for release 2's
	if want := "uid=1000 leak=none usr=read-only"; !strings.Contains(strings.Join(lines, "\n"), want) {
		t.Errorf("release 2's first line = %q, want %q", lines, want)
	}
	if live := c.app("hello"); live.LiveHost != r1 || live.LiveRelease != 1 {
		t.Errorf("before release 2's process registered the app was live on %s (release %d), want %s", live.LiveHost, live.LiveRelease, r1)
	}
	r2 := c.waitLive("hello", 2)
	played(t, cs, ns, r2)
	c.waitLogs("hello", 0, "release 2 registered: 200")
	c.waitGone(cs, ns, r1)
	waitNoFolder(t, pod1)

	if code, body := c.upload("hello", tarball(t, map[string]string{"tidegate.json": `{"start":["node","server.js"]}`, "server.js": crashApp})); code != 201 {
		t.Fatalf("upload of release 3 = %d %s, want 201", code, body)
	}
	// The beat reads the pod's exit code and its last lines (the process's, through kwok) when it
	// fails the release.
	c.waitFailed("hello", "the app exited with code 3", "release 3 gives up")
	if live := c.app("hello"); live.LiveHost != r2 {
		t.Errorf("after release 3 crashed the app was live on %s, want %s", live.LiveHost, r2)
	}
	neverRun(t, cs, ns, "quiet-r1-")
	if quiet := c.app("quiet"); quiet.State == "live" || quiet.LiveHost != "" {
		t.Errorf("app quiet, named by --never-register, is %s on %q; want it never live", quiet.State, quiet.LiveHost)
	}
}

// neverRun checks the pod whose name starts with prefix is kwok's alone: Running as kwok's stage
// makes it, no process of this machine playing it.
func neverRun(t *testing.T, cs kubernetes.Interface, ns, prefix string) {
	t.Helper()
	pods, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if strings.HasPrefix(p.Name, prefix) {
			if _, played := p.Annotations[sandbox.ProcessAnnotation]; played || p.Status.Phase != corev1.PodRunning {
				t.Errorf("pod %s: annotations %v, phase %s; want kwok's Running pod, played by no process", p.Name, p.Annotations, p.Status.Phase)
			}
			return
		}
	}
	t.Errorf("no pod %s* in %s", prefix, ns)
}

type appView struct {
	State       string `json:"state"`
	LiveRelease int    `json:"live_release"`
	LiveHost    string `json:"live_host"`
}

func (c client) app(name string) appView {
	c.t.Helper()
	code, body := c.do("GET", "/api/v1/apps/"+name, "")
	var v appView
	if code != 200 || json.Unmarshal([]byte(body), &v) != nil {
		c.t.Fatalf("GET /api/v1/apps/%s = %d %s", name, code, body)
	}
	return v
}

// waitLogs waits until the app's logs (release's, or the default's for 0) hold a line containing want, and
// answers them.
func (c client) waitLogs(app string, release int, want string) []string {
	c.t.Helper()
	path := "/api/v1/apps/" + app + "/logs"
	if release > 0 {
		path += fmt.Sprintf("?release=%d", release)
	}
	var last string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		code, body := c.do("GET", path, "")
		last = body
		var v struct {
			Lines []string `json:"lines"`
		}
		if code == 200 && json.Unmarshal([]byte(body), &v) == nil && strings.Contains(strings.Join(v.Lines, "\n"), want) {
			return v.Lines
		}
	}
	c.t.Fatalf("the logs of %s did not show %q within 60 s; last: %s", app, want, last)
	return nil
}

// played checks a process of this machine plays host's pod, and answers the pod's UID.
func played(t *testing.T, cs kubernetes.Interface, ns, host string) string {
	t.Helper()
	p, err := cs.CoreV1().Pods(ns).Get(context.Background(), host, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("pod %s: %v", host, err)
	}
	if p.Annotations[sandbox.ProcessAnnotation] != "true" || p.Status.Phase != corev1.PodRunning {
		t.Errorf("pod %s: annotations %v, phase %s; want one played by a process, Running", host, p.Annotations, p.Status.Phase)
	}
	return string(p.UID)
}

// waitNoFolder waits until the folder of the pod of UID uid is gone, which the runner removes
// once the pod's process has ended.
func waitNoFolder(t *testing.T, uid string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if m, _ := filepath.Glob(filepath.Join(os.TempDir(), "tidegate-hosts-*", uid)); len(m) == 0 {
			return
		}
	}
	t.Errorf("the folder of pod %s is still there 30 s after its host stopped: its process was not ended", uid)
}

// waitFailed waits until app's release failed with a failed_why holding each of want.
func (c client) waitFailed(app string, want ...string) {
	c.t.Helper()
	var last string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		code, body := c.do("GET", "/api/v1/apps/"+app, "")
		last = body
		var v struct {
			FailedWhy string `json:"failed_why"`
		}
		if code != 200 || json.Unmarshal([]byte(body), &v) != nil {
			continue
		}
		all := v.FailedWhy != ""
		for _, w := range want {
			all = all && strings.Contains(v.FailedWhy, w)
		}
		if all {
			return
		}
	}
	c.t.Fatalf("app %s did not fail saying %q within 60 s; last: %s", app, want, last)
}
