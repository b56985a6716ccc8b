package contract

import (
	"bytes"
	"io"
	"net/http"
	"sync"
	"testing"
)

// maxKept bounds the bytes of a response kept for its check; the API's largest answers are pages
// of jobs with their manifests (1 MiB each at most) and logs.
const maxKept = 32 << 20

// Handler wraps h so that every exchange it serves is checked against the served contract; the
// first exchange the contract does not allow fails t, naming the operation, the status and what
// is wrong. Exchanges that end after t has ended are not checked.
func Handler(t testing.TB, h http.Handler) http.Handler {
	t.Helper()
	return Middleware(t)(h)
}

// Middleware is Handler for a handler made later, such as the API a dev stack serves.
func Middleware(t testing.TB) func(http.Handler) http.Handler {
	t.Helper()
	d, err := Served()
	if err != nil {
		t.Fatalf("contract: %v", err)
	}
	var mu sync.Mutex
	done := false
	t.Cleanup(func() { mu.Lock(); done = true; mu.Unlock() })
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if !done {
			t.Errorf("contract: %v", err)
		}
	}
	return func(h http.Handler) http.Handler { return Wrap(d, h, fail) }
}

// Wrap wraps h so that every exchange it serves is checked against d, and what d does not allow
// is told to fail.
func Wrap(d *Document, h http.Handler, fail func(error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Body != nil {
			var err error
			if body, err = io.ReadAll(r.Body); err != nil {
				http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		sent := r.Clone(r.Context())
		tw := &tee{ResponseWriter: w}
		h.ServeHTTP(tw, r)
		if tw.status == 0 {
			tw.status = http.StatusOK
		}
		if tw.overflow {
			return
		}
		if err := d.Check(Exchange{Request: sent, Body: body, Status: tw.status, Header: w.Header().Clone(), Answer: tw.body.Bytes()}); err != nil {
			fail(err)
		}
	})
}

// tee writes a response through and keeps a copy of it.
type tee struct {
	http.ResponseWriter
	status   int
	body     bytes.Buffer
	overflow bool
}

func (t *tee) WriteHeader(code int) {
	if t.status == 0 {
		t.status = code
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *tee) Write(b []byte) (int, error) {
	if t.status == 0 {
		t.status = http.StatusOK
	}
	if t.body.Len()+len(b) > maxKept {
		t.overflow = true
	} else {
		t.body.Write(b)
	}
	return t.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer (to flush a followed log).
func (t *tee) Unwrap() http.ResponseWriter { return t.ResponseWriter }
