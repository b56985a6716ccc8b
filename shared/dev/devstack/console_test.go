package devstack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"sigs.k8s.io/yaml"

	"github.com/tidegate/tidegate/shared/dev/contract"
	"github.com/tidegate/tidegate/shared/dev/devstack"
	"github.com/tidegate/tidegate/shared/dev/testenv"
)

// syncBuffer is what Run says, written by its goroutine and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startDevSaying is startDev with what Run says going to out. The banner is written just after
// the state, so it is waited for too.
func startDevSaying(t *testing.T, opt devstack.Options, out *syncBuffer) devstack.State {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var runErr error
	opt.WrapAPI = contract.Middleware(t)
	go func() { runErr = devstack.Run(ctx, opt, out, slog.New(slog.DiscardHandler)); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	st := waitState(t, opt.Dir, done, &runErr)
	for i := 0; i < 50 && !strings.Contains(out.String(), "ready in"); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	return st
}

// chromium finds Debian's chromium (scripts/tools-browser.sh installs it), or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "/usr/bin/chromium"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH: run scripts/tools-browser.sh (make test does) to drive the console in a browser")
	return ""
}

// screenshots is where the browser test saves its pages: $TIDEGATE_TEST_OUT/console, else the
// clone's ignored .tidegate/test-out/console.
func screenshots(t *testing.T) string {
	dir := os.Getenv("TIDEGATE_TEST_OUT")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", ".tidegate", "test-out")
	}
	dir, _ = filepath.Abs(filepath.Join(dir, "console"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

// TestConsoleInABrowser drives the console in headless Chromium against `tidegate dev`: sign in,
// submit the example job and watch it reach succeeded on its page without a reload, see a gated
// job's price chart, open an app's page, and see a job that is not the caller's answer the API's
// 404 with its request id. Any script error or CSP violation on a page fails the test.
func TestConsoleInABrowser(t *testing.T) {
	exe := chromium(t)
	kube := testenv.Kube(t)
	opt := devstack.Options{
		Addr: freeAddr(t), APIKey: "k", Beat: time.Second, WebhooksAllowPrivate: true, Dir: t.TempDir(),
		Standins: &kube, Prefix: fmt.Sprintf("console-%d", os.Getpid()), RegisterHosts: true,
	}
	said := &syncBuffer{}
	st := startDevSaying(t, opt, said)
	if want := "console   " + st.URL + "/ "; !strings.Contains(said.String(), want) {
		t.Errorf("tidegate dev said:\n%s\nwant a line with %q", said.String(), want)
	}
	c := client{t: t, url: st.URL}
	out := screenshots(t)

	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 1000))
	defer cancelAlloc()
	// The browser lives as long as ctx, which has no timeout (chromedp.Run); each step has its own.
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	var mu sync.Mutex
	var problems []string
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException {
				mu.Lock()
				problems = append(problems, m.String())
				mu.Unlock()
			}
		}
	}()
	do := func(what string, within time.Duration, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		c, stop := context.WithTimeout(ctx, within)
		defer stop()
		if err := chromedp.Do(c, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	eval := func(expr string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("evaluating %s: %v", expr, err)
		}
		return v
	}
	shot := func(name string) {
		t.Helper()
		b, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot of %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(out, name+".png"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const step = time.Minute

	// Sign in: the key lands in sessionStorage, nowhere else.
	if err := chromedp.Do(ctx, chromedp.Navigate(st.URL+"/")); err != nil {
		t.Fatalf("opening the console: %v", err)
	}
	do("sign in", step, chromedp.WaitVisible(chromedp.ID("apikey")), chromedp.SendKeys(chromedp.ID("apikey"), "k"),
		chromedp.Click(chromedp.CSS(`#signin button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS("#jobs table")))
	if stored, kept := eval(`sessionStorage.getItem("tidegate.key")`), eval(`JSON.stringify(localStorage) + document.cookie`); stored != "k" || kept != "{}" {
		t.Errorf("after sign-in sessionStorage key = %q, localStorage and cookies = %q; want k, and nothing else kept", stored, kept)
	}

	// The example job, submitted from the console's form, reaches succeeded on its page.
	example, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	manifest := strings.Replace(string(example), "name: hello", fmt.Sprintf("name: hello-console-%d", os.Getpid()), 1)
	do("submit the example", step, chromedp.Navigate(st.URL+"/#/jobs/new"), chromedp.WaitVisible(chromedp.ID("manifest")),
		chromedp.SetValue(chromedp.ID("manifest"), manifest), chromedp.SendKeys(chromedp.ID("namespace"), "team-a"),
		chromedp.Click(chromedp.ID("submit")), chromedp.WaitVisible(chromedp.CSS(`#timeline li[data-status="queued"]`)))
	eval(`window.samePage = "yes"`)
	do("the example job reaching succeeded on its page", 3*time.Minute, chromedp.WaitVisible(chromedp.CSS(`h1 [data-status="succeeded"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#timeline li[data-status="succeeded"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#decisions tr[data-decision="admitted"]`)))
	if eval(`String(window.samePage)`) != "yes" {
		t.Error("the job page was loaded again to show succeeded; want it to update in place")
	}
	shot("job")
	do("jobs list", step, chromedp.Navigate(st.URL+"/#/jobs"), chromedp.WaitVisible(chromedp.CSS(`#jobs [data-status="succeeded"]`)))
	// A job a client submits through the API, as the CLI does, appears on the open list and
	// reaches succeeded there, without a reload.
	eval(`window.samePage = "list"`)
	row := `#jobs tr[data-job="` + c.submitPlain(t, "from-a-client") + `"]`
	do("a client's job appearing and succeeding on the list", 3*time.Minute, chromedp.WaitVisible(chromedp.CSS(row)),
		chromedp.WaitVisible(chromedp.CSS(row+` [data-status="succeeded"]`)))
	if eval(`String(window.samePage)`) != "list" {
		t.Error("the jobs list was loaded again to show a client's job; want it to update in place")
	}
	shot("jobs")

	// A workflow's page draws its graph, each job's box taking its status as the jobs move.
	pipeline, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "pipeline.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var wfBody map[string]any
	if err := yaml.Unmarshal(pipeline, &wfBody); err != nil {
		t.Fatal(err)
	}
	for _, j := range wfBody["jobs"].([]any) {
		meta := j.(map[string]any)["manifest"].(map[string]any)["metadata"].(map[string]any)
		meta["name"] = fmt.Sprintf("%s-console-%d", meta["name"], os.Getpid())
	}
	raw, _ := json.Marshal(wfBody)
	code, answer := c.do("POST", "/api/v1/workflows", string(raw))
	var wf struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(answer), &wf); code != 202 || err != nil {
		t.Fatalf("POST /api/v1/workflows = %d %s", code, answer)
	}
	do("the example workflow's graph reaching succeeded", 3*time.Minute, chromedp.Navigate(st.URL+"/#/workflows/"+wf.ID),
		chromedp.WaitVisible(chromedp.CSS(`svg.graph path.edge[data-from="train"][data-to="report"]`)),
		chromedp.WaitVisible(chromedp.CSS(`svg.graph g[data-step="report"][data-status="succeeded"]`)),
		chromedp.WaitVisible(chromedp.CSS(`h1 [data-status="succeeded"]`)))
	shot("workflow")

	// A gated job: three prices above its cap of 0.30 make three points beside the cap.
	setPrice(t, st.PricesURL, `{"region":"us-east-1","instance_type":"g5.xlarge","price":0.55}`)
	gated := c.submitCapped(t, "gated-console", "", "")
	for _, p := range []string{"0.50", "0.45"} {
		time.Sleep(4 * time.Second)
		setPrice(t, st.PricesURL, `{"region":"us-east-1","instance_type":"g5.xlarge","price":`+p+`}`)
	}
	time.Sleep(4 * time.Second)
	chart := `svg.chart[data-instance-type="g5.xlarge"]`
	do("queue chart", step, chromedp.Navigate(st.URL+"/#/queue/us-east-1"),
		chromedp.WaitVisible(chromedp.CSS(chart+` line.cap[data-cap="0.3"]`)), chromedp.WaitVisible(chromedp.CSS(chart+` path.price`)),
		// The region's flavors, a row a resource: every flavor counts pods.
		chromedp.WaitVisible(chromedp.CSS(`tr[data-flavor][data-resource="pods"]`)))
	if dots, _ := strconv.Atoi(eval(`String(document.querySelectorAll('` + chart + ` circle.dot').length)`)); dots < 3 {
		t.Errorf("the chart has %d price points, want at least 3 (0.55, 0.50, 0.45)", dots)
	}
	shot("queue")
	if code, body := c.do("DELETE", "/api/v1/jobs/"+gated, ""); code/100 != 2 {
		t.Errorf("cancelling the gated job = %d %s", code, body)
	}

	// An app's page shows its release and its live host.
	if code, body := c.upload("web", tarball(t, map[string]string{"package.json": `{"scripts":{"start":"node index.js"}}`, "index.js": "1"})); code != 201 {
		t.Fatalf("upload = %d %s, want 201", code, body)
	}
	c.waitLive("web", 1)
	do("app page", step, chromedp.Navigate(st.URL+"/#/apps/web"), chromedp.WaitVisible(chromedp.CSS(`h1 [data-status="live"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#releases tr[data-release="1"]`)))
	shot("app")

	// A job that is not the caller's is the API's 404, shown with its request id.
	do("another's job", step, chromedp.Navigate(st.URL+"/#/jobs/job-not-yours"), chromedp.WaitVisible(chromedp.CSS(`#error [data-request-id]`)))
	if shown := eval(`document.getElementById("error").textContent`); !strings.Contains(shown, "404") || !strings.Contains(shown, "request id: req_") {
		t.Errorf("another's job shows %q, want the API's 404 with its request id", shown)
	}

	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		// The 404 above is logged by the browser as a failed fetch, not by the console's scripts.
		if !strings.Contains(p, "404") {
			t.Errorf("page problem: %s", p)
		}
	}
}
