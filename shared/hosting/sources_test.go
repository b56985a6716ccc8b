package hosting

import (
	"context"
	"net/url"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestSourcesURLLivesTenMinutes: the presigned GET a host's pod spec carries is valid for at most
// ten minutes. Presigning is computed locally: no server is involved.
func TestSourcesURLLivesTenMinutes(t *testing.T) {
	client := s3.New(s3.Options{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
	})
	src := S3Sources{Presign: s3.NewPresignClient(client), Bucket: "sources", Prefix: "acme/"}
	raw, err := src.PresignSources(context.Background(), "0f0f")
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	secs, err := strconv.Atoi(u.Query().Get("X-Amz-Expires"))
	if err != nil || secs <= 0 || secs > 600 {
		t.Errorf("the sources URL's X-Amz-Expires = %q; want at most 600 seconds (%s)", u.Query().Get("X-Amz-Expires"), raw)
	}
}
