// Package contract holds the API's traffic to the contract it serves: a handler wrapped by Handler
// has every request and response it answers validated against /openapi.json (kin-openapi's
// openapi3filter, JSON Schema 2020-12 for the document's OpenAPI 3.1), and a test fails on the
// first answer the document does not describe.
package contract

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/tidegate/tidegate/shared/httpapi"
)

// Document is the served contract, loaded and checked once per test binary.
type Document struct {
	doc *openapi3.T
	// ops routes a request as the API does (both are http.ServeMux patterns): a path template of
	// openapi.json to its operation.
	ops *http.ServeMux
}

var load = sync.OnceValues(func() (*Document, error) {
	return Load(httpapi.OpenAPIDocument())
})

// Served answers the document the API serves, loaded once.
func Served() (*Document, error) { return load() }

// Load reads and validates an OpenAPI document, its object schemas closed (closeObjects).
func Load(spec []byte) (*Document, error) {
	spec, err := closeObjects(spec)
	if err != nil {
		return nil, err
	}
	ld := openapi3.NewLoader()
	doc, err := ld.LoadFromData(spec)
	if err != nil {
		return nil, fmt.Errorf("loading the OpenAPI document: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("the OpenAPI document is not valid: %w", err)
	}
	d := &Document{doc: doc, ops: http.NewServeMux()}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			route := &routers.Route{Spec: doc, Path: path, PathItem: item, Method: method, Operation: op}
			d.ops.Handle(method+" "+path, operation{route})
		}
	}
	return d, nil
}

// operation is a route of the document, kept in the mux so that the mux's match answers it.
type operation struct{ route *routers.Route }

func (operation) ServeHTTP(http.ResponseWriter, *http.Request) {}

// Exchange is one request and the answer it got.
type Exchange struct {
	Request *http.Request
	// Body is the request's body as sent.
	Body   []byte
	Status int
	Header http.Header
	// Answer is the response's body.
	Answer []byte
}

// Check answers what in x the document does not allow, or nil. A request the document refuses
// must be refused (4xx) by the server too: one it accepts is a disagreement between the two. A
// request the document allows may still be refused, for what a schema cannot say. Every response
// must have a status the operation declares and a body its schema takes.
func (d *Document) Check(x Exchange) error {
	route, params, ok := d.route(x.Request)
	if !ok {
		if apiPath(x.Request.URL.Path) && x.Status != http.StatusNotFound && x.Status != http.StatusMethodNotAllowed {
			return fmt.Errorf("%s %s answered %d but the contract has no such operation", x.Request.Method, x.Request.URL.Path, x.Status)
		}
		return nil
	}
	name := route.Operation.OperationID
	req := x.Request.Clone(context.Background())
	req.Body = io.NopCloser(bytes.NewReader(x.Body))
	in := &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true},
	}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil && x.Status < 400 {
		return fmt.Errorf("%s (%s %s) answered %d to a request the contract refuses: %w", name, req.Method, req.URL.Path, x.Status, err)
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: x.Status, Header: x.Header, Body: io.NopCloser(bytes.NewReader(x.Answer)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		return fmt.Errorf("%s (%s %s) answered %d, which the contract does not describe: %w\nbody: %.600s", name, req.Method, req.URL.Path, x.Status, err, x.Answer)
	}
	return nil
}

// route finds the operation r is for, as the API's own mux would.
func (d *Document) route(r *http.Request) (*routers.Route, map[string]string, bool) {
	probe := &http.Request{Method: r.Method, URL: &url.URL{Path: r.URL.Path}, Host: r.Host}
	h, pattern := d.ops.Handler(probe)
	op, ok := h.(operation)
	if !ok || pattern == "" {
		return nil, nil, false
	}
	params := map[string]string{}
	_, tmpl, _ := strings.Cut(pattern, " ")
	ts, ps := strings.Split(tmpl, "/"), strings.Split(r.URL.EscapedPath(), "/")
	for i, t := range ts {
		name, ok := strings.CutPrefix(t, "{")
		if !ok || i >= len(ps) {
			continue
		}
		v, err := url.PathUnescape(ps[i])
		if err != nil {
			v = ps[i]
		}
		params[strings.TrimSuffix(name, "}")] = v
	}
	return op.route, params, true
}

// apiPath tells the paths the contract covers from the console's page and files.
func apiPath(p string) bool {
	return strings.HasPrefix(p, "/api/") || p == "/healthz" || p == "/openapi.json"
}

func init() {
	// The document gives YAML manifests and gzip sources as strings of bytes: take them as such
	// rather than parse them, as kin-openapi's own YAML decoder would.
	openapi3filter.RegisterBodyDecoder("application/yaml", openapi3filter.FileBodyDecoder)
	openapi3filter.RegisterBodyDecoder("application/gzip", openapi3filter.FileBodyDecoder)
}
