package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/tidegate/tidegate/shared/dev/contract"
	"github.com/tidegate/tidegate/shared/httpapi"
)

// served is the API of d with every exchange it serves held to openapi.json: a response the
// contract does not describe fails t.
func served(t testing.TB, d httpapi.Deps) http.Handler {
	t.Helper()
	return contract.Handler(t, httpapi.New(d))
}
