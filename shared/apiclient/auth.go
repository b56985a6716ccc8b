package apiclient

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// APIKey sends a Tidegate API key as a bearer token.
type APIKey string

// Authorize sets the Authorization header.
func (k APIKey) Authorize(_ context.Context, r *http.Request, _ string) error {
	r.Header.Set("Authorization", "Bearer "+string(k))
	return nil
}

// ServiceExecuteAPI is the service name API Gateway's IAM auth checks signatures against.
const ServiceExecuteAPI = "execute-api"

// SigV4 signs each request with AWS Signature Version 4, as API Gateway's IAM authorization
// wants, using the credentials of an AWS profile (or any other provider).
type SigV4 struct {
	Credentials aws.CredentialsProvider
	Region      string
	// Service is what the signature is scoped to; ServiceExecuteAPI when empty.
	Service string
	// Now is the signing clock; time.Now when nil.
	Now func() time.Time

	signer *v4.Signer
}

// Authorize signs r over its method, path, query, headers and payloadHash.
func (s *SigV4) Authorize(ctx context.Context, r *http.Request, payloadHash string) error {
	if s.Credentials == nil {
		return fmt.Errorf("signing the request: no AWS credentials; choose a profile with --profile or AWS_PROFILE")
	}
	if s.Region == "" {
		return fmt.Errorf("signing the request: no AWS region; set it in the profile, or AWS_REGION")
	}
	creds, err := s.Credentials.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("reading AWS credentials to sign the request: %w", err)
	}
	if s.signer == nil {
		s.signer = v4.NewSigner()
	}
	service, now := s.Service, time.Now
	if service == "" {
		service = ServiceExecuteAPI
	}
	if s.Now != nil {
		now = s.Now
	}
	if err := s.signer.SignHTTP(ctx, creds, r, payloadHash, service, s.Region, now()); err != nil {
		return fmt.Errorf("signing the request: %w", err)
	}
	return nil
}

// executeAPIHost is API Gateway's default endpoint: <api-id>.execute-api.<region>.amazonaws.com.
var executeAPIHost = regexp.MustCompile(`^[a-z0-9]+\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$`)

// RegionOfHost is the AWS region an API Gateway default endpoint names, or "" for another host
// (a custom domain names none; the profile's region then applies).
func RegionOfHost(host string) string {
	if m := executeAPIHost.FindStringSubmatch(host); m != nil {
		return m[1]
	}
	return ""
}
