package apiclient

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Error is the API's refusal: API.md's {error, detail, request_id} with the HTTP status, and the
// fields or policy violations when the API names them.
type Error struct {
	Status     int            `json:"-"`
	Code       string         `json:"error"`
	Detail     string         `json:"detail"`
	RequestID  string         `json:"request_id"`
	Fields     []FieldProblem `json:"fields,omitempty"`
	Violations []Violation    `json:"violations,omitempty"`
}

// FieldProblem names one field of a request and what is wrong with it.
type FieldProblem struct {
	Field   string `json:"field"`
	Problem string `json:"problem"`
}

// Violation is one admission policy violation: the document, the field and what to change.
type Violation struct {
	Document int    `json:"document"`
	Kind     string `json:"kind,omitempty"`
	Name     string `json:"name,omitempty"`
	Field    string `json:"field"`
	Message  string `json:"message"`
}

// Error is one line: the detail and the request id to quote.
func (e *Error) Error() string {
	detail := e.Detail
	if detail == "" {
		detail = fmt.Sprintf("the API answered %d %s", e.Status, http.StatusText(e.Status))
	}
	if e.RequestID == "" {
		return detail
	}
	return fmt.Sprintf("%s (request id %s)", detail, e.RequestID)
}

// Problems are the fields and violations the API named, one line each, for a person to fix.
func (e *Error) Problems() []string {
	var out []string
	for _, f := range e.Fields {
		out = append(out, f.Field+": "+f.Problem)
	}
	for _, v := range e.Violations {
		where := fmt.Sprintf("document %d", v.Document)
		if v.Kind != "" {
			where = fmt.Sprintf("%s %s/%s", where, v.Kind, v.Name)
		}
		if v.Field != "" {
			where += " " + v.Field
		}
		out = append(out, where+": "+v.Message)
	}
	return out
}

// Is lets errors.Is match an *Error by code: errors.Is(err, &apiclient.Error{Code: "not_found"}).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code != "" && t.Code == e.Code
}

// errorFrom reads a non-2xx answer. Something in front of the API (a proxy, API Gateway itself)
// may answer in another shape; its status and first line still say what happened.
func errorFrom(resp *http.Response, body []byte) *Error {
	e := &Error{}
	if err := json.Unmarshal(body, e); err != nil || (e.Code == "" && e.Detail == "") {
		e = &Error{Detail: gatewayDetail(resp, body)}
	}
	e.Status = resp.StatusCode
	if e.RequestID == "" {
		e.RequestID = resp.Header.Get("X-Request-Id")
	}
	if e.Detail == "" {
		e.Detail = fmt.Sprintf("the API answered %s", resp.Status)
	}
	return e
}

// gatewayDetail describes an answer that is not the API's error shape. API Gateway's own refusal
// of a SigV4 request is {"message": "..."}.
func gatewayDetail(resp *http.Response, body []byte) string {
	var gw struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &gw) == nil && gw.Message != "" {
		return fmt.Sprintf("the API answered %s: %s", resp.Status, gw.Message)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(body)), "\n")
	if len(line) > 200 {
		line = line[:200] + "…"
	}
	if line == "" {
		return fmt.Sprintf("the API answered %s", resp.Status)
	}
	return fmt.Sprintf("the API answered %s: %s", resp.Status, line)
}
