package ekstoken

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	v1creds "github.com/aws/aws-sdk-go/aws/credentials"
	v1signer "github.com/aws/aws-sdk-go/aws/signer/v4"
	"sigs.k8s.io/aws-iam-authenticator/pkg/token"
)

// Fixed credentials: the signing is real, but nothing ever reaches AWS.
const (
	testKeyID   = "AKIDTIDEGATETEST"
	testSecret  = "tidegate-test-secret"
	testSession = "tidegate-test-session-token"
	testARN     = "arn:aws:iam::123456789012:user/tidegate"
)

// TestTokenPassesAuthenticatorVerifier hands our tokens to the Verify of aws-iam-authenticator
// v0.6.13, the code EKS runs: it checks the format (prefix, base64url, https, STS host allow-list,
// path, parameter allow-list, Action, signed x-k8s-aws-id, X-Amz-Expires, X-Amz-Date within 15
// minutes) and then replays the URL against STS. That replay reaches fakeSTS, which checks the
// signature with the retired SDK v1 signer the authenticator's own generator uses.
func TestTokenPassesAuthenticatorVerifier(t *testing.T) {
	sts := useFakeSTS(t)
	tests := []struct {
		region, cluster, session string
	}{
		{"us-east-1", "prod", ""},
		{"eu-west-1", "batch-eu", testSession},
		{"ap-southeast-2", "a.cluster-with.dots", testSession},
	}
	for _, tt := range tests {
		t.Run(tt.region+"/"+tt.cluster, func(t *testing.T) {
			sts.session = tt.session
			g := NewGenerator(testAWSConfig(tt.session), "")
			before := time.Now().Truncate(time.Second)
			tok, err := g.Token(context.Background(), tt.region, tt.cluster)
			if err != nil {
				t.Fatalf("Token(%s, %s): %v", tt.region, tt.cluster, err)
			}
			id, err := token.NewVerifier(tt.cluster, "aws", tt.region).Verify(tok.Value)
			if err != nil {
				t.Fatalf("Verify(Token(%s, %s)): %v", tt.region, tt.cluster, err)
			}
			if id.ARN != testARN || id.AccessKeyID != testKeyID {
				t.Errorf("Verify(Token(%s, %s)) = ARN %q key %q, want %q %q", tt.region, tt.cluster, id.ARN, id.AccessKeyID, testARN, testKeyID)
			}
			if want := "sts." + tt.region + ".amazonaws.com"; sts.lastHost() != want {
				t.Errorf("Token(%s, %s) was replayed at %q, want the regional endpoint %q", tt.region, tt.cluster, sts.lastHost(), want)
			}
			if lo, hi := before.Add(14*time.Minute), time.Now().Add(14*time.Minute); tok.Expires.Before(lo) || tok.Expires.After(hi) {
				t.Errorf("Token(%s, %s).Expires = %v, want 14 minutes after signing, in [%v, %v]", tt.region, tt.cluster, tok.Expires, lo, hi)
			}
		})
	}
}

// TestTokenIsBoundToItsCluster: a token made for one cluster fails at another's authenticator,
// because the cluster name it signed is not the one that authenticator sends to STS.
func TestTokenIsBoundToItsCluster(t *testing.T) {
	useFakeSTS(t)
	tok, err := NewGenerator(testAWSConfig(""), "").Token(context.Background(), "us-east-1", "prod")
	if err != nil {
		t.Fatalf("Token(us-east-1, prod): %v", err)
	}
	_, err = token.NewVerifier("staging", "aws", "us-east-1").Verify(tok.Value)
	var stsErr token.STSError
	if !errors.As(err, &stsErr) {
		t.Errorf("Verify for cluster staging of Token(us-east-1, prod) error = %v, want an STSError (signature mismatch)", err)
	}
}

// TestTokenWithSTSEndpoint: the endpoint override is honoured, and EKS would refuse the result.
func TestTokenWithSTSEndpoint(t *testing.T) {
	tok, err := NewGenerator(testAWSConfig(""), "https://sts.stand-in.test").Token(context.Background(), "us-east-1", "prod")
	if err != nil {
		t.Fatalf("Token with an STS endpoint: %v", err)
	}
	if u := decode(t, tok.Value); u.Host != "sts.stand-in.test" {
		t.Errorf("Token with STS endpoint sts.stand-in.test signed a URL for %q", u.Host)
	}
	_, err = token.NewVerifier("prod", "aws", "us-east-1").Verify(tok.Value)
	var formatErr token.FormatError
	if !errors.As(err, &formatErr) {
		t.Errorf("Verify of a token for a stand-in STS error = %v, want a FormatError (host not allowed)", err)
	}
}

// TestTokenExpiresWithItsCredentials: temporary credentials that run out before the 14 minutes
// bring the token's expiry forward, and those very credentials sign it.
func TestTokenExpiresWithItsCredentials(t *testing.T) {
	credsExpire := time.Now().Add(5 * time.Minute).Truncate(time.Second)
	cfg := aws.Config{Region: "us-west-2", Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: testKeyID, SecretAccessKey: testSecret, SessionToken: testSession, CanExpire: true, Expires: credsExpire}, nil
	})}
	tok, err := NewGenerator(cfg, "").Token(context.Background(), "us-east-1", "prod")
	if err != nil {
		t.Fatalf("Token with credentials expiring at %v: %v", credsExpire, err)
	}
	if !tok.Expires.Equal(credsExpire) {
		t.Errorf("Token with credentials expiring at %v expires at %v, want the same", credsExpire, tok.Expires)
	}
	if got := decode(t, tok.Value).Query().Get("X-Amz-Security-Token"); got != testSession {
		t.Errorf("Token signed with session token %q, want %q", got, testSession)
	}
}

func TestTokenNeedsRegionAndCluster(t *testing.T) {
	g := NewGenerator(testAWSConfig(""), "")
	for _, in := range [][2]string{{"", "prod"}, {"us-east-1", ""}} {
		if _, err := g.Token(context.Background(), in[0], in[1]); err == nil {
			t.Errorf("Token(%q, %q) succeeded, want an error", in[0], in[1])
		}
	}
	if _, err := NewGenerator(aws.Config{}, "").Token(context.Background(), "us-east-1", "prod"); err == nil {
		t.Errorf("Token without credentials succeeded, want an error")
	}
}

func testAWSConfig(session string) aws.Config {
	// The config's own region is not the cluster's: Token must sign for the region it is given.
	return aws.Config{Region: "us-west-2", Credentials: credentials.NewStaticCredentialsProvider(testKeyID, testSecret, session)}
}

func decode(t *testing.T, value string) *url.URL {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(value, prefix))
	if err != nil {
		t.Fatalf("decoding token %q: %v", value, err)
	}
	u, err := url.Parse(string(raw))
	if err != nil {
		t.Fatalf("parsing the token's URL %q: %v", raw, err)
	}
	return u
}

// fakeSTS answers the authenticator's GetCallerIdentity replay in place of STS. It re-signs the
// request with SDK v1's SigV4 signer, at the same time and with the x-k8s-aws-id the verifier
// sent, and answers 200 only if the signatures agree, as STS would.
type fakeSTS struct {
	session string
	mu      sync.Mutex
	hosts   []string
}

// useFakeSTS routes http.DefaultTransport, which the verifier's client uses, to a fakeSTS for the
// length of the test. Tests that call it must not run in parallel.
func useFakeSTS(t *testing.T) *fakeSTS {
	f := &fakeSTS{}
	saved := http.DefaultTransport
	http.DefaultTransport = f
	t.Cleanup(func() { http.DefaultTransport = saved })
	return f
}

func (f *fakeSTS) lastHost() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.hosts) == 0 {
		return ""
	}
	return f.hosts[len(f.hosts)-1]
}

func (f *fakeSTS) RoundTrip(req *http.Request) (*http.Response, error) {
	f.mu.Lock()
	f.hosts = append(f.hosts, req.URL.Host)
	f.mu.Unlock()
	if err := f.checkSignature(req); err != nil {
		return reply(req, http.StatusForbidden, `{"Error":{"Code":"SignatureDoesNotMatch","Message":"`+err.Error()+`"}}`), nil
	}
	return reply(req, http.StatusOK, `{"GetCallerIdentityResponse":{"GetCallerIdentityResult":{"Account":"123456789012","Arn":"`+
		testARN+`","UserId":"AIDATIDEGATETEST"},"ResponseMetadata":{"RequestId":"test"}}}`), nil
}

func (f *fakeSTS) checkSignature(req *http.Request) error {
	got := req.URL.Query()
	scope := strings.Split(got.Get("X-Amz-Credential"), "/")
	if len(scope) != 5 || scope[0] != testKeyID || scope[3] != "sts" {
		return errors.New("unexpected credential scope " + got.Get("X-Amz-Credential"))
	}
	signed, err := time.Parse(amzDate, got.Get("X-Amz-Date"))
	if err != nil {
		return err
	}
	expires, err := strconv.Atoi(got.Get("X-Amz-Expires"))
	if err != nil {
		return err
	}
	// Strip what signing adds, then sign again.
	q := req.URL.Query()
	for _, k := range []string{"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires",
		"X-Amz-SignedHeaders", "X-Amz-Signature", "X-Amz-Security-Token"} {
		q.Del(k)
	}
	u := *req.URL
	u.RawQuery = q.Encode()
	again, err := http.NewRequest(http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	again.Header.Set(clusterHeader, req.Header.Get(clusterHeader))
	signer := v1signer.NewSigner(v1creds.NewStaticCredentials(testKeyID, testSecret, f.session))
	if _, err := signer.Presign(again, nil, "sts", scope[2], time.Duration(expires)*time.Second, signed); err != nil {
		return err
	}
	want := again.URL.Query()
	for _, k := range []string{"X-Amz-SignedHeaders", "X-Amz-Security-Token", "X-Amz-Signature"} {
		if got.Get(k) != want.Get(k) {
			return errors.New(k + " differs: got " + got.Get(k) + ", SDK v1 makes " + want.Get(k))
		}
	}
	return nil
}

func reply(req *http.Request, status int, body string) *http.Response {
	return &http.Response{
		StatusCode: status, Status: http.StatusText(status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"application/json"}},
		Body:    io.NopCloser(strings.NewReader(body)),
		Request: req,
	}
}
