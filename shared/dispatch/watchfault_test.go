package dispatch

import (
	"io"
	"net/http"
	"strings"
	"time"
)

// Watch faults, drawn at each watch request the beats make: the stream is cut off at a random
// moment within its first watchDropWithin, or the API server answers that the resourceVersion
// asked for is gone (410 Expired, as after a compaction). Either way the beat must resume with a
// fresh pass, and record each job's steps once.
const (
	watchDropped    = 0.3
	watchExpired    = 0.1
	watchDropWithin = 1500 * time.Millisecond
	// watchWindow is how long each beat of the suite watches after its pass: long enough for a
	// round's Jobs to end under it, short enough that rounds keep coming.
	watchWindow = 1500 * time.Millisecond
)

// expiredEvent is the one event of a watch whose resourceVersion the API server no longer has.
const expiredEvent = `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",` +
	`"message":"too old resource version: injected by the fault suite","reason":"Expired","code":410}}` + "\n"

// watchFaultTransport cuts watches off, or expires them, at random; other requests pass.
type watchFaultTransport struct {
	next   http.RoundTripper
	faults *faults
}

func (t *watchFaultTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Query().Get("watch") != "true" {
		return t.next.RoundTrip(req)
	}
	if t.faults.chance(watchExpired, "watch answered 410 Expired") {
		if req.Body != nil {
			req.Body.Close()
		}
		return &http.Response{
			Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"Content-Type": {"application/json"}}, Request: req,
			Body: io.NopCloser(strings.NewReader(expiredEvent)), ContentLength: -1,
		}, nil
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil || !t.faults.chance(watchDropped, "watch dropped mid-stream") {
		return resp, err
	}
	after := time.Duration(t.faults.intn(int(watchDropWithin/time.Millisecond))) * time.Millisecond
	body := resp.Body
	time.AfterFunc(after, func() { body.Close() })
	return resp, nil
}

// CancelRequest passes a cancel on, as faultTransport's does.
func (t *watchFaultTransport) CancelRequest(req *http.Request) {
	if c, ok := t.next.(interface{ CancelRequest(*http.Request) }); ok {
		c.CancelRequest(req)
	}
}
