package devstack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tidegate/tidegate/shared/dev/contract"
	"github.com/tidegate/tidegate/shared/dev/devstack"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dev/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestDevStack runs `tidegate dev` against the shared cluster (its own DynamoDB and fauxqs) and
// checks what scripts rely on: health, the error shape, the dev key, the price endpoint as the EC2
// SDK reads it, the dev namespaces, the single-instance lock and a clean stop.
func TestDevStack(t *testing.T) {
	kube := testenv.Kube(t)
	dir := t.TempDir()
	opt := devstack.Options{
		Addr: freeAddr(t), APIKey: "k", Kubeconfig: kube.Kubeconfig, Beat: time.Second,
		WebhooksAllowPrivate: true, Dir: dir,
	}
	ctx, cancel := context.WithCancel(context.Background())
	// done closes when Run returns, with its error in runErr: a closed channel can be waited on
	// any number of times, by the test and by its cleanup.
	done := make(chan struct{})
	var runErr error
	opt.WrapAPI = contract.Middleware(t)
	go func() { runErr = devstack.Run(ctx, opt, io.Discard, slog.New(slog.DiscardHandler)); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	st := waitState(t, dir, done, &runErr)
	if st.URL != "http://"+opt.Addr || st.APIKey != "k" {
		t.Errorf("state = %s with key %q, want http://%s with key k", st.URL, st.APIKey, opt.Addr)
	}

	status, body := get(t, st.URL+"/healthz", "")
	if status != 200 || body["status"] != "ok" {
		t.Errorf("GET /healthz = %d %v, want 200 ok", status, body)
	}
	status, body = get(t, st.URL+"/api/v1/jobs", "")
	if status != 401 || body["error"] != "unauthenticated" || body["request_id"] == "" {
		t.Errorf("GET /api/v1/jobs without a key = %d %v, want 401 unauthenticated with a request_id", status, body)
	}
	status, body = get(t, st.URL+"/api/v1/jobs", "k")
	if items, ok := body["items"].([]any); status != 200 || !ok || len(items) != 0 {
		t.Errorf("GET /api/v1/jobs with the dev key = %d %v, want 200 and no items", status, body)
	}

	setPrice(t, st.PricesURL, `{"region":"us-east-1","instance_type":"g5.xlarge","price":0.42}`)
	prices := readPrices(t, st.PricesURL, "us-east-1", "g5.xlarge")
	if len(prices) != 3 {
		t.Errorf("DescribeSpotPriceHistory(us-east-1, g5.xlarge) answered %d zones, want 3", len(prices))
	}
	for _, p := range prices {
		if !strings.HasPrefix(aws.ToString(p.SpotPrice), "0.42") {
			t.Errorf("zone %s price %s, want 0.42", aws.ToString(p.AvailabilityZone), aws.ToString(p.SpotPrice))
		}
	}
	if other := readPrices(t, st.PricesURL, "us-west-2", "g5.xlarge"); len(other) != 0 {
		t.Errorf("us-west-2 has prices %v, set only in us-east-1", other)
	}

	cs, err := sandbox.KubeClient(kube.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range devstack.DevNamespaces {
		if _, err := cs.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{}); err != nil {
			t.Errorf("dev namespace %s: %v", ns, err)
		}
	}

	second := opt
	second.Addr = freeAddr(t)
	err = devstack.Run(context.Background(), second, io.Discard, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("a second Run in the same folder = %v, want an 'already running' error", err)
	}

	cancel()
	select {
	case <-done:
		if runErr != nil {
			t.Errorf("Run after cancel = %v, want nil", runErr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not stop within 30 s of cancel")
	}
	if _, err := devstack.ReadState(dir); !errors.Is(err, devstack.ErrNotRunning) {
		t.Errorf("after stop, ReadState = %v, want ErrNotRunning", err)
	}
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startDev runs `tidegate dev` with opt until the test ends, and answers its state once it serves.
func startDev(t *testing.T, opt devstack.Options) devstack.State {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var runErr error
	opt.WrapAPI = contract.Middleware(t)
	go func() { runErr = devstack.Run(ctx, opt, io.Discard, slog.New(slog.DiscardHandler)); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return waitState(t, opt.Dir, done, &runErr)
}

// waitState waits for Run to write its state, which it does once everything serves.
func waitState(t *testing.T, dir string, done <-chan struct{}, runErr *error) devstack.State {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			t.Fatalf("Run ended before it was ready: %v", *runErr)
		default:
		}
		if st, err := devstack.ReadState(dir); err == nil {
			return st
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("tidegate dev was not ready within 2 minutes")
	return devstack.State{}
}

func get(t *testing.T, url, key string) (int, map[string]any) {
	req, _ := http.NewRequest("GET", url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("GET %s: body is not JSON: %v", url, err)
	}
	return resp.StatusCode, body
}

func setPrice(t *testing.T, pricesURL, body string) {
	req, _ := http.NewRequest("PUT", pricesURL+"/prices", bytes.NewBufferString(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("PUT /prices: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("PUT /prices %s = %s", body, resp.Status)
	}
}

func readPrices(t *testing.T, pricesURL, region, instanceType string) []ec2types.SpotPrice {
	c := ec2.New(ec2.Options{Region: region, BaseEndpoint: aws.String(pricesURL), Credentials: credentials.NewStaticCredentialsProvider("a", "b", "")})
	out, err := c.DescribeSpotPriceHistory(context.Background(), &ec2.DescribeSpotPriceHistoryInput{
		InstanceTypes: []ec2types.InstanceType{ec2types.InstanceType(instanceType)}, ProductDescriptions: []string{"Linux/UNIX"},
	})
	if err != nil {
		t.Fatalf("DescribeSpotPriceHistory(%s, %s): %v", region, instanceType, err)
	}
	return out.SpotPriceHistory
}
