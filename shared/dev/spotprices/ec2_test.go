package spotprices_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/dev/spotprices"
)

// row is what a test reads of one types.SpotPrice, which go-cmp cannot compare itself.
type row struct {
	Zone, InstanceType, Description, Price string
	At                                     time.Time
}

func rows(prices []types.SpotPrice) []row {
	var rs []row
	for _, p := range prices {
		rs = append(rs, row{aws.ToString(p.AvailabilityZone), string(p.InstanceType),
			string(p.ProductDescription), aws.ToString(p.SpotPrice), aws.ToTime(p.Timestamp)})
	}
	return rs
}

// serve starts the book's handler on loopback for the test.
func serve(t *testing.T, b *spotprices.Book) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(b.Handler())
	t.Cleanup(srv.Close)
	return srv
}

// client is a real EC2 client for region, pointed at the server.
func client(srv *httptest.Server, region string) *ec2.Client {
	return ec2.New(ec2.Options{
		Region:       region,
		BaseEndpoint: aws.String(srv.URL),
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDTIDEGATE", "secret", ""),
		HTTPClient:   srv.Client(),
	})
}

// pricedBook has g5.xlarge in both dev regions and m5.large in us-east-1 only.
func pricedBook(t *testing.T) *spotprices.Book {
	var b spotprices.Book
	mustSet(t, &b, "us-east-1", "g5.xlarge", 0.42, t0)
	mustSet(t, &b, "us-east-1", "m5.large", 0.031, t0)
	mustSet(t, &b, "us-west-2", "g5.xlarge", 0.55, t0)
	return &b
}

func TestDescribeSpotPriceHistory(t *testing.T) {
	srv := serve(t, pricedBook(t))
	linux := []string{"Linux/UNIX"}
	g5 := []types.InstanceType{"g5.xlarge"}
	east := func(zone, typ, price string) row { return row{zone, typ, "Linux/UNIX", price, t0} }
	tests := []struct {
		name   string
		region string
		in     ec2.DescribeSpotPriceHistoryInput
		want   []row
	}{
		{"one type in us-east-1", "us-east-1", ec2.DescribeSpotPriceHistoryInput{InstanceTypes: g5, ProductDescriptions: linux}, []row{
			east("us-east-1a", "g5.xlarge", "0.420000"), east("us-east-1b", "g5.xlarge", "0.420000"), east("us-east-1c", "g5.xlarge", "0.420000")}},
		{"one type in us-west-2, no us-east-1 price leaking", "us-west-2", ec2.DescribeSpotPriceHistoryInput{InstanceTypes: g5, ProductDescriptions: linux}, []row{
			east("us-west-2a", "g5.xlarge", "0.550000"), east("us-west-2b", "g5.xlarge", "0.550000"), east("us-west-2c", "g5.xlarge", "0.550000")}},
		{"a type priced only in the other region", "us-west-2", ec2.DescribeSpotPriceHistoryInput{InstanceTypes: []types.InstanceType{"m5.large"}}, nil},
		{"unknown instance type", "us-east-1", ec2.DescribeSpotPriceHistoryInput{InstanceTypes: []types.InstanceType{"x9.huge"}, ProductDescriptions: linux}, nil},
		{"another product", "us-east-1", ec2.DescribeSpotPriceHistoryInput{InstanceTypes: g5, ProductDescriptions: []string{"Windows"}}, nil},
		{"no filters, ordered by zone then type", "us-east-1", ec2.DescribeSpotPriceHistoryInput{}, []row{
			east("us-east-1a", "g5.xlarge", "0.420000"), east("us-east-1a", "m5.large", "0.031000"),
			east("us-east-1b", "g5.xlarge", "0.420000"), east("us-east-1b", "m5.large", "0.031000"),
			east("us-east-1c", "g5.xlarge", "0.420000"), east("us-east-1c", "m5.large", "0.031000")}},
		{"one zone", "us-east-1", ec2.DescribeSpotPriceHistoryInput{AvailabilityZone: aws.String("us-east-1b")}, []row{
			east("us-east-1b", "g5.xlarge", "0.420000"), east("us-east-1b", "m5.large", "0.031000")}},
		{"instance-type and availability-zone filters", "us-east-1", ec2.DescribeSpotPriceHistoryInput{Filters: []types.Filter{
			{Name: aws.String("instance-type"), Values: []string{"m5.large", "c5.large"}},
			{Name: aws.String("availability-zone"), Values: []string{"us-east-1a", "us-east-1c"}},
		}}, []row{east("us-east-1a", "m5.large", "0.031000"), east("us-east-1c", "m5.large", "0.031000")}},
		{"a window starting after the price was set still has it", "us-east-1", ec2.DescribeSpotPriceHistoryInput{
			InstanceTypes: g5, StartTime: aws.Time(t0.Add(time.Hour)), EndTime: aws.Time(t0.Add(2 * time.Hour))}, []row{
			east("us-east-1a", "g5.xlarge", "0.420000"), east("us-east-1b", "g5.xlarge", "0.420000"), east("us-east-1c", "g5.xlarge", "0.420000")}},
		{"a window ending before the price was set", "us-east-1", ec2.DescribeSpotPriceHistoryInput{
			InstanceTypes: g5, StartTime: aws.Time(t0.Add(-2 * time.Hour)), EndTime: aws.Time(t0.Add(-time.Hour))}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := client(srv, tt.region).DescribeSpotPriceHistory(context.Background(), &tt.in)
			if err != nil {
				t.Fatalf("DescribeSpotPriceHistory in %s: %v", tt.region, err)
			}
			if diff := cmp.Diff(tt.want, rows(out.SpotPriceHistory)); diff != "" {
				t.Errorf("DescribeSpotPriceHistory in %s (-want +got):\n%s", tt.region, diff)
			}
			if aws.ToString(out.NextToken) != "" {
				t.Errorf("DescribeSpotPriceHistory in %s: NextToken = %q, want none for one page", tt.region, *out.NextToken)
			}
		})
	}
}

func TestDescribeSpotPriceHistoryErrors(t *testing.T) {
	srv := serve(t, pricedBook(t))
	tests := []struct {
		name       string
		in         ec2.DescribeSpotPriceHistoryInput
		wantCode   string
		wantStatus int
		wantInMsg  string
	}{
		{"MaxResults over EC2's limit", ec2.DescribeSpotPriceHistoryInput{MaxResults: aws.Int32(5000)}, "InvalidParameterValue", 400, "MaxResults"},
		{"a zone of another region", ec2.DescribeSpotPriceHistoryInput{AvailabilityZone: aws.String("us-west-2a")}, "InvalidParameterValue", 400, "us-west-2a"},
		{"end before start", ec2.DescribeSpotPriceHistoryInput{StartTime: aws.Time(t0), EndTime: aws.Time(t0.Add(-time.Hour))}, "InvalidParameterValue", 400, "EndTime"},
		{"zone id", ec2.DescribeSpotPriceHistoryInput{AvailabilityZoneId: aws.String("use1-az1")}, "Unsupported", 400, "AvailabilityZoneId"},
		{"spot-price filter", ec2.DescribeSpotPriceHistoryInput{Filters: []types.Filter{{Name: aws.String("spot-price"), Values: []string{"0.42"}}}}, "Unsupported", 400, "spot-price"},
		{"filter without values", ec2.DescribeSpotPriceHistoryInput{Filters: []types.Filter{{Name: aws.String("instance-type")}}}, "MissingParameter", 400, "Filter.1"},
		{"a token this endpoint never issued", ec2.DescribeSpotPriceHistoryInput{NextToken: aws.String("not-a-token")}, "InvalidPaginationToken", 400, "not-a-token"},
		{"dry run", ec2.DescribeSpotPriceHistoryInput{DryRun: aws.Bool(true)}, "DryRunOperation", 412, "DryRun"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := client(srv, "us-east-1").DescribeSpotPriceHistory(context.Background(), &tt.in)
			assertAPIError(t, "DescribeSpotPriceHistory", err, tt.wantCode, tt.wantStatus, tt.wantInMsg)
		})
	}
}

func TestUnsupportedActionIsAnAPIError(t *testing.T) {
	srv := serve(t, pricedBook(t))
	_, err := client(srv, "us-east-1").DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{})
	assertAPIError(t, "DescribeInstances", err, "InvalidAction", http.StatusBadRequest, "DescribeInstances")
}

func TestPaginatorEnds(t *testing.T) {
	var b spotprices.Book
	for _, typ := range []string{"c5.large", "g5.xlarge", "m5.large", "p4d.24xlarge", "t3.micro"} {
		mustSet(t, &b, "us-east-1", typ, 0.1, t0)
	}
	mustSet(t, &b, "us-west-2", "m5.large", 0.2, t0)
	c := client(serve(t, &b), "us-east-1")

	whole, err := c.DescribeSpotPriceHistory(context.Background(), &ec2.DescribeSpotPriceHistoryInput{})
	if err != nil {
		t.Fatalf("DescribeSpotPriceHistory in one page: %v", err)
	}
	p := ec2.NewDescribeSpotPriceHistoryPaginator(c, &ec2.DescribeSpotPriceHistoryInput{MaxResults: aws.Int32(4)})
	var got []row
	var sizes []int
	for p.HasMorePages() {
		if len(sizes) == 10 {
			t.Fatalf("paginator still has pages after %v", sizes)
		}
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("NextPage after %v: %v", sizes, err)
		}
		got = append(got, rows(page.SpotPriceHistory)...)
		sizes = append(sizes, len(page.SpotPriceHistory))
	}
	if diff := cmp.Diff([]int{4, 4, 4, 3}, sizes); diff != "" {
		t.Errorf("page sizes of 15 prices at MaxResults 4 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(rows(whole.SpotPriceHistory), got); diff != "" {
		t.Errorf("pages joined vs one page (-one +pages):\n%s", diff)
	}
}

func assertAPIError(t *testing.T, op string, err error, wantCode string, wantStatus int, wantInMsg string) {
	t.Helper()
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("%s = %v, want a smithy.APIError %s", op, err, wantCode)
	}
	if apiErr.ErrorCode() != wantCode || !strings.Contains(apiErr.ErrorMessage(), wantInMsg) {
		t.Errorf("%s = %s %q, want %s with %q", op, apiErr.ErrorCode(), apiErr.ErrorMessage(), wantCode, wantInMsg)
	}
	var respErr *awshttp.ResponseError
	if !errors.As(err, &respErr) || respErr.HTTPStatusCode() != wantStatus {
		t.Errorf("%s: HTTP status of %v, want %d", op, err, wantStatus)
	}
	if respErr != nil && respErr.ServiceRequestID() == "" {
		t.Errorf("%s: no request id in %v", op, err)
	}
}
