package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
)

// handlerFunc is a route's handler: it answers a value to encode, or an error.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// writeJSON answers v with status.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
	return nil
}

// writeError answers err in API.md's shape. An *Error goes to the client as it is; anything else
// is logged with the request id and answered as a bare 500 carrying that id.
func (a *api) writeError(w http.ResponseWriter, r *http.Request, err error) {
	id := requestID(r.Context())
	var apiErr *Error
	if !errors.As(err, &apiErr) {
		a.log.ErrorContext(r.Context(), "request failed", "request_id", id, "method", r.Method, "path", r.URL.Path, "err", err)
		apiErr = Errorf(CodeInternal, detailInternal, id)
	}
	out := *apiErr
	out.RequestID = id
	_ = writeJSON(w, out.Status(), &out)
}

type ctxKey int

const (
	keyRequestID ctxKey = iota
	keyPrincipal
	keyAudit // the *pendingAudit of a request whose job's transaction writes its audit record
)

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(keyRequestID).(string)
	return id
}

// logger returns the API's logger with the request id attached, for handlers' own log lines.
func (a *api) logger(ctx context.Context) *slog.Logger {
	return a.log.With("request_id", requestID(ctx))
}
