package spotprices_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tidegate/tidegate/shared/dev/spotprices"
)

func TestPutPriceThenDescribe(t *testing.T) {
	var b spotprices.Book
	srv := serve(t, &b)
	c := client(srv, "us-east-1")
	in := &ec2.DescribeSpotPriceHistoryInput{
		InstanceTypes:       []types.InstanceType{"g5.xlarge"},
		ProductDescriptions: []string{"Linux/UNIX"},
	}
	for _, price := range []string{"0.42", "0.5"} {
		body := `{"region":"us-east-1","instance_type":"g5.xlarge","price":` + price + `}`
		if status, got := put(t, srv, body); status != http.StatusNoContent {
			t.Fatalf("PUT /prices %s = %d %s, want 204", body, status, got)
		}
		out, err := c.DescribeSpotPriceHistory(context.Background(), in)
		if err != nil {
			t.Fatalf("DescribeSpotPriceHistory after PUT %s: %v", body, err)
		}
		var zones, prices []string
		for _, p := range out.SpotPriceHistory {
			zones = append(zones, aws.ToString(p.AvailabilityZone))
			prices = append(prices, aws.ToString(p.SpotPrice))
		}
		wantPrice := map[string]string{"0.42": "0.420000", "0.5": "0.500000"}[price]
		if diff := cmp.Diff([]string{"us-east-1a", "us-east-1b", "us-east-1c"}, zones); diff != "" {
			t.Errorf("zones after PUT %s (-want +got):\n%s", body, diff)
		}
		if diff := cmp.Diff([]string{wantPrice, wantPrice, wantPrice}, prices); diff != "" {
			t.Errorf("prices after PUT %s (-want +got):\n%s", body, diff)
		}
	}

	got := getPrices(t, srv)
	want := []spotprices.Price{{Region: "us-east-1", InstanceType: "g5.xlarge", Price: 0.5}}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(spotprices.Price{}, "SetAt")); diff != "" {
		t.Errorf("GET /prices after two PUTs (-want +got):\n%s", diff)
	}
	if len(got) == 1 && got[0].SetAt.IsZero() {
		t.Errorf("GET /prices: set_at is zero, want the time of the PUT")
	}
}

func TestPutPriceRejects(t *testing.T) {
	tests := []struct {
		name, body, wantInDetail string
	}{
		{"negative price", `{"region":"us-east-1","instance_type":"g5.xlarge","price":-0.42}`, "price must be at least"},
		{"no price", `{"region":"us-east-1","instance_type":"g5.xlarge"}`, "price must be at least"},
		{"NaN, which JSON cannot hold", `{"region":"us-east-1","instance_type":"g5.xlarge","price":NaN}`, "a price must be a finite JSON number"},
		{"NaN as a string", `{"region":"us-east-1","instance_type":"g5.xlarge","price":"NaN"}`, "price must be a finite number, got string"},
		{"a price too large for a float64", `{"region":"us-east-1","instance_type":"g5.xlarge","price":1e999}`, "price must be a finite number"},
		{"no region", `{"instance_type":"g5.xlarge","price":0.42}`, "region is required"},
		{"a region that is not one", `{"region":"US East","instance_type":"g5.xlarge","price":0.42}`, "region \"US East\" is not a region name"},
		{"no instance type", `{"region":"us-east-1","price":0.42}`, "instance_type is required"},
		{"a misspelt field", `{"region":"us-east-1","instance_type":"g5.xlarge","prise":0.42}`, `unknown field "prise"`},
		{"an empty body", ``, "body is empty"},
		{"two values", `{"region":"us-east-1","instance_type":"g5.xlarge","price":0.42} {}`, "more than one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b spotprices.Book
			srv := serve(t, &b)
			status, raw := put(t, srv, tt.body)
			var got struct{ Error, Detail string }
			if err := json.Unmarshal([]byte(raw), &got); err != nil {
				t.Fatalf("PUT /prices %s: body %q is not JSON: %v", tt.body, raw, err)
			}
			if status != http.StatusBadRequest || got.Error != "invalid_request" || !strings.Contains(got.Detail, tt.wantInDetail) {
				t.Errorf("PUT /prices %s = %d %+v, want 400 invalid_request with %q", tt.body, status, got, tt.wantInDetail)
			}
			if prices := getPrices(t, srv); len(prices) != 0 {
				t.Errorf("after a rejected PUT %s, GET /prices = %v, want none", tt.body, prices)
			}
		})
	}
}

func put(t *testing.T, srv *httptest.Server, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, srv.URL+"/prices", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("PUT /prices %s: %v", body, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("PUT /prices %s: reading the answer: %v", body, err)
	}
	return resp.StatusCode, string(raw)
}

func getPrices(t *testing.T, srv *httptest.Server) []spotprices.Price {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + "/prices")
	if err != nil {
		t.Fatalf("GET /prices: %v", err)
	}
	defer resp.Body.Close()
	var got struct{ Prices []spotprices.Price }
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&got) != nil {
		t.Fatalf("GET /prices = %d, want 200 and {\"prices\": [...]}", resp.StatusCode)
	}
	return got.Prices
}
