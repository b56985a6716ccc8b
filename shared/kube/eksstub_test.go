package kube

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/tidegate/tidegate/shared/config"
)

// eksStub speaks EKS's REST-JSON DescribeCluster on loopback, so tests drive the real SDK client
// with only its endpoint changed. No EKS stand-in exists to run instead.
type eksStub struct {
	*httptest.Server
	mu       sync.Mutex
	clusters map[string]stubCluster // by name
	calls    []string               // "region/name" of each DescribeCluster, region from the signature
}

// stubCluster is what DescribeCluster answers for one cluster.
type stubCluster struct {
	Status   string
	Endpoint string
	CAPEM    []byte
}

func newEKSStub(t *testing.T, clusters map[string]stubCluster) *eksStub {
	t.Helper()
	s := &eksStub{clusters: clusters}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *eksStub) serve(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutPrefix(r.URL.Path, "/clusters/")
	if r.Method != http.MethodGet || !ok {
		eksError(w, http.StatusBadRequest, "InvalidRequestException", "only DescribeCluster is served here")
		return
	}
	// SigV4's credential scope is KEY/DATE/REGION/SERVICE/aws4_request.
	_, cred, _ := strings.Cut(r.Header.Get("Authorization"), "Credential=")
	scope := strings.Split(strings.SplitN(cred, ",", 2)[0], "/")
	if len(scope) != 5 || scope[3] != "eks" {
		eksError(w, http.StatusForbidden, "AccessDeniedException", "request is not signed for eks")
		return
	}
	s.mu.Lock()
	s.calls = append(s.calls, scope[2]+"/"+name)
	cl, found := s.clusters[name]
	s.mu.Unlock()
	if !found {
		eksError(w, http.StatusNotFound, "ResourceNotFoundException", "No cluster found for name: "+name+".")
		return
	}
	out := map[string]any{"name": name, "status": cl.Status}
	if cl.Endpoint != "" {
		out["endpoint"] = cl.Endpoint
	}
	if cl.CAPEM != nil {
		out["certificateAuthority"] = map[string]string{"data": base64.StdEncoding.EncodeToString(cl.CAPEM)}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"cluster": out})
}

func eksError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", code)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg})
}

func (s *eksStub) describeCalls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// eksConfig is a Config reaching regions (region → cluster name) through stub.
func eksConfig(stub *eksStub, regions map[string]string) config.Config {
	return config.Config{Regions: regions, Endpoints: config.Endpoints{EKS: stub.URL}}
}

// testAWSConfig signs with fixed credentials and reads nothing from the environment or ~/.aws.
func testAWSConfig() aws.Config {
	return aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDTIDEGATETEST", "tidegate-test-secret", "")}
}
