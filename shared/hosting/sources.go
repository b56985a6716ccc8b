package hosting

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/tidegate/tidegate/shared/apps"
)

// sourcesURLFor is how long a host's install may take to start fetching its sources. The URL sits
// in the pod's spec, which anyone allowed to read pods in the hosting namespace sees, so it lives
// no longer than a pod normally waits for a node. A host whose pod waited longer fails its install
// and is revived with a fresh URL.
const sourcesURLFor = 10 * time.Minute

// S3Sources presigns GETs of release sources in the sources bucket.
type S3Sources struct {
	Presign *s3.PresignClient
	Bucket  string
	Prefix  string
}

// PresignSources answers a GET URL for the sources with that digest, valid for sourcesURLFor (10 minutes).
func (s S3Sources) PresignSources(ctx context.Context, sourcesSHA256 string) (string, error) {
	req, err := s.Presign.PresignGetObject(ctx, &s3.GetObjectInput{
		Bucket: aws.String(s.Bucket), Key: aws.String(apps.SourcesKey(s.Prefix, sourcesSHA256)),
	}, s3.WithPresignExpires(sourcesURLFor))
	if err != nil {
		return "", err
	}
	return req.URL, nil
}
