package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
)

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
	// env is what this function is given beyond functionEnv.
	env func(sandbox.State) []string

	environ []string // the whole environment it runs with
	dir     string   // holds the built bootstrap
	size    int64
	starts  []start
}

func targets() []*target {
	return []*target{
		{name: "hello", pkg: "./bench/coldstart/hello", event: []byte(`{}`), answered: wantBody(`"hello"`)},
		{name: "api", pkg: "./functions/api", event: healthzEvent(), answered: wantHealthy},
		{name: "dispatch", pkg: "./functions/dispatch", event: sqsEvent(`{"region":"us-east-1"}`), answered: wantNoFailures},
		{name: "reconcile", pkg: "./functions/reconcile", event: beatEvent(), answered: wantBody("null"), env: beatCluster},
		{name: "webhook", pkg: "./functions/webhook", event: sqsEvent(`{"event_id":"evt_1"}`), answered: wantNoFailures},
		{name: "authorizer", pkg: "./functions/authorizer", event: authorizerEvent(), answered: wantBody(`{"isAuthorized":false}`)},
	}
}

// beatCluster gives the beat the sandbox's cluster, whose hosts' pods it LISTs. Without one, its
// first reach for the hosting cluster would wait out the SDK's retries against a dead EKS
// endpoint and measure their random backoff. The other first events touch no cluster, so the
// other functions are given none: reading a kubeconfig at init would cost them what AWS, where a
// cluster is described on first use, does not.
func beatCluster(st sandbox.State) []string {
	// The beat watches its regions for most of its minute after its pass; the first event timed
	// here is the pass, so the watch is off.
	return []string{config.EnvKubeconfig + "=" + st.Kubeconfig, config.EnvWatchSeconds + "=0"}
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

// authorizerEvent is what the key API asks its authorizer (payload 2.0) for a request with a key
// that is not stored: one GetItem, then a denial.
func authorizerEvent() []byte {
	const key = "Bearer tg_coldstart-key-that-was-never-made"
	return mustJSON(events.APIGatewayV2CustomAuthorizerV2Request{
		Version: "2.0", Type: "REQUEST", RouteKey: "ANY /{proxy+}", RawPath: "/api/v1/jobs",
		IdentitySource: []string{key}, Headers: map[string]string{"authorization": key, "user-agent": "coldstart"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey: "ANY /{proxy+}", Stage: "$default", RequestID: "coldstart",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: "/api/v1/jobs", Protocol: "HTTP/1.1", SourceIP: "192.0.2.1"},
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
