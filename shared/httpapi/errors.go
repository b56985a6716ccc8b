// Package httpapi provides Tidegate's HTTP API as one http.Handler: routes, auth, request ids,
// strict decoding and the error shape of API.md. Lambda and `tidegate dev` serve the same handler.
package httpapi

import (
	"fmt"
	"net/http"
)

// Code is an API error code, as API.md lists them.
type Code string

// The error codes of API.md.
const (
	CodeInvalidRequest  Code = "invalid_request"
	CodeUnauthenticated Code = "unauthenticated"
	CodeForbidden       Code = "forbidden"
	CodeNotFound        Code = "not_found"
	CodeMethod          Code = "method_not_allowed"
	CodeConflict        Code = "conflict"
	CodeTooLarge        Code = "too_large"
	CodeUnsupported     Code = "unsupported_media_type"
	CodePolicyViolation Code = "policy_violation"
	CodeThrottled       Code = "throttled"
	CodeQueueFull       Code = "queue_full"
	CodeUnavailable     Code = "unavailable"
	CodeInternal        Code = "internal"
)

// statusOf is the one map from code to HTTP status.
var statusOf = map[Code]int{
	CodeInvalidRequest:  http.StatusBadRequest,
	CodeUnauthenticated: http.StatusUnauthorized,
	CodeForbidden:       http.StatusForbidden,
	CodeNotFound:        http.StatusNotFound,
	CodeMethod:          http.StatusMethodNotAllowed,
	CodeConflict:        http.StatusConflict,
	CodeTooLarge:        http.StatusRequestEntityTooLarge,
	CodeUnsupported:     http.StatusUnsupportedMediaType,
	CodePolicyViolation: http.StatusUnprocessableEntity,
	CodeThrottled:       http.StatusTooManyRequests,
	CodeQueueFull:       http.StatusTooManyRequests,
	CodeUnavailable:     http.StatusServiceUnavailable,
	CodeInternal:        http.StatusInternalServerError,
}

// FieldProblem names one bad field of a request and what is wrong with it.
type FieldProblem struct {
	Field   string `json:"field"`
	Problem string `json:"problem"`
}

// Error is the one error type handlers return to the client. Anything else a handler returns is
// an internal error: the client sees only the request id, the log has the cause.
type Error struct {
	Code       Code           `json:"error"`
	Detail     string         `json:"detail"`
	RequestID  string         `json:"request_id"`
	Fields     []FieldProblem `json:"fields,omitempty"`
	Violations []any          `json:"violations,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Detail) }

// Status is the HTTP status the error answers with.
func (e *Error) Status() int {
	if s, ok := statusOf[e.Code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Errorf makes an API error with a formatted detail.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Detail: fmt.Sprintf(format, args...)}
}

// Invalid is a 400 naming the fields to fix.
func Invalid(detail string, fields ...FieldProblem) *Error {
	return &Error{Code: CodeInvalidRequest, Detail: detail, Fields: fields}
}

// Details a client reads, kept together.
const (
	detailNoCredentials = "send an API key as 'Authorization: Bearer <key>' (or sign the request with IAM in AWS)"
	detailBadKey        = "the API key is not valid; check it, or create one with `tidegate admin keys create`"
	detailIAMUnknown    = "the IAM caller %s acts for no tenant; map it with `tidegate admin tenants put --iam-arn`"
	detailInternal      = "something went wrong on our side; quote request id %s when you report it"
	detailNoRoute       = "no route %s %s; see /openapi.json for the routes"
	detailMethod        = "%s is not allowed on %s; allowed: %s"
	detailReadOnly      = "role %s may only read; ask a tenant admin for a member key"
	detailNotDeployer   = "role %s may not deploy the org's apps nor read their hosts' logs (a host's code and output can reach every secret of its org); ask a tenant admin for a deployer key"
	detailThrottled     = "%s of tenant %s is over its request budget (%g a second, bursts of %d; this request costs %d); retry in %d s"
	detailQueueFull     = "%s: a new job would take it past the cap. Wait for its queue to drain (its jobs leave it as they are dispatched, cancelled or deleted; the count is the drains' census, taken about once a minute) and submit again in %d s or later, or ask an operator to raise the cap (tidegate admin tenants put --max-queued)"
)
