package spotprices_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/ec2query"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/dev/spotprices"
)

// TestSDKRequestOnTheWire pins what ec2 v1.344.3 sends, which is what the handler parses.
func TestSDKRequestOnTheWire(t *testing.T) {
	b := pricedBook(t)
	var sent *http.Request
	var body string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		sent, body = r, string(raw)
		r.Body = io.NopCloser(strings.NewReader(body))
		b.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	_, err := client(srv, "us-west-2").DescribeSpotPriceHistory(context.Background(), &ec2.DescribeSpotPriceHistoryInput{
		InstanceTypes:       []types.InstanceType{"g5.xlarge", "m5.large"},
		ProductDescriptions: []string{"Linux/UNIX"},
		StartTime:           aws.Time(t0),
		EndTime:             aws.Time(t0.Add(90 * time.Minute)),
		AvailabilityZone:    aws.String("us-west-2a"),
		MaxResults:          aws.Int32(100),
		Filters:             []types.Filter{{Name: aws.String("product-description"), Values: []string{"Linux/UNIX"}}},
	})
	if err != nil {
		t.Fatalf("DescribeSpotPriceHistory: %v", err)
	}
	t.Logf("%s %s\nContent-Type: %s\nAuthorization: %s\n\n%s", sent.Method, sent.URL.Path,
		sent.Header.Get("Content-Type"), sent.Header.Get("Authorization"), body)

	form, err := url.ParseQuery(body)
	if err != nil {
		t.Fatalf("body %q is not a form: %v", body, err)
	}
	want := url.Values{
		"Action": {"DescribeSpotPriceHistory"}, "Version": {"2016-11-15"},
		"InstanceType.1": {"g5.xlarge"}, "InstanceType.2": {"m5.large"},
		"ProductDescription.1": {"Linux/UNIX"},
		"StartTime":            {"2026-01-01T12:00:00Z"}, "EndTime": {"2026-01-01T13:30:00Z"},
		"AvailabilityZone": {"us-west-2a"}, "MaxResults": {"100"},
		"Filter.1.Name": {"product-description"}, "Filter.1.Value.1": {"Linux/UNIX"},
	}
	if diff := cmp.Diff(want, form); diff != "" {
		t.Errorf("form the SDK sent (-want +got):\n%s", diff)
	}
	if sent.Method != http.MethodPost || sent.URL.Path != "/" ||
		sent.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		t.Errorf("SDK sent %s %s (%s), want POST / (application/x-www-form-urlencoded)",
			sent.Method, sent.URL.Path, sent.Header.Get("Content-Type"))
	}
	if auth := sent.Header.Get("Authorization"); !strings.Contains(auth, "/us-west-2/ec2/aws4_request") {
		t.Errorf("Authorization %q has no us-west-2 ec2 credential scope", auth)
	}
}

// TestRawRequests covers what the SDK never sends but another client might.
func TestRawRequests(t *testing.T) {
	srv := serve(t, pricedBook(t))
	const auth = "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/ec2/aws4_request, SignedHeaders=host, Signature=00"
	base := "Action=DescribeSpotPriceHistory&Version=2016-11-15"
	tests := []struct {
		name, method, body, auth string
		wantStatus               int
		wantCode                 string // empty for a success
	}{
		{"the smallest request", "POST", base, auth, 200, ""},
		{"no Authorization", "POST", base, "", 401, "AuthFailure"},
		{"a credential scope for another service", "POST", base, strings.Replace(auth, "/ec2/", "/sqs/", 1), 401, "AuthFailure"},
		{"no Action", "POST", "Version=2016-11-15", auth, 400, "MissingAction"},
		{"another Action", "POST", "Action=RunInstances&Version=2016-11-15", auth, 400, "InvalidAction"},
		{"no Version", "POST", "Action=DescribeSpotPriceHistory", auth, 400, "MissingParameter"},
		{"an unknown parameter", "POST", base + "&InstanceTypes.1=g5.xlarge", auth, 400, "UnknownParameter"},
		{"a list counted from 0", "POST", base + "&InstanceType.0=g5.xlarge", auth, 400, "UnknownParameter"},
		{"a parameter given twice", "POST", base + "&MaxResults=5&MaxResults=6", auth, 400, "InvalidParameterValue"},
		{"a filter value without a name", "POST", base + "&Filter.1.Value.1=g5.xlarge", auth, 400, "MissingParameter"},
		{"a time that is not one", "POST", base + "&StartTime=yesterday", auth, 400, "InvalidParameterValue"},
		{"DryRun that is not a boolean", "POST", base + "&DryRun=maybe", auth, 400, "InvalidParameterValue"},
		{"a body that is not a form", "POST", base + "&%zz", auth, 400, "InvalidParameterValue"},
		{"GET", "GET", "", auth, 405, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, srv.URL+"/", strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatalf("%s / %q: %v", tt.method, tt.body, err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("%s / %q: status %d, want %d", tt.method, tt.body, resp.StatusCode, tt.wantStatus)
			}
			if tt.wantCode == "" {
				return
			}
			got, err := ec2query.GetErrorResponseComponents(resp.Body)
			if err != nil || got.Code != tt.wantCode || got.Message == "" || got.RequestID == "" {
				t.Errorf("%s / %q: error %+v (%v), want code %s with a message and a request id",
					tt.method, tt.body, got, err, tt.wantCode)
			}
		})
	}
}

// TestEmptyAnswerKeepsTheSet checks an empty answer is an empty list, as EC2's <spotPriceHistorySet/>.
func TestEmptyAnswerKeepsTheSet(t *testing.T) {
	var b spotprices.Book
	out, err := client(serve(t, &b), "us-east-1").DescribeSpotPriceHistory(context.Background(), &ec2.DescribeSpotPriceHistoryInput{})
	if err != nil {
		t.Fatalf("DescribeSpotPriceHistory of an empty book: %v", err)
	}
	if out.SpotPriceHistory == nil || len(out.SpotPriceHistory) != 0 || out.NextToken != nil {
		t.Errorf("DescribeSpotPriceHistory of an empty book = %#v, %v; want an empty list and no token",
			out.SpotPriceHistory, out.NextToken)
	}
}
