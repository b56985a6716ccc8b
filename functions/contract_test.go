package functions_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/tidegate/tidegate/shared/dev/contract"
)

// heldToContract checks the API function's answer raw to the gateway event ev against
// openapi.json, as the tests that serve the API in process check theirs: what the function
// answers through the gateway's adapter is what clients read.
func heldToContract(ev events.APIGatewayV2HTTPRequest, raw []byte) error {
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		return fmt.Errorf("not an API Gateway v2 response: %w", err)
	}
	d, err := contract.Served()
	if err != nil {
		return err
	}
	target := ev.RawPath
	if ev.RawQueryString != "" {
		target += "?" + ev.RawQueryString
	}
	req := httptest.NewRequest(ev.RequestContext.HTTP.Method, target, strings.NewReader(ev.Body))
	for k, v := range ev.Headers {
		req.Header.Set(k, v)
	}
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			return fmt.Errorf("the answer's body is not base64: %w", err)
		}
	}
	header := http.Header{}
	for k, v := range resp.Headers {
		header.Set(k, v)
	}
	for k, vs := range resp.MultiValueHeaders {
		header[http.CanonicalHeaderKey(k)] = vs
	}
	return d.Check(contract.Exchange{Request: req, Body: []byte(ev.Body), Status: resp.StatusCode, Header: header, Answer: body})
}
