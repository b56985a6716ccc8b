// Package functions_test runs each Lambda entry point, built as AWS builds it, under the Lambda
// runtime interface emulator, and checks what it answers to real event shapes.
package functions_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
)

// invokePath is where the emulator takes invocations, as the Lambda Invoke API names it.
const invokePath = "/2015-03-31/functions/function/invocations"

// sameAsHeader in a wanted API body stands for the X-Request-Id header of the same answer.
const sameAsHeader = "(the X-Request-Id header)"

// invocation is one event sent to a running function and what its answer must be.
type invocation struct {
	name  string
	event any // marshalled to JSON
	check func(body []byte) error
}

func TestMain(m *testing.M) { testenv.Main(m) }

func TestFunctionsUnderEmulator(t *testing.T) {
	rie := emulator(t)
	env, tables, db := functionEnv(t)
	creds := seedCredentials(t, tables, db)
	tests := []struct {
		function    string
		invocations []invocation
	}{
		{"api", append([]invocation{
			{"GET /healthz", httpEvent("GET", "/healthz", ""),
				wantAPI(http.StatusOK, map[string]any{"status": "ok"})},
			{"GET /api/v1/jobs without credentials", httpEvent("GET", "/api/v1/jobs", ""),
				wantAPI(http.StatusUnauthorized, map[string]any{"error": "unauthenticated", "request_id": sameAsHeader})},
			// The gateway's IAM caller is looked up in DynamoDB and maps to no tenant: a 403 (not
			// the 401 above) shows the adapter's request context reached the API.
			{"GET /api/v1/jobs as an unmapped IAM caller", httpEvent("GET", "/api/v1/jobs", "arn:aws:iam::123456789012:user/ci"),
				wantAPI(http.StatusForbidden, map[string]any{"error": "forbidden", "request_id": sameAsHeader})},
		}, principalInvocations(t, creds)...)},
		{"authorizer", authorizerInvocations(t, creds)},
		{"dispatch", []invocation{
			{"wake for a configured region", sqsEvent(`{"region":"us-east-1"}`),
				wantBatchFailures()},
			{"a good and a malformed message", sqsEvent(`{"region":"us-east-1"}`, "not json"),
				wantBatchFailures("msg-2")},
		}},
		{"webhook", []invocation{
			{"ring for an event", sqsEvent(`{"event_id":"evt_1"}`),
				wantBatchFailures()},
			{"a good, a malformed and an empty message", sqsEvent(`{"event_id":"evt_1"}`, "not json", `{}`),
				wantBatchFailures("msg-2", "msg-3")},
		}},
		{"reconcile", []invocation{
			{"scheduled beat", scheduledEvent(), wantBody("null")},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.function, func(t *testing.T) {
			t.Parallel()
			addr := startFunction(t, rie, build(t, tt.function), env)
			for _, inv := range tt.invocations {
				t.Run(inv.name, func(t *testing.T) {
					body := invoke(t, addr, inv.event)
					if err := inv.check(body); err != nil {
						t.Errorf("%s answered %s to %q: %v", tt.function, body, inv.name, err)
					}
					if ev, ok := inv.event.(events.APIGatewayV2HTTPRequest); ok && tt.function == "api" {
						if err := heldToContract(ev, body); err != nil {
							t.Errorf("contract: %v", err)
						}
					}
				})
			}
		})
	}
}

// emulator is the path of aws-lambda-rie, which scripts/tools-aws.sh installs. Outside CI a
// missing emulator skips the test; in CI it fails it.
func emulator(t *testing.T) string {
	t.Helper()
	p := filepath.Join(sandbox.CacheDir(), "bin", "aws-lambda-rie")
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("the Lambda runtime interface emulator is not installed at %s; run scripts/tools-aws.sh to install it", p)
		}
		t.Fatalf("the Lambda runtime interface emulator is not installed at %s (CI is set, so this fails): %v", p, err)
	}
	return p
}

// build compiles a function as it is deployed (no cgo, no RPC shim, host architecture) into a
// folder of its own, and returns that folder.
func build(t *testing.T, function string) string {
	t.Helper()
	dir := t.TempDir()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-o", filepath.Join(dir, "bootstrap"), "./functions/"+function)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+runtime.GOOS, "GOARCH="+runtime.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", function, err, out)
	}
	return dir
}

// startFunction runs dir/bootstrap under the emulator on free loopback ports and returns the
// emulator's address once it accepts connections. The emulator is stopped when the test ends.
func startFunction(t *testing.T, rie, dir string, env []string) string {
	t.Helper()
	addr, runtimeAPI := freeAddr(t), freeAddr(t)
	cmd := exec.Command(rie, "--runtime-interface-emulator-address", addr, "--runtime-api-address", runtimeAPI, "./bootstrap")
	cmd.Dir = dir
	cmd.Env = env
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", rie, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		// On SIGTERM the emulator kills the function's process, then exits.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("emulator and function output:\n%s", out.String())
		}
	})
	// The emulator listens within milliseconds; ten seconds covers a loaded CI machine.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return addr
		}
		select {
		case <-exited:
			t.Fatalf("the emulator exited before listening on %s:\n%s", addr, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the emulator did not listen on %s within 10s: %v", addr, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// functionEnv is the whole environment of the emulator and the function: the settings config.go
// requires, on the stand-ins with tables and queues of this test's own, every other endpoint on a
// loopback port nobody serves, and static credentials so the SDK neither reads this machine's AWS
// setup nor asks an instance metadata service. It also answers the tables, for the test to fill.
func functionEnv(t *testing.T) ([]string, dynamo.Tables, *dynamodb.Client) {
	dead := "http://" + freeAddr(t)
	home := t.TempDir()
	tables, db := testenv.Tables(t)
	dispatchURL, _ := testenv.Queue(t, "dispatch")
	webhookURL, _ := testenv.Queue(t, "webhook")
	st := testenv.AWS(t)
	kmsKey, _ := testenv.KMSKey(t)
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		config.EnvJobsTable + "=" + tables.Jobs,
		config.EnvEventsTable + "=" + tables.Events,
		config.EnvControlTable + "=" + tables.Control,
		config.EnvDispatchQueueURL + "=" + dispatchURL,
		config.EnvWebhookQueueURL + "=" + webhookURL,
		config.EnvSourcesBucket + "=tidegate-sources",
		config.EnvRegions + "=us-east-1=cluster-a",
		config.EnvLogJSON + "=true",
		config.EnvKMSKey + "=" + kmsKey,
		config.EnvKMSEndpoint + "=" + st.KMSEndpoint,
		config.EnvDynamoDBEndpoint + "=" + st.DynamoDBEndpoint,
		config.EnvSQSEndpoint + "=" + st.AWSEndpoint,
		config.EnvS3Endpoint + "=" + st.AWSEndpoint,
		config.EnvEC2Endpoint + "=" + dead,
		config.EnvSTSEndpoint + "=" + dead,
		config.EnvEKSEndpoint + "=" + dead,
		"AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=AKIDTIDEGATETEST",
		"AWS_SECRET_ACCESS_KEY=not-a-secret",
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_CONFIG_FILE=" + filepath.Join(home, "aws-config"),
		"AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(home, "aws-credentials"),
	}, tables, db
}

// freeAddr is a loopback address with a port free at the time of asking.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// invoke sends event to the function and returns its answer. The emulator answers a handler
// error with 200 too, without X-Amz-Function-Error, so an error payload in the body fails here.
func invoke(t *testing.T, addr string, event any) []byte {
	t.Helper()
	payload, err := json.Marshal(event)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Post("http://"+addr+invokePath, "application/json", bytes.NewReader(payload))
	if err != nil {
		t.Fatalf("invoking with %s: %v", payload, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer to %s: %v", payload, err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Amz-Function-Error") != "" {
		t.Fatalf("invoking with %s: status %d, X-Amz-Function-Error %q, body %s",
			payload, resp.StatusCode, resp.Header.Get("X-Amz-Function-Error"), body)
	}
	var failed struct {
		Message string `json:"errorMessage"`
		Type    string `json:"errorType"`
	}
	if json.Unmarshal(body, &failed) == nil && failed.Type != "" {
		t.Fatalf("invoking with %s: the handler failed: %s: %s", payload, failed.Type, failed.Message)
	}
	return body
}

// httpEvent is an API Gateway HTTP API (payload 2.0) request; iamARN, when set, is the caller
// the gateway's IAM authorizer vouched for.
func httpEvent(method, path, iamARN string) events.APIGatewayV2HTTPRequest {
	ev := events.APIGatewayV2HTTPRequest{
		Version:  "2.0",
		RouteKey: "$default",
		RawPath:  path,
		Headers:  map[string]string{"accept": "application/json", "user-agent": "lambda-test"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey:   "$default",
			AccountID:  "123456789012",
			Stage:      "$default",
			RequestID:  "gw-request-1",
			APIID:      "tidegate",
			DomainName: "tidegate.execute-api.us-east-1.amazonaws.com",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method: method, Path: path, Protocol: "HTTP/1.1", SourceIP: "192.0.2.1", UserAgent: "lambda-test",
			},
		},
	}
	if iamARN != "" {
		ev.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
			IAM: &events.APIGatewayV2HTTPRequestContextAuthorizerIAMDescription{UserARN: iamARN, AccountID: "123456789012"},
		}
	}
	return ev
}

// sqsEvent is a batch with one message per body, with message ids msg-1, msg-2, ….
func sqsEvent(bodies ...string) events.SQSEvent {
	var ev events.SQSEvent
	for i, b := range bodies {
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId:      fmt.Sprintf("msg-%d", i+1),
			ReceiptHandle:  fmt.Sprintf("handle-%d", i+1),
			Body:           b,
			EventSource:    "aws:sqs",
			EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:tidegate",
			AWSRegion:      "us-east-1",
		})
	}
	return ev
}

// scheduledEvent is what an EventBridge schedule rule delivers.
func scheduledEvent() events.EventBridgeEvent {
	return events.EventBridgeEvent{
		Version:    "0",
		ID:         "beat-1",
		DetailType: "Scheduled Event",
		Source:     "aws.events",
		AccountID:  "123456789012",
		Time:       time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		Region:     "us-east-1",
		Resources:  []string{"arn:aws:events:us-east-1:123456789012:rule/tidegate-beat"},
		Detail:     json.RawMessage(`{}`),
	}
}

// wantAPI checks an API answer's status, its X-Request-Id header, and its JSON body, which must
// be want exactly apart from "detail", the prose meant for people.
func wantAPI(status int, want map[string]any) func([]byte) error {
	return func(body []byte) error {
		var resp events.APIGatewayV2HTTPResponse
		if err := json.Unmarshal(body, &resp); err != nil {
			return fmt.Errorf("not an API Gateway v2 response: %w", err)
		}
		if resp.StatusCode != status {
			return fmt.Errorf("status %d, want %d", resp.StatusCode, status)
		}
		id := resp.Headers["X-Request-Id"]
		if id == "" {
			return errors.New("no X-Request-Id header")
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(resp.Body), &got); err != nil {
			return fmt.Errorf("body is not JSON: %w", err)
		}
		delete(got, "detail")
		w := map[string]any{}
		for k, v := range want {
			if v == sameAsHeader {
				v = id
			}
			w[k] = v
		}
		if diff := cmp.Diff(w, got); diff != "" {
			return fmt.Errorf("body (-want +got):\n%s", diff)
		}
		return nil
	}
}

// wantBatchFailures checks that exactly the messages ids are reported for SQS to retry.
func wantBatchFailures(ids ...string) func([]byte) error {
	return func(body []byte) error {
		var resp events.SQSEventResponse
		if err := json.Unmarshal(body, &resp); err != nil {
			return fmt.Errorf("not an SQS batch response: %w", err)
		}
		var got []string
		for _, f := range resp.BatchItemFailures {
			got = append(got, f.ItemIdentifier)
		}
		if diff := cmp.Diff(ids, got); diff != "" {
			return fmt.Errorf("batch item failures (-want +got):\n%s", diff)
		}
		return nil
	}
}

// wantBody checks the answer is exactly want.
func wantBody(want string) func([]byte) error {
	return func(body []byte) error {
		if got := strings.TrimSpace(string(body)); got != want {
			return fmt.Errorf("want %s", want)
		}
		return nil
	}
}

// syncBuffer collects the emulator's output, which its two streams and the test read at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
