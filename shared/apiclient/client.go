// Package apiclient provides a typed client for Tidegate's HTTP API: its base URL, an API key or
// SigV4 signing for API Gateway's IAM auth, the API's error shape as a Go error, and pagination.
package apiclient

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Authorizer puts credentials on a request about to be sent. payloadHash is the hex SHA-256 of
// the body, which SigV4 signs.
type Authorizer interface {
	Authorize(ctx context.Context, r *http.Request, payloadHash string) error
}

// Client calls one Tidegate API. Its methods answer *Error for anything the API refused.
type Client struct {
	base      *url.URL
	auth      Authorizer
	hc        *http.Client
	userAgent string
}

// Options configure a Client.
type Options struct {
	// URL is the API's base, such as https://abc.execute-api.us-east-1.amazonaws.com or
	// http://127.0.0.1:8080.
	URL string
	// Auth signs or keys each request; nil sends none (only /healthz and /openapi.json answer).
	Auth Authorizer
	// HTTPClient sends the requests; nil means one with requestTimeout.
	HTTPClient *http.Client
	// UserAgent names the caller in the API's logs.
	UserAgent string
}

// requestTimeout bounds one call. The API runs as a Lambda with a 30 s timeout behind API
// Gateway's 30 s integration limit, so an answer later than that will not come.
const requestTimeout = 35 * time.Second

// New checks the options and makes a client.
func New(o Options) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(o.URL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("the API URL %q is not an http(s) URL such as https://api.example.com", o.URL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("the API URL %q has a query or fragment; give only scheme, host and an optional path", o.URL)
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: requestTimeout}
	}
	ua := o.UserAgent
	if ua == "" {
		ua = "tidegate-apiclient"
	}
	return &Client{base: u, auth: o.Auth, hc: hc, userAgent: ua}, nil
}

// URL is the API's base URL.
func (c *Client) URL() string { return c.base.String() }

// request is one call to the API.
type request struct {
	method, path string
	query        url.Values
	body         []byte
	contentType  string
	header       http.Header
	// progress, when set, is told how much of the body has gone, for uploads a person waits on.
	progress func(sent, total int64)
}

// jsonRequest is a request whose body is v as JSON.
func jsonRequest(method, path string, v any) (request, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return request{}, fmt.Errorf("encoding the request to %s: %w", path, err)
	}
	return request{method: method, path: path, body: b, contentType: "application/json"}, nil
}

// maxAnswer bounds what a reply may hold: API Gateway answers at most 10 MB.
const maxAnswer = 10 << 20

// do sends rq and decodes a 2xx answer's JSON into out (when out is not nil and there is a body);
// any other answer is an *Error.
func (c *Client) do(ctx context.Context, rq request, out any) error {
	u := c.base.JoinPath(rq.path)
	u.RawQuery = rq.query.Encode()
	sum := sha256.Sum256(rq.body)
	var body io.Reader
	if rq.body != nil {
		body = bytes.NewReader(rq.body)
		if rq.progress != nil {
			body = &progressReader{r: body, total: int64(len(rq.body)), report: rq.progress}
		}
	}
	req, err := http.NewRequestWithContext(ctx, rq.method, u.String(), body)
	if err != nil {
		return fmt.Errorf("making the request %s %s: %w", rq.method, rq.path, err)
	}
	req.ContentLength = int64(len(rq.body))
	for k, vs := range rq.header {
		req.Header[k] = vs
	}
	if rq.contentType != "" {
		req.Header.Set("Content-Type", rq.contentType)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if c.auth != nil {
		if err := c.auth.Authorize(ctx, req, hex.EncodeToString(sum[:])); err != nil {
			return err
		}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("reaching the API at %s: %w", c.base.Host, unwrapURLError(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("reading the answer to %s %s: %w", rq.method, rq.path, err)
	}
	if resp.StatusCode/100 != 2 {
		return errorFrom(resp, b)
	}
	if out == nil || len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("the answer to %s %s is not the JSON expected: %w", rq.method, rq.path, err)
	}
	return nil
}

// unwrapURLError drops net/url's "Get "http://…": " prefix: the caller names the host already.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// progressReader reports how much of a body has been read.
type progressReader struct {
	r      io.Reader
	sent   int64
	total  int64
	report func(sent, total int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.sent += int64(n)
	p.report(p.sent, p.total)
	return n, err
}

// pathEscape escapes one path segment, so an id or name can never reach another route.
func pathEscape(s string) string { return url.PathEscape(s) }
