package testenv

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Meter records every request that passes it, for benchmarks that count calls at the wire:
// under client-go's retries and rate limiter, and under the AWS SDK's.
type Meter struct {
	mu    sync.Mutex
	calls []Call
}

// Call is one request: its method (a DynamoDB operation, for DynamoDB), path, status and time.
type Call struct {
	Method, Path string
	Code         int
	Took         time.Duration
}

func (m *Meter) add(c Call) { m.mu.Lock(); m.calls = append(m.calls, c); m.mu.Unlock() }

// Reset forgets the calls recorded so far.
func (m *Meter) Reset() { m.mu.Lock(); m.calls = nil; m.mu.Unlock() }

// Snapshot is a copy of the calls recorded so far.
func (m *Meter) Snapshot() []Call {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.calls)
}

// Transport records each request through next: for rest.Config.WrapTransport.
func (m *Meter) Transport(next http.RoundTripper) http.RoundTripper { return meteredTransport{next, m} }

// DynamoDB records each DynamoDB call through next by its operation (the X-Amz-Target header):
// for dynamodb.Options.HTTPClient.
func (m *Meter) DynamoDB(next dynamodb.HTTPClient) dynamodb.HTTPClient { return meteredDynamo{next, m} }

type meteredTransport struct {
	next http.RoundTripper
	m    *Meter
}

func (t meteredTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	t.m.add(call(req.Method, req, resp, start))
	return resp, err
}

// WrappedRoundTripper lets client-go see through the meter to its own transport.
func (t meteredTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

type meteredDynamo struct {
	next dynamodb.HTTPClient
	m    *Meter
}

func (d meteredDynamo) Do(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := d.next.Do(req)
	_, op, _ := strings.Cut(req.Header.Get("X-Amz-Target"), ".")
	d.m.add(call(op, req, resp, start))
	return resp, err
}

func call(method string, req *http.Request, resp *http.Response, start time.Time) Call {
	c := Call{Method: method, Path: req.URL.Path, Took: time.Since(start)}
	if resp != nil {
		c.Code = resp.StatusCode
	}
	return c
}
