package kube

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"
	"k8s.io/client-go/rest"

	"github.com/tidegate/tidegate/shared/ekstoken"
)

// clusterDescriber is the one EKS call Clusters makes.
type clusterDescriber interface {
	DescribeCluster(ctx context.Context, in *eks.DescribeClusterInput, optFns ...func(*eks.Options)) (*eks.DescribeClusterOutput, error)
}

var _ clusterDescriber = (*eks.Client)(nil)

// tokenMaker makes bearer tokens for an EKS cluster.
type tokenMaker interface {
	Token(ctx context.Context, region, cluster string) (ekstoken.Token, error)
}

var _ tokenMaker = (*ekstoken.Generator)(nil)

// reachEKS describes the EKS cluster name in region and makes a client for it that authenticates
// with tokens from c.tokens.
func (c *Clusters) reachEKS(ctx context.Context, region, name string) (*cluster, error) {
	out, err := c.describe.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(name)}, func(o *eks.Options) {
		o.Region = region
	})
	if err != nil {
		return nil, fmt.Errorf("describing EKS cluster %s in %s: %w", name, region, err)
	}
	endpoint, ca, err := endpointAndCA(out.Cluster)
	if err != nil {
		return nil, fmt.Errorf("describing EKS cluster %s in %s: %w", name, region, err)
	}
	tokens := newTokenSource(func(ctx context.Context) (ekstoken.Token, error) {
		return c.tokens.Token(ctx, region, name)
	}, c.now)
	rc := &rest.Config{
		Host:            endpoint,
		TLSClientConfig: rest.TLSClientConfig{CAData: ca},
		// The wrapper sits next to the wire, under client-go's own retries, so every attempt
		// carries the current token.
		WrapTransport: func(next http.RoundTripper) http.RoundTripper {
			return &bearer{next: next, tokens: tokens}
		},
	}
	return newCluster(rc)
}

// endpointAndCA reads the API server's URL and its CA bundle (PEM) from what DescribeCluster said.
// A cluster still being created has neither yet.
func endpointAndCA(cl *types.Cluster) (endpoint string, caPEM []byte, err error) {
	if cl == nil {
		return "", nil, errors.New("the answer names no cluster")
	}
	endpoint = aws.ToString(cl.Endpoint)
	var data string
	if cl.CertificateAuthority != nil {
		data = aws.ToString(cl.CertificateAuthority.Data)
	}
	if endpoint == "" || data == "" {
		return "", nil, fmt.Errorf("cluster is %s and has no endpoint or certificate authority yet", cl.Status)
	}
	// EKS gives the PEM bundle base64-encoded, as a kubeconfig's certificate-authority-data holds it.
	caPEM, err = base64.StdEncoding.DecodeString(data)
	if err != nil {
		return "", nil, fmt.Errorf("decoding the certificate authority data: %w", err)
	}
	return endpoint, caPEM, nil
}
