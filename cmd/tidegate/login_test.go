package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/tidegate/tidegate/shared/apiclient"
)

func TestGatewayHint(t *testing.T) {
	gateway403 := &apiclient.Error{Status: 403, Detail: "the API answered 403 Forbidden: Forbidden"}
	gateway401 := &apiclient.Error{Status: 401, Detail: "the API answered 401 Unauthorized: Unauthorized"}
	tidegate401 := &apiclient.Error{Status: 401, Code: "unauthenticated", Detail: "the API key is not valid", RequestID: "r1"}
	key := cliContext{URL: "https://abc.execute-api.us-east-1.amazonaws.com", APIKey: "tg_x"}
	signed := cliContext{URL: "https://abc.execute-api.us-east-1.amazonaws.com", Profile: "prod"}
	tests := []struct {
		name string
		err  error
		c    cliContext
		want string
	}{
		{"a key refused by the IAM API", fmt.Errorf("listing: %w", gateway403), key, hintKey},
		{"a signature refused by the key API's authorizer", gateway403, signed, hintSigned},
		{"a key API request without a key", gateway401, key, hintKey},
		{"a key Tidegate refused", tidegate401, key, ""},
		{"a server error from the gateway", &apiclient.Error{Status: 502}, key, ""},
		{"no answer at all", errors.New("dial tcp: connection refused"), signed, ""},
	}
	for _, tt := range tests {
		if got := gatewayHint(tt.err, tt.c); got != tt.want {
			t.Errorf("gatewayHint(%s) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
