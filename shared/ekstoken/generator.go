package ekstoken

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Generator makes tokens with the credentials of an aws.Config. Making one signs locally: it calls
// no AWS API, though fetching the credentials may (an SDK credential cache makes that rare).
type Generator struct {
	creds   aws.CredentialsProvider
	presign *sts.PresignClient
}

// NewGenerator returns a Generator signing with cfg's credentials. stsEndpoint, when not empty,
// replaces STS's regional endpoint in the URLs it signs; EKS accepts only AWS's own STS hosts, so
// that is for stand-ins only.
func NewGenerator(cfg aws.Config, stsEndpoint string) *Generator {
	client := sts.NewFromConfig(cfg, func(o *sts.Options) {
		if stsEndpoint != "" {
			o.BaseEndpoint = aws.String(stsEndpoint)
		}
	})
	return &Generator{creds: cfg.Credentials, presign: sts.NewPresignClient(client)}
}

// Token makes a token for the EKS cluster named cluster in region. The URL it carries is for the
// regional STS endpoint of that region, the one EKS's authenticator replays it against.
func (g *Generator) Token(ctx context.Context, region, cluster string) (Token, error) {
	if region == "" || cluster == "" {
		return Token{}, errors.New("making an EKS token needs a region and a cluster name")
	}
	if g.creds == nil {
		return Token{}, errors.New("making an EKS token needs AWS credentials")
	}
	// Retrieved here, and handed to the presigner as they are, so the expiry below is that of the
	// credentials that signed.
	creds, err := g.creds.Retrieve(ctx)
	if err != nil {
		return Token{}, fmt.Errorf("getting AWS credentials to sign a token for cluster %s in %s: %w", cluster, region, err)
	}
	req, err := g.presign.PresignGetCallerIdentity(ctx, &sts.GetCallerIdentityInput{}, func(po *sts.PresignOptions) {
		po.ClientOptions = append(po.ClientOptions, func(o *sts.Options) {
			o.Region = region
			o.Credentials = credentials.StaticCredentialsProvider{Value: creds}
			o.APIOptions = append(o.APIOptions,
				smithyhttp.SetHeaderValue(clusterHeader, cluster),
				addPresignExpires)
		})
	})
	if err != nil {
		return Token{}, fmt.Errorf("presigning GetCallerIdentity for cluster %s in %s: %w", cluster, region, err)
	}
	if req.Method != http.MethodGet {
		// The authenticator replays the URL as a GET; anything else would not verify.
		return Token{}, fmt.Errorf("presigning GetCallerIdentity for cluster %s in %s: got a %s request, want GET", cluster, region, req.Method)
	}
	value, err := encode(req.URL)
	if err != nil {
		return Token{}, fmt.Errorf("making a token for cluster %s in %s: %w", cluster, region, err)
	}
	expires, err := expiry(req.URL, creds)
	if err != nil {
		return Token{}, fmt.Errorf("making a token for cluster %s in %s: %w", cluster, region, err)
	}
	return Token{Value: value, Expires: expires}, nil
}

// addPresignExpires puts X-Amz-Expires in the query before the request is signed, so the signature
// covers it. SDK v2's SigV4 presigner leaves that parameter to the caller.
func addPresignExpires(stack *middleware.Stack) error {
	return stack.Build.Add(middleware.BuildMiddlewareFunc("ekstokenPresignExpires",
		func(ctx context.Context, in middleware.BuildInput, next middleware.BuildHandler) (middleware.BuildOutput, middleware.Metadata, error) {
			req, ok := in.Request.(*smithyhttp.Request)
			if !ok {
				return middleware.BuildOutput{}, middleware.Metadata{}, fmt.Errorf("presigning: unexpected request type %T", in.Request)
			}
			q := req.URL.Query()
			q.Set("X-Amz-Expires", presignExpires)
			req.URL.RawQuery = q.Encode()
			return next.HandleBuild(ctx, in)
		}), middleware.After)
}
