package devstack_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/dev/devstack"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/podspec"
)

// TestHostedAppsBlueGreen runs `tidegate dev` with its stand-in for hosted processes and walks
// the hosted-apps story through the API: release 1 goes live once its host registers; release
// 2's host starts beside it and release 1 serves until release 2 is live, then stops; a changed
// secret rolls a new host the same way; no response carries the secret's value.
func TestHostedAppsBlueGreen(t *testing.T) {
	kube := testenv.Kube(t)
	opt := devstack.Options{
		Addr: freeAddr(t), APIKey: "k", Beat: time.Second, WebhooksAllowPrivate: true, Dir: t.TempDir(),
		Standins: &kube, Prefix: fmt.Sprintf("apps-%d", os.Getpid()), RegisterHosts: true,
	}
	st := startDev(t, opt)
	cs, err := sandbox.KubeClient(kube.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ns := opt.Prefix + "-apps"
	c := client{t: t, url: st.URL}

	if code, body := c.upload("web", tarball(t, map[string]string{"../evil": "x"})); code != 400 || !strings.Contains(body, "../evil") {
		t.Errorf("upload with ../evil = %d %s, want 400 naming the entry", code, body)
	}
	if code, body := c.upload("web", tarball(t, map[string]string{"package.json": `{"scripts":{"start":"node index.js"}}`, "index.js": "1"})); code != 201 {
		t.Fatalf("upload of release 1 = %d %s, want 201", code, body)
	}
	r1 := c.waitLive("web", 1)
	pod, err := cs.CoreV1().Pods(ns).Get(context.Background(), r1, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("release 1's pod %s: %v", r1, err)
	}
	if rc := pod.Spec.RuntimeClassName; rc == nil || *rc != "gvisor" {
		t.Errorf("release 1's pod runtimeClassName = %v, want gvisor", rc)
	}
	if sc := pod.Spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Errorf("release 1's pod security context = %+v, want runAsNonRoot", sc)
	}

	if code, body := c.upload("web", tarball(t, map[string]string{"package.json": `{"scripts":{"start":"node index.js"}}`, "index.js": "2"})); code != 201 {
		t.Fatalf("upload of release 2 = %d %s, want 201", code, body)
	}
	r2 := c.waitLive("web", 2)
	c.waitGone(cs, ns, r1)

	const secret = "do-not-print-me-7f3a"
	if code, body := c.do("PUT", "/api/v1/secrets/API_TOKEN", `{"value":"`+secret+`"}`); code/100 != 2 || strings.Contains(body, secret) {
		t.Fatalf("PUT secret = %d %s, want 2xx without the value", code, body)
	}
	r2b := c.waitLive("web", 2)
	if r2b == r2 {
		t.Fatalf("the live host stayed %s after a secret changed; want a new host", r2)
	}
	c.waitGone(cs, ns, r2)
	for _, path := range []string{"/api/v1/apps/web", "/api/v1/apps", "/api/v1/secrets", "/api/v1/apps/plan", "/api/v1/apps/web/releases", "/api/v1/apps/web/logs"} {
		if code, body := c.do("GET", path, ""); code != 200 || strings.Contains(body, secret) {
			t.Errorf("GET %s = %d, carrying the secret's value: %v", path, code, strings.Contains(body, secret))
		}
	}
}

type client struct {
	t   *testing.T
	url string
}

func (c client) do(method, path, body string) (int, string) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.url+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer k")
	req.Header.Set("Content-Type", "application/json")
	return c.send(req)
}

func (c client) upload(app string, tgz []byte) (int, string) {
	c.t.Helper()
	req, err := http.NewRequest("POST", c.url+"/api/v1/apps/"+app+"/releases", bytes.NewReader(tgz))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer k")
	req.Header.Set("Content-Type", "application/gzip")
	return c.send(req)
}

func (c client) send(req *http.Request) (int, string) {
	c.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitLive waits until app is live on release, and answers its live host.
func (c client) waitLive(app string, release int) string {
	c.t.Helper()
	var last string
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		code, body := c.do("GET", "/api/v1/apps/"+app, "")
		last = body
		var v struct {
			State       string `json:"state"`
			LiveRelease int    `json:"live_release"`
			Host        string `json:"host"`
			LiveHost    string `json:"live_host"`
		}
		if code == 200 && json.Unmarshal([]byte(body), &v) == nil && v.State == "live" && v.LiveRelease == release && v.LiveHost == v.Host {
			return v.LiveHost
		}
	}
	c.t.Fatalf("app %s was not live on release %d within 90 s; last: %s", app, release, last)
	return ""
}

// waitGone waits until the host's pod is gone or being deleted, and its Secret is removed.
func (c client) waitGone(cs kubernetes.Interface, ns, host string) {
	c.t.Helper()
	ctx := context.Background()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, host, metav1.GetOptions{})
		podGoing := apierrors.IsNotFound(err) || (err == nil && p.DeletionTimestamp != nil)
		_, err = cs.CoreV1().Secrets(ns).Get(ctx, podspec.SecretName(host), metav1.GetOptions{})
		if podGoing && apierrors.IsNotFound(err) {
			return
		}
	}
	c.t.Fatalf("host %s was not stopped within 60 s of its successor going live", host)
}

func tarball(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range files {
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
	return buf.Bytes()
}
