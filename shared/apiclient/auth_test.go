package apiclient

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
)

// The get-vanilla case of AWS's SigV4 test suite: a GET of / on example.amazonaws.com, signed
// for region us-east-1 and service "service" at 20150830T123600Z with the suite's example keys.
const (
	suiteAccessKey = "AKIDEXAMPLE"
	suiteSecretKey = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	// suiteCanonical is get-vanilla.creq.
	suiteCanonical = "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" +
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	// suiteAuthorization is get-vanilla.authz, as the suite publishes it.
	suiteAuthorization = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, " +
		"SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
)

var suiteTime = time.Date(2015, 8, 30, 12, 36, 0, 0, time.UTC)

// TestSuiteVectorHolds derives get-vanilla's signature by hand from its canonical request, so
// the published value the signer test relies on is checked, not trusted.
func TestSuiteVectorHolds(t *testing.T) {
	mac := func(key []byte, s string) []byte {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(s))
		return m.Sum(nil)
	}
	sum := sha256.Sum256([]byte(suiteCanonical))
	toSign := "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n" + hex.EncodeToString(sum[:])
	key := mac([]byte("AWS4"+suiteSecretKey), "20150830")
	for _, part := range []string{"us-east-1", "service", "aws4_request"} {
		key = mac(key, part)
	}
	got := hex.EncodeToString(mac(key, toSign))
	if !strings.HasSuffix(suiteAuthorization, "Signature="+got) {
		t.Errorf("hand-derived get-vanilla signature %s is not the published one in %q", got, suiteAuthorization)
	}
}

// TestSigV4GetVanilla signs get-vanilla's request with SigV4.Authorize (the SDK's v4.Signer) and
// wants the suite's Authorization header exactly.
func TestSigV4GetVanilla(t *testing.T) {
	req, err := http.NewRequest(http.MethodGet, "https://example.amazonaws.com/", nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &SigV4{
		Credentials: credentials.NewStaticCredentialsProvider(suiteAccessKey, suiteSecretKey, ""),
		Region:      "us-east-1", Service: "service", Now: func() time.Time { return suiteTime },
	}
	empty := sha256.Sum256(nil)
	if err := s.Authorize(context.Background(), req, hex.EncodeToString(empty[:])); err != nil {
		t.Fatalf("Authorize(get-vanilla) = %v", err)
	}
	if got := req.Header.Get("Authorization"); got != suiteAuthorization {
		t.Errorf("Authorize(get-vanilla) Authorization =\n  %s\nwant\n  %s", got, suiteAuthorization)
	}
	if got := req.Header.Get("X-Amz-Date"); got != "20150830T123600Z" {
		t.Errorf("Authorize(get-vanilla) X-Amz-Date = %q, want 20150830T123600Z", got)
	}
}

// TestClientSignsForExecuteAPI: a client with SigV4 signs every request for execute-api in the
// region, over the body it sends, with the session token of temporary credentials.
func TestClientSignsForExecuteAPI(t *testing.T) {
	var seen *http.Request
	var body string
	rt := roundTripper(func(r *http.Request) (*http.Response, error) {
		seen = r
		b, _ := io.ReadAll(r.Body)
		body = string(b)
		return answer(200, `{"job":{"id":"job-1","status":"queued"}}`), nil
	})
	c, err := New(Options{
		URL:        "https://abc123.execute-api.eu-west-1.amazonaws.com/",
		HTTPClient: &http.Client{Transport: rt},
		Auth: &SigV4{
			Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "TOKEN"),
			Region:      RegionOfHost("abc123.execute-api.eu-west-1.amazonaws.com"),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SubmitJob(context.Background(), JobRequest{Manifest: []byte(`{"kind":"Job"}`), Region: "us-east-1"}, "k1"); err != nil {
		t.Fatalf("SubmitJob = %v", err)
	}
	auth := seen.Header.Get("Authorization")
	for _, want := range []string{"Credential=AKID/", "/eu-west-1/execute-api/aws4_request", "idempotency-key", "x-amz-security-token"} {
		if !strings.Contains(auth, want) {
			t.Errorf("Authorization %q does not contain %q", auth, want)
		}
	}
	if seen.Header.Get("X-Amz-Security-Token") != "TOKEN" {
		t.Errorf("X-Amz-Security-Token = %q, want the session token", seen.Header.Get("X-Amz-Security-Token"))
	}
	if !strings.Contains(body, `"region":"us-east-1"`) {
		t.Errorf("body sent = %s, want the request's JSON", body)
	}
}

func TestRegionOfHost(t *testing.T) {
	for host, want := range map[string]string{
		"abc123.execute-api.us-east-1.amazonaws.com":     "us-east-1",
		"abc123.execute-api.cn-north-1.amazonaws.com.cn": "cn-north-1",
		"api.example.com": "",
		"abc123.execute-api.us-east-1.amazonaws.com.evil": "",
		"127.0.0.1:8080": "",
	} {
		if got := RegionOfHost(host); got != want {
			t.Errorf("RegionOfHost(%q) = %q, want %q", host, got, want)
		}
	}
}

func TestAPIKeySendsBearer(t *testing.T) {
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1/api/v1/jobs", nil)
	if err := APIKey("tg_abc").Authorize(context.Background(), req, ""); err != nil {
		t.Fatal(err)
	}
	if got := req.Header.Get("Authorization"); got != "Bearer tg_abc" {
		t.Errorf("APIKey.Authorize Authorization = %q, want Bearer tg_abc", got)
	}
}
