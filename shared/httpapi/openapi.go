package httpapi

import (
	_ "embed"
	"net/http"
)

// openAPISpec is the contract of API.md in OpenAPI 3.1; a test holds it in step with register().
//
//go:embed openapi.json
var openAPISpec []byte

func (a *api) openAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	_, err := w.Write(openAPISpec)
	return err
}

// OpenAPIDocument answers the bytes /openapi.json serves, for tools that hold traffic to them.
func OpenAPIDocument() []byte { return append([]byte(nil), openAPISpec...) }
