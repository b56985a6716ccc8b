package devstack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/tidegate/tidegate/shared/dev/contract"
	"github.com/tidegate/tidegate/shared/dev/devstack"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
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

// axeScript is axe-core's script, which scripts/tools-axe.sh installs into the cache.
func axeScript(t *testing.T) string {
	t.Helper()
	p := filepath.Join(sandbox.CacheDir(), "axe", "node_modules", "axe-core", "axe.min.js")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("reading axe-core: %v; run scripts/tools-axe.sh (make test does) to check the console's pages", err)
	}
	return string(b)
}

// browser is the console open in headless Chromium: each step with its own time limit, and what
// the page logged as an error, gathered for the end.
type browser struct {
	t        *testing.T
	ctx      context.Context
	url, out string
	axe      string
	mu       sync.Mutex
	problems []string
}

// The browser test's time limits: a page's step, and a job's run from submission to its end.
const (
	step   = time.Minute
	jobRun = 3 * time.Minute
)

func openBrowser(t *testing.T, exe, url string) *browser {
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 1000))
	// The browser lives as long as ctx, which has no timeout (chromedp.Run); each step has its own.
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx, url: url, out: screenshots(t), axe: axeScript(t)}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException {
				b.mu.Lock()
				b.problems = append(b.problems, m.String())
				b.mu.Unlock()
			}
		}
	}()
	return b
}

func (b *browser) do(what string, within time.Duration, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	c, stop := context.WithTimeout(b.ctx, within)
	defer stop()
	if err := chromedp.Do(c, steps...); err != nil {
		// What the page showed then, to see which part never came.
		shown, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.body.innerText`))
		b.shot("failed")
		b.t.Fatalf("%s: %v; the page (failed.png) said:\n%s", what, err, shown)
	}
}

// open goes to the console's page at hash and waits for each selector to show.
func (b *browser) open(what, hash string, within time.Duration, visible ...string) {
	b.t.Helper()
	steps := []chromedp.Action[chromedp.Void]{chromedp.Navigate(b.url + "/" + hash)}
	for _, sel := range visible {
		steps = append(steps, chromedp.WaitVisible(chromedp.CSS(sel)))
	}
	b.do(what, within, steps...)
}

func (b *browser) eval(expr string) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

func (b *browser) shot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot of %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(b.out, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// axeViolation is one rule axe-core found broken on a page, and the elements that break it.
type axeViolation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

const axeRun = `axe.run(document, {resultTypes: ["violations"]}).then((r) => r.violations.map((v) => ({
  id: v.id, impact: v.impact || "", help: v.help,
  nodes: v.nodes.map((n) => n.target.join(" ") + ": " + (n.failureSummary || "").replace(/\s+/g, " ")) })))`

// accessible runs axe-core on the page as it is and fails the test on each serious or critical
// violation, naming the rule, its impact and the elements. A poll may redraw the page while axe
// reads it, so a run that throws is tried again.
func (b *browser) accessible(page string) {
	b.t.Helper()
	if b.eval(`typeof axe`) == "undefined" {
		if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](b.axe+"\n;true")); err != nil {
			b.t.Fatalf("loading axe-core into %s: %v", page, err)
		}
	}
	var found []axeViolation
	var err error
	for range 3 {
		if found, err = chromedp.Run(b.ctx, chromedp.Evaluate[[]axeViolation](axeRun, chromedp.EvalAwaitPromise)); err == nil {
			break
		}
	}
	if err != nil {
		b.t.Fatalf("axe on %s: %v", page, err)
	}
	for _, v := range found {
		if v.Impact == "serious" || v.Impact == "critical" {
			b.t.Errorf("%s: axe rule %s (%s): %s\n\t%s", page, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "\n\t"))
		}
	}
}

// TestConsoleInABrowser drives the console in headless Chromium against `tidegate dev`: sign in
// by keyboard, submit the example job and watch it reach succeeded on its page without a reload,
// its placement, cost and decisions there; a gated job waiting in words, and its region's
// capacity bars and price chart; the costs and the audit log; an app's page; the keyboard's way
// through the navigation; and a job that is not the caller's, the API's 404 with its request id.
// Every page is checked by axe-core; any script error or CSP violation on a page fails the test.
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
	b := openBrowser(t, exe, st.URL)
	// A spot price for the sandbox's spot nodes, so the jobs' costs below are estimated in full.
	setPrice(t, st.PricesURL, `{"region":"us-east-1","instance_type":"g5.xlarge","price":0.42}`)

	consoleSignIn(t, b)
	consoleJobPage(t, b)
	consoleJobsList(t, b, c)
	consoleWorkflow(t, b, c)
	consoleRegion(t, b, c, st)
	consoleCosts(t, b)
	consoleAudit(t, b)
	consoleApp(t, b, c)
	consoleKeyboard(t, b)
	consoleNotYours(t, b)

	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.problems {
		// The 404 above is logged by the browser as a failed fetch, not by the console's scripts.
		if !strings.Contains(p, "404") {
			t.Errorf("page problem: %s", p)
		}
	}
}

// consoleSignIn signs in with the keyboard alone: the key, then Enter. The key lands in
// sessionStorage, nowhere else.
func consoleSignIn(t *testing.T, b *browser) {
	if err := chromedp.Do(b.ctx, chromedp.Navigate(b.url+"/")); err != nil {
		t.Fatalf("opening the console: %v", err)
	}
	b.do("the sign-in page", step, chromedp.WaitVisible(chromedp.ID("apikey")))
	b.accessible("the sign-in page")
	b.do("sign in", step, chromedp.SendKeys(chromedp.ID("apikey"), "k\r"), chromedp.WaitVisible(chromedp.CSS("#jobs table")))
	if stored, kept := b.eval(`sessionStorage.getItem("tidegate.key")`), b.eval(`JSON.stringify(localStorage) + document.cookie`); stored != "k" || kept != "{}" {
		t.Errorf("after sign-in sessionStorage key = %q, localStorage and cookies = %q; want k, and nothing else kept", stored, kept)
	}
}

// consoleJobPage submits the example job from the console's form and watches it reach succeeded
// on its page, in place: its decisions on the timeline, its placement and its cost.
func consoleJobPage(t *testing.T, b *browser) {
	example, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	manifest := strings.Replace(string(example), "name: hello", fmt.Sprintf("name: hello-console-%d", os.Getpid()), 1)
	b.open("the submission form", "#/jobs/new", step, "#manifest")
	b.accessible("the submission form")
	b.do("submit the example", step, chromedp.SetValue(chromedp.ID("manifest"), manifest), chromedp.SendKeys(chromedp.ID("namespace"), "team-a"),
		chromedp.Click(chromedp.ID("submit")), chromedp.WaitVisible(chromedp.CSS(`#timeline li[data-status="queued"]`)))
	b.eval(`window.samePage = "yes"`)
	b.do("the example job reaching succeeded on its page", jobRun, chromedp.WaitVisible(chromedp.CSS(`h1 [data-status="succeeded"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#timeline li[data-status="succeeded"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#timeline li[data-decision="admitted"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#placement tr[data-node]`)),
		chromedp.WaitVisible(chromedp.CSS(`#cost tr[data-cost-node]`)))
	if b.eval(`String(window.samePage)`) != "yes" {
		t.Error("the job page was loaded again to show succeeded; want it to update in place")
	}
	for _, want := range []string{"cpu 100m", "1st attempt"} {
		if shown := b.eval(`document.querySelector("dl.kv").textContent`); !strings.Contains(shown, want) {
			t.Errorf("the job's summary shows %q, want %q in it", shown, want)
		}
	}
	b.accessible("the job page")
	b.shot("job")
}

// consoleJobsList: a job a client submits through the API, as the CLI does, appears on the open
// list and reaches succeeded there, without a reload.
func consoleJobsList(t *testing.T, b *browser, c client) {
	b.open("jobs list", "#/jobs", step, `#jobs [data-status="succeeded"]`)
	b.eval(`window.samePage = "list"`)
	// Its label is what the costs page groups by below.
	id := c.submitJob(t, "from-a-client", map[string]any{"labels": map[string]string{"team": "console"}})
	row := `#jobs tr[data-job="` + id + `"]`
	b.do("a client's job appearing and succeeding on the list", jobRun, chromedp.WaitVisible(chromedp.CSS(row)),
		chromedp.WaitVisible(chromedp.CSS(row+` [data-status="succeeded"]`)))
	if b.eval(`String(window.samePage)`) != "list" {
		t.Error("the jobs list was loaded again to show a client's job; want it to update in place")
	}
	b.accessible("the jobs list")
	b.shot("jobs")
}

// consoleWorkflow: a workflow's page draws its graph, each job's box taking its status as the
// jobs move.
func consoleWorkflow(t *testing.T, b *browser, c client) {
	pipeline, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "pipeline.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := yaml.Unmarshal(pipeline, &body); err != nil {
		t.Fatal(err)
	}
	for _, j := range body["jobs"].([]any) {
		meta := j.(map[string]any)["manifest"].(map[string]any)["metadata"].(map[string]any)
		meta["name"] = fmt.Sprintf("%s-console-%d", meta["name"], os.Getpid())
	}
	raw, _ := json.Marshal(body)
	code, answer := c.do("POST", "/api/v1/workflows", string(raw))
	var wf struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(answer), &wf); code != 202 || err != nil {
		t.Fatalf("POST /api/v1/workflows = %d %s", code, answer)
	}
	b.open("the example workflow's graph reaching succeeded", "#/workflows/"+wf.ID, jobRun,
		`svg.graph path.edge[data-from="train"][data-to="report"]`, `svg.graph g[data-step="report"][data-status="succeeded"]`,
		`h1 [data-status="succeeded"]`)
	b.accessible("the workflow page")
	b.shot("workflow")
}

// consoleRegion: a gated job says in words why it waits; three prices above its cap of 0.30 make
// three points beside the cap on its region's page, under the region's state and its flavors'
// capacity bars.
func consoleRegion(t *testing.T, b *browser, c client, st devstack.State) {
	setPrice(t, st.PricesURL, `{"region":"us-east-1","instance_type":"g5.xlarge","price":0.55}`)
	gated := c.submitCapped(t, "gated-console", "", "")
	for _, p := range []string{"0.50", "0.45"} {
		time.Sleep(4 * time.Second)
		setPrice(t, st.PricesURL, `{"region":"us-east-1","instance_type":"g5.xlarge","price":`+p+`}`)
	}
	time.Sleep(4 * time.Second)
	b.open("the gated job's page", "#/jobs/"+gated, step, `#waiting[data-reason="spot_price_above_cap"]`)
	if shown := b.eval(`document.getElementById("waiting").textContent`); !strings.Contains(shown, "The spot price of g5.xlarge") || !strings.Contains(shown, "is above its cap of 0.3") {
		t.Errorf("the gated job's page says %q, want why it waits in words", shown)
	}
	b.accessible("a queued job's page")
	holder := c.submitHolder(t, "holder-console")
	chart := `svg.chart[data-instance-type="g5.xlarge"]`
	b.open("the region's page", "#/queue/us-east-1", step, chart+` line.cap[data-cap="0.3"]`, chart+` path.price`,
		`[data-reach-state="admitting"]`,
		// The region's flavors, a bar a resource: every flavor counts pods, and the pod that
		// holds its room fills the tenant's share of the cpu of the flavor it was admitted on.
		`.flavor[data-flavor] dd[data-resource="pods"] svg.bar`, `dd[data-resource="cpu"] svg.bar rect.use[data-tenant]`)
	if dots, _ := strconv.Atoi(b.eval(`String(document.querySelectorAll('` + chart + ` circle.dot').length)`)); dots < 3 {
		t.Errorf("the chart has %d price points, want at least 3 (0.55, 0.50, 0.45)", dots)
	}
	if label := b.eval(`document.querySelector('dd[data-resource="pods"] svg.bar').getAttribute("aria-label")`); !strings.Contains(label, "in use") {
		t.Errorf("a pods bar is labelled %q, want its figures in words", label)
	}
	b.accessible("the region's page")
	b.shot("region")
	b.open("every region", "#/queue", step, `.region[data-region="us-east-1"] h2 a`)
	b.accessible("the regions page")
	for _, id := range []string{gated, holder} {
		if code, body := c.do("DELETE", "/api/v1/jobs/"+id, ""); code/100 != 2 {
			t.Errorf("cancelling %s = %d %s", id, code, body)
		}
	}
}

// submitHolder submits, to team-a in us-east-1, a bare Pod that restarts Always: a job that
// never ends and holds its CPU (team-a's limit for a container) until it is cancelled.
func (c client) submitHolder(t *testing.T, name string) string {
	t.Helper()
	restricted := map[string]any{"allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []any{"ALL"}}}
	body := map[string]any{"region": "us-east-1", "namespace": "team-a", "manifest": map[string]any{
		"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": fmt.Sprintf("%s-%d", name, os.Getpid())},
		"spec": map[string]any{
			"restartPolicy":   "Always",
			"securityContext": map[string]any{"runAsNonRoot": true, "runAsUser": 1000, "seccompProfile": map[string]any{"type": "RuntimeDefault"}},
			"containers": []any{map[string]any{"name": "main", "image": "busybox:1.36", "command": []any{"sleep", "infinity"},
				"resources": map[string]any{"limits": map[string]any{"cpu": "1", "memory": "512Mi"}}, "securityContext": restricted}},
		},
	}}
	code, out := c.do("POST", "/api/v1/jobs", mustMarshal(t, body))
	var created struct {
		Job struct {
			ID string `json:"id"`
		} `json:"job"`
	}
	if err := json.Unmarshal([]byte(out), &created); code != 202 || err != nil || created.Job.ID == "" {
		t.Fatalf("POST /api/v1/jobs of a holding pod = %d %s", code, out)
	}
	return created.Job.ID
}

// consoleCosts: today's column counts the jobs that ended above, and the spend by the client's
// job's label names its value.
func consoleCosts(t *testing.T, b *browser) {
	today := time.Now().UTC().Format(time.DateOnly)
	b.open("the costs page", "#/costs?label=team", step, `svg.days rect.col[data-day="`+today+`"]`,
		`#cost-labels tr[data-key="console"]`)
	if cols := b.eval(`String(document.querySelectorAll("svg.days rect.col").length)`); cols != "14" {
		t.Errorf("the costs chart has %s days, want 14", cols)
	}
	if jobs, _ := strconv.Atoi(b.eval(`document.querySelector('#cost-days tr[data-day="` + today + `"] td:nth-child(3)').textContent`)); jobs < 2 {
		t.Errorf("today's spend counts %d jobs, want the example and the client's at least", jobs)
	}
	b.accessible("the costs page")
	b.shot("costs")
}

// consoleAudit: the changes above are on the audit log, newest first, and the log filters by
// the change asked for.
func consoleAudit(t *testing.T, b *browser) {
	b.open("the audit log", "#/audit", step, `#audit tr[data-action="POST /api/v1/manifests"]`,
		`#audit tr[data-action="DELETE /api/v1/jobs/{id}"]`)
	var at []string
	if err := json.Unmarshal([]byte(b.eval(`JSON.stringify([...document.querySelectorAll("#audit tbody tr")].map((r) => r.dataset.at))`)), &at); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(at); i++ {
		if at[i] > at[i-1] {
			t.Errorf("the audit log shows %s after %s; want the newest first", at[i], at[i-1])
		}
	}
	b.accessible("the audit log")
	b.shot("audit")
	b.open("the audit log of cancels", "#/audit?action="+url.QueryEscape("DELETE /api/v1/jobs/{id}"), step, `#audit tbody tr`)
	if others := b.eval(`String(document.querySelectorAll('#audit tbody tr:not([data-action="DELETE /api/v1/jobs/{id}"])').length)`); others != "0" {
		t.Errorf("the audit log of cancels shows %s other changes, want none", others)
	}
}

// consoleApp: an app's page shows its release and its live host.
func consoleApp(t *testing.T, b *browser, c client) {
	if code, body := c.upload("web", tarball(t, map[string]string{"package.json": `{"scripts":{"start":"node index.js"}}`, "index.js": "1"})); code != 201 {
		t.Fatalf("upload = %d %s, want 201", code, body)
	}
	c.waitLive("web", 1)
	b.open("app page", "#/apps/web", step, `h1 [data-status="live"]`, `#releases tr[data-release="1"]`)
	b.accessible("the app page")
	b.shot("app")
	b.open("apps list", "#/apps", step, `#apps tr[data-app="web"]`)
	b.accessible("the apps list")
	b.open("webhooks list", "#/webhooks", step, `#main h1`)
	b.accessible("the webhooks list")
}

// focused names the element with the keyboard's focus (its id, else its link), and says when it
// shows no outline.
const focused = `(() => { const el = document.activeElement; const st = getComputedStyle(el);
  const name = el.id || el.getAttribute("href") || el.tagName;
  return name + (st.outlineStyle === "none" || st.outlineWidth === "0px" ? " (no outline)" : ""); })()`

// consoleKeyboard walks a freshly loaded page with the Tab key: the skip link first, then the
// brand, every link of the navigation and Sign out, each showing where the focus is; on to the
// costs page's label chooser, which the keyboard alone works; and the skip link, which moves the
// focus to the page itself.
func consoleKeyboard(t *testing.T, b *browser) {
	b.open("the costs page", "#/costs", step, "#label-key")
	b.do("reloading the costs page", step, chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("label-key")))
	var order []string
	for range 9 {
		b.do("pressing Tab", step, chromedp.KeyEvent("\t"))
		order = append(order, b.eval(focused))
	}
	want := []string{"skip", "#/jobs", "#/jobs", "#/queue", "#/costs", "#/audit", "#/apps", "#/webhooks", "signout"}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("Tab from the top of the page reaches (-want +got):\n%s", diff)
	}
	for i := 0; i < 10 && b.eval(`document.activeElement.id`) != "label-key"; i++ {
		b.do("pressing Tab", step, chromedp.KeyEvent("\t"))
		if f := b.eval(focused); strings.HasSuffix(f, "(no outline)") {
			t.Errorf("%s has the keyboard's focus and shows no outline", f)
		}
	}
	b.do("choosing a label with the keyboard", step, chromedp.KeyEvent("team\r"),
		chromedp.WaitVisible(chromedp.CSS(`#cost-labels tr[data-key="console"]`)))
	b.do("the skip link", step, chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("label-key")),
		chromedp.KeyEvent("\t"), chromedp.KeyEvent("\r"))
	if got := b.eval(`document.activeElement.id`); got != "main" {
		t.Errorf("the skip link left the focus on %q, want the page (main)", got)
	}
}

// consoleNotYours: a job that is not the caller's is the API's 404, shown with its request id.
func consoleNotYours(t *testing.T, b *browser) {
	b.open("another's job", "#/jobs/job-not-yours", step, `#error [data-request-id]`)
	if shown := b.eval(`document.getElementById("error").textContent`); !strings.Contains(shown, "404") || !strings.Contains(shown, "request id: req_") {
		t.Errorf("another's job shows %q, want the API's 404 with its request id", shown)
	}
	b.accessible("an error")
}
