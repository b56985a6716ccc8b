// Package ekstoken makes bearer tokens for EKS clusters in the aws-iam-authenticator format.
//
// A token is "k8s-aws-v1." followed by the unpadded base64url encoding of a presigned STS
// GetCallerIdentity URL whose signature covers an "x-k8s-aws-id: <cluster name>" header. The
// cluster's authenticator replays the URL against STS with that header set to its own name, so a
// token proves who signed it and which cluster it was made for, and nothing else.
package ekstoken

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Token is a bearer token for one cluster and the time after which it should no longer be sent.
type Token struct {
	// Value goes in the Authorization header as "Bearer <Value>".
	Value string
	// Expires is when a caller should have a new token: a minute before EKS stops accepting this one.
	Expires time.Time
}

const (
	// prefix marks version 1 of the aws-iam-authenticator token format.
	prefix = "k8s-aws-v1."
	// clusterHeader is the signed header that binds a token to one cluster.
	clusterHeader = "x-k8s-aws-id"
	// presignExpires is the X-Amz-Expires the authenticator's own generator sends. STS ignores it
	// for GetCallerIdentity (a presigned URL is good for 15 minutes after X-Amz-Date whatever it
	// says), but authenticators up to v0.3.0 reject a value above 60, and later ones one above 900.
	presignExpires = "60"
	// accepted is how long the authenticator accepts a token after its X-Amz-Date.
	accepted = 15 * time.Minute
	// refreshMargin is how much sooner than that we call a token expired: a request sent just
	// before the deadline must still be authenticated when it arrives, and the clock the
	// authenticator checks against is not ours. The authenticator's own generator uses a minute too.
	refreshMargin = time.Minute
	// maxLen is the longest token the authenticator accepts (its maxTokenLenBytes).
	maxLen = 4 << 10
	// amzDate is the layout of X-Amz-Date.
	amzDate = "20060102T150405Z"
)

// ErrTooLong means the signed URL encodes to a token longer than the authenticator accepts; a very
// long session token in the credentials is the usual cause.
var ErrTooLong = errors.New("token is longer than the 4 KiB EKS accepts")

// encode turns a presigned GetCallerIdentity URL into a bearer token value.
func encode(presignedURL string) (string, error) {
	v := prefix + base64.RawURLEncoding.EncodeToString([]byte(presignedURL))
	if len(v) > maxLen {
		return "", fmt.Errorf("encoding a %d-byte presigned URL: %w", len(presignedURL), ErrTooLong)
	}
	return v, nil
}

// expiry is when a token made from presignedURL with creds should be replaced: refreshMargin before
// the end of the 15 minutes EKS accepts it, counted from the signing time the URL carries, or when
// creds expire if that is sooner, since STS refuses a URL signed with expired credentials.
func expiry(presignedURL string, creds aws.Credentials) (time.Time, error) {
	u, err := url.Parse(presignedURL)
	if err != nil {
		return time.Time{}, fmt.Errorf("reading the presigned URL: %w", err)
	}
	date := u.Query().Get("X-Amz-Date")
	if date == "" {
		return time.Time{}, errors.New("the presigned URL has no X-Amz-Date")
	}
	signed, err := time.Parse(amzDate, date)
	if err != nil {
		return time.Time{}, fmt.Errorf("reading X-Amz-Date %q: %w", date, err)
	}
	t := signed.Add(accepted - refreshMargin)
	if creds.CanExpire && creds.Expires.Before(t) {
		t = creds.Expires
	}
	return t, nil
}
