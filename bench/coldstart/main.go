// Command coldstart measures each Lambda function's cold start under the Lambda runtime interface
// emulator, against a hello-world function built and started the same way in the same run.
//
// A cold start is the time from starting `aws-lambda-rie ./bootstrap` to the first invocation
// answered with the function's own answer: the emulator's start, the function's process start,
// its init (config, SDK clients, handler) and one cheap real event. Runs are interleaved across
// the functions, so a machine that slows down mid-run slows all of them alike.
//
//	go run ./bench/coldstart [-n 10]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/sandbox"
)

// invokePath is where the emulator takes invocations, as the Lambda Invoke API names it.
const invokePath = "/2015-03-31/functions/function/invocations"

// pollEvery is how often an emulator that is not listening yet is tried again; it bounds the
// timing error of one run, against cold starts of tens of milliseconds.
const pollEvery = time.Millisecond

// goalRatio is the most a function's median cold start may be over hello's: Tidegate's init
// (config, SDK clients, handler) must not cost more than the Go runtime and emulator it sits on.
const goalRatio = 2.0

func main() {
	runs := flag.Int("n", 10, "cold starts to measure per function")
	rie := flag.String("rie", filepath.Join(sandbox.CacheDir(), "bin", "aws-lambda-rie"), "the runtime interface emulator (scripts/tools-aws.sh installs it)")
	timeout := flag.Duration("timeout", 30*time.Second, "longest one cold start may take before the run fails")
	flag.Parse()
	if err := run(*runs, *rie, *timeout); err != nil {
		fmt.Fprintf(os.Stderr, "coldstart: %v\n", err)
		os.Exit(1)
	}
}

func run(runs int, rie string, timeout time.Duration) error {
	if runs < 1 {
		return fmt.Errorf("-n %d: measure at least one run", runs)
	}
	if _, err := os.Stat(rie); err != nil {
		return fmt.Errorf("the runtime interface emulator is missing (run scripts/tools-aws.sh): %w", err)
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "coldstart-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	// The beat reads DynamoDB, so the functions run against the real stand-ins, with tables and
	// queues of their own: a cold start here includes the first store call, as in AWS.
	progress("starting DynamoDB Local and fauxqs")
	ctx := context.Background()
	sb, err := sandbox.Start(ctx, sandbox.Options{Dir: filepath.Join(work, "sandbox")})
	if err != nil {
		return err
	}
	defer sb.Stop()
	tables := dynamo.Tables{Jobs: "bench-jobs", Events: "bench-events", Control: "bench-control"}
	if err := dynamo.CreateTables(ctx, sb.DynamoDB(), tables); err != nil {
		return err
	}
	queues := map[string]string{}
	for _, name := range []string{"dispatch", "webhook"} {
		out, err := sb.SQS().CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("bench-" + name)})
		if err != nil {
			return fmt.Errorf("creating queue %s: %w", name, err)
		}
		queues[name] = aws.ToString(out.QueueUrl)
	}

	all := targets()
	for _, t := range all {
		progress("building %s", t.pkg)
		if err := t.build(root, work); err != nil {
			return err
		}
	}
	if err := measure(all, runs, rie, functionEnv(work, sb.State, tables, queues), timeout); err != nil {
		return err
	}
	report(os.Stdout, all, runs)
	return nil
}

// measure records runs cold starts of every target, interleaved.
func measure(all []*target, runs int, rie string, env []string, timeout time.Duration) error {
	// One unmeasured start each first, as benchmarks warm up: in a trial without it, the first
	// run after the build was by far the slowest (hello 178 ms against about 20 ms after it).
	for _, t := range all {
		if _, err := coldStart(t, rie, env, timeout); err != nil {
			return fmt.Errorf("warm-up: %s: %w", t.name, err)
		}
	}
	progress("measuring %d runs; load average at start: %s", runs, loadAverage())
	for i := range runs {
		var line []string
		// Each run starts at a different function, so none is always first after a quiet spell.
		for j := range all {
			t := all[(i+j)%len(all)]
			d, err := coldStart(t, rie, env, timeout)
			if err != nil {
				return fmt.Errorf("run %d: %s: %w", i+1, t.name, err)
			}
			t.starts = append(t.starts, d)
			line = append(line, fmt.Sprintf("%s %s", t.name, ms(d)))
		}
		progress("run %d/%d: %s", i+1, runs, strings.Join(line, ", "))
	}
	return nil
}

// moduleRoot is the folder of the go.mod the benchmark belongs to.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("finding the module root: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside a Go module: run `go run ./bench/coldstart` from the checkout")
	}
	return filepath.Dir(gomod), nil
}

// coldStart starts the emulator on t's bootstrap and polls until t answers its event.
func coldStart(t *target, rie string, env []string, timeout time.Duration) (time.Duration, error) {
	addr, runtimeAPI := freeAddr(), freeAddr()
	if addr == "" || runtimeAPI == "" {
		return 0, errors.New("no free loopback port")
	}
	cmd := exec.Command(rie, "--runtime-interface-emulator-address", addr, "--runtime-api-address", runtimeAPI, "./bootstrap")
	cmd.Dir, cmd.Env = t.dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting the emulator: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	defer stop(cmd, exited)

	client := &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}}
	for {
		status, body, err := post(client, "http://"+addr+invokePath, t.event)
		switch {
		case err == nil && status == http.StatusOK:
			if err := t.answered(body); err != nil {
				return 0, fmt.Errorf("answered %s: %w", body, err)
			}
			return time.Since(start), nil
		case time.Since(start) > timeout:
			stop(cmd, exited) // before reading out, which the emulator writes to until it exits
			return 0, fmt.Errorf("no answer within %s (last: status %d, %v); emulator output:\n%s", timeout, status, err, out.String())
		}
		select {
		case <-exited:
			return 0, fmt.Errorf("the emulator exited before answering; its output:\n%s", out.String())
		case <-time.After(pollEvery):
		}
	}
}

func post(client *http.Client, url string, event []byte) (int, []byte, error) {
	resp, err := client.Post(url, "application/json", bytes.NewReader(event))
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// stop ends the emulator, which kills the function's process on SIGTERM.
func stop(cmd *exec.Cmd, exited <-chan struct{}) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
}

// functionEnv is the whole environment of the emulator and the functions: the settings
// shared/config requires, DynamoDB and SQS on the stand-ins, every other endpoint on a loopback
// port nobody serves, and static credentials so the SDK reads nothing of this machine's AWS setup.
func functionEnv(home string, st sandbox.State, tables dynamo.Tables, queues map[string]string) []string {
	dead := "http://" + freeAddr()
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=AKIDTIDEGATEBENCH",
		"AWS_SECRET_ACCESS_KEY=not-a-secret",
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_CONFIG_FILE=" + filepath.Join(home, "aws-config"),
		"AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(home, "aws-credentials"),
		config.EnvJobsTable + "=" + tables.Jobs,
		config.EnvEventsTable + "=" + tables.Events,
		config.EnvControlTable + "=" + tables.Control,
		config.EnvDispatchQueueURL + "=" + queues["dispatch"],
		config.EnvWebhookQueueURL + "=" + queues["webhook"],
		config.EnvDynamoDBEndpoint + "=" + st.DynamoDBEndpoint,
		config.EnvSQSEndpoint + "=" + st.AWSEndpoint,
		config.EnvSourcesBucket + "=tidegate-sources",
		config.EnvRegions + "=us-east-1=cluster-a",
		config.EnvLogJSON + "=true",
	}
	for _, name := range []string{config.EnvS3Endpoint, config.EnvEC2Endpoint, config.EnvSTSEndpoint, config.EnvEKSEndpoint} {
		env = append(env, name+"="+dead)
	}
	return env
}

// freeAddr is a loopback address with a port free at the time of asking, or "" if none is.
func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return ""
	}
	defer l.Close()
	return l.Addr().String()
}

// loadAverage is the 1-minute load average where Linux tells it: cold starts on a busy machine
// measure the scheduler as much as the function.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "unknown"
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "coldstart: "+format+"\n", args...)
}

// errorPayload is what the runtime answers in place of a result when the handler fails; the
// emulator sends it with status 200.
type errorPayload struct {
	Message string `json:"errorMessage"`
	Type    string `json:"errorType"`
}

func handlerError(body []byte) error {
	var e errorPayload
	if json.Unmarshal(body, &e) == nil && e.Type != "" {
		return fmt.Errorf("the handler failed: %s: %s", e.Type, e.Message)
	}
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

// hostArch is the platform the functions are built for here: this machine's, so the emulator can
// run them. AWS runs the same source built for linux/arm64 (build/sam.mk).
var hostArch = runtime.GOOS + "/" + runtime.GOARCH

// target is one function the benchmark builds and starts, with the cheapest real event it
// answers and a check that the answer is its own.
type target struct {
	name     string
	pkg      string
	event    []byte
	answered func(body []byte) error

	dir    string // holds the built bootstrap
	size   int64
	starts []time.Duration
}

func targets() []*target {
	return []*target{
		{name: "hello", pkg: "./bench/coldstart/hello", event: []byte(`{}`), answered: wantBody(`"hello"`)},
		{name: "api", pkg: "./functions/api", event: healthzEvent(), answered: wantHealthy},
		{name: "dispatch", pkg: "./functions/dispatch", event: sqsEvent(`{"region":"us-east-1"}`), answered: wantNoFailures},
		{name: "reconcile", pkg: "./functions/reconcile", event: beatEvent(), answered: wantBody("null")},
		{name: "webhook", pkg: "./functions/webhook", event: sqsEvent(`{"event_id":"evt_1"}`), answered: wantNoFailures},
	}
}

// build compiles t as it is deployed (build/sam.mk), for this machine's platform.
func (t *target) build(root, work string) error {
	t.dir = filepath.Join(work, t.name)
	bin := filepath.Join(t.dir, "bootstrap")
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags", "-s -w", "-o", bin, t.pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+runtime.GOOS, "GOARCH="+runtime.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %w\n%s", t.pkg, err, out)
	}
	fi, err := os.Stat(bin)
	if err != nil {
		return err
	}
	t.size = fi.Size()
	return nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// healthzEvent is API Gateway's (HTTP API, payload 2.0) event for GET /healthz, which needs no store.
func healthzEvent() []byte {
	return mustJSON(events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "$default", RawPath: "/healthz",
		Headers: map[string]string{"user-agent": "coldstart"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey: "$default", Stage: "$default", RequestID: "coldstart",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: "/healthz", Protocol: "HTTP/1.1", SourceIP: "192.0.2.1"},
		},
	})
}

func sqsEvent(body string) []byte {
	return mustJSON(events.SQSEvent{Records: []events.SQSMessage{{
		MessageId: "msg-1", Body: body, EventSource: "aws:sqs", AWSRegion: "us-east-1",
		EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:tidegate",
	}}})
}

func beatEvent() []byte {
	return mustJSON(events.EventBridgeEvent{
		Version: "0", ID: "coldstart", DetailType: "Scheduled Event", Source: "aws.events",
		Time: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), Region: "us-east-1", Detail: json.RawMessage(`{}`),
	})
}

func wantBody(want string) func([]byte) error {
	return func(body []byte) error {
		if err := handlerError(body); err != nil {
			return err
		}
		if got := strings.TrimSpace(string(body)); got != want {
			return fmt.Errorf("want %s", want)
		}
		return nil
	}
}

func wantHealthy(body []byte) error {
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(body, &resp); err != nil || resp.StatusCode != http.StatusOK || strings.TrimSpace(resp.Body) != `{"status":"ok"}` {
		return errors.New(`want statusCode 200 and body {"status":"ok"}`)
	}
	return nil
}

func wantNoFailures(body []byte) error {
	if err := handlerError(body); err != nil {
		return err
	}
	var resp events.SQSEventResponse
	if err := json.Unmarshal(body, &resp); err != nil || len(resp.BatchItemFailures) > 0 {
		return errors.New("want an SQS batch response with no batchItemFailures")
	}
	return nil
}

// stats are one function's figures, the ratio taken against hello's median.
type stats struct {
	name        string
	size        int64
	median, p90 time.Duration
	over        time.Duration
	ratio       float64
}

func summarize(all []*target) []stats {
	var out []stats
	for _, t := range all {
		s := slices.Clone(t.starts)
		slices.Sort(s)
		out = append(out, stats{name: t.name, size: t.size, median: median(s), p90: nearestRank(s, 0.9)})
	}
	floor := out[0].median // hello comes first in targets
	for i := range out {
		out[i].over = out[i].median - floor
		out[i].ratio = float64(out[i].median) / float64(floor)
	}
	return out
}

func median(sorted []time.Duration) time.Duration {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// nearestRank is the p-th percentile by the nearest-rank method: of 10 runs, p90 is the 9th fastest.
func nearestRank(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(float64(len(sorted))*p)) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func verdict(s stats) string {
	switch {
	case s.name == "hello":
		return "floor"
	case s.ratio <= goalRatio:
		return "ok"
	default:
		return "OVER GOAL"
	}
}

// report prints the figures as an aligned table, then as a markdown table for BENCHMARKS.md.
func report(w io.Writer, all []*target, runs int) {
	rows := summarize(all)
	fmt.Fprintf(w, "\nLambda cold start under aws-lambda-rie: %d runs each, %s, %d cores, load average %s, %s; goal: median ≤ %.0f× hello\n\n",
		runs, hostArch, runtime.NumCPU(), loadAverage(), runtime.Version(), goalRatio)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "function\tbinary\tmedian\tp90\tover hello\t× hello\t\t")
	for _, s := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%+.1f ms\t%.2f×\t%s\t\n", s.name, mib(s.size), ms(s.median), ms(s.p90),
			float64(s.over)/float64(time.Millisecond), s.ratio, verdict(s))
	}
	tw.Flush()

	fmt.Fprintln(w, "\n| Function | Binary | Cold start, median | p90 | Over hello | × hello (goal ≤ 2×) |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|")
	for _, s := range rows {
		name, over := s.name, fmt.Sprintf("%+.1f ms", float64(s.over)/float64(time.Millisecond))
		if name == "hello" {
			name, over = "hello (floor)", "—"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %.2f× |\n", name, mib(s.size), ms(s.median), ms(s.p90), over, s.ratio)
	}
}
