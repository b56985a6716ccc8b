package kube

import (
	"fmt"
	"io"
	"net/http"
)

// bearer authenticates each request to an EKS cluster with the cluster's current token. When the
// cluster answers 401 — the token expired early by its clock, or the credentials behind it
// changed — it makes a new token and sends the request once more, if the request's body can be
// sent again.
type bearer struct {
	next   http.RoundTripper
	tokens *tokenSource
}

// drainLimit is how much of a refused response is read so its connection can be reused; a 401
// from the API server is a Status object of a few hundred bytes.
const drainLimit = 4 << 10

func (b *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	tok, err := b.tokens.token(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("authenticating to %s: %w", req.URL.Host, err)
	}
	resp, err := b.next.RoundTrip(withToken(req, tok, req.Body))
	if err != nil || resp.StatusCode != http.StatusUnauthorized || !replayable(req) {
		return resp, err
	}
	fresh, err := b.tokens.token(ctx, tok)
	if err != nil {
		closeBody(resp)
		return nil, fmt.Errorf("%s refused its token and a new one could not be made: %w", req.URL.Host, err)
	}
	if fresh == tok {
		// Signed in the same second with the same credentials, the new token is the old one.
		return resp, nil
	}
	body := req.Body
	if req.GetBody != nil {
		if body, err = req.GetBody(); err != nil {
			closeBody(resp)
			return nil, fmt.Errorf("rewinding a request to %s to send it again: %w", req.URL.Host, err)
		}
	}
	closeBody(resp)
	return b.next.RoundTrip(withToken(req, fresh, body))
}

// WrappedRoundTripper lets client-go reach the transport underneath, as its own wrappers do.
func (b *bearer) WrappedRoundTripper() http.RoundTripper { return b.next }

// withToken is a copy of req carrying tok and body; a RoundTripper must not change its request.
func withToken(req *http.Request, tok string, body io.ReadCloser) *http.Request {
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+tok)
	r.Body = body
	return r
}

// replayable says whether req can be sent a second time: it has no body, or a way to get its body
// again (http.NewRequest sets GetBody for in-memory bodies, which is what client-go sends).
func replayable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

func closeBody(resp *http.Response) {
	_, _ = io.CopyN(io.Discard, resp.Body, drainLimit)
	_ = resp.Body.Close()
}
