package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/tidegate/tidegate/shared/metrics"
)

// headerRequestID carries the request id on every response, and may come in on a request from a
// proxy that already assigned one.
const headerRequestID = "X-Request-Id"

// goodRequestID is what an incoming id must look like to be kept: short and safe in a log line.
var goodRequestID = regexp.MustCompile(`^[A-Za-z0-9._-]{8,64}$`)

func newRequestID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "req_" + hex.EncodeToString(b)
}

// statusRecorder remembers the status a handler answered, for the access log.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// outermost gives every request an id, logs it once it is answered, and turns a panic into a 500
// that carries the id.
func (a *api) outermost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := a.now()
		id := r.Header.Get(headerRequestID)
		if !goodRequestID.MatchString(id) {
			id = newRequestID()
		}
		w.Header().Set(headerRequestID, id)
		r = r.WithContext(context.WithValue(r.Context(), keyRequestID, id))
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				a.writeError(rec, r, fmt.Errorf("panic: %v", p))
			}
			a.log.InfoContext(r.Context(), "request", "request_id", id, "method", r.Method,
				"path", r.URL.Path, "status", rec.status, "ms", time.Since(start).Milliseconds())
			a.countRequest(r, rec.status)
		}()
		next.ServeHTTP(rec, r)
	})
}

// unmatchedRoute is the route dimension of a request no route matched: a caller chooses its path,
// so the path itself must never become a dimension (each new value is a new metric to pay for).
const unmatchedRoute = "unmatched"

// countRequest adds r to metrics.APIRequests under the route pattern that served it and its
// status class.
func (a *api) countRequest(r *http.Request, status int) {
	route := r.Pattern
	if route == "" || route == "/" { // "/" is noRoute's, for every path no other route has
		route = unmatchedRoute
	}
	if status == 0 {
		status = http.StatusOK // a handler that wrote nothing answered 200
	}
	class := strconv.Itoa(status/100) + "xx"
	if err := a.metrics.Put(metrics.APIRequests, []string{route, class}, 1); err != nil {
		a.log.WarnContext(r.Context(), "recording a request's metric", "error", err)
	}
}
