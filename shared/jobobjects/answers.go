package jobobjects

import (
	"errors"
	"regexp"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// ErrNotApplicable is a manifest of a kind Tidegate has no resource for: no retry applies it.
var ErrNotApplicable = errors.New("cannot be applied by Tidegate")

// Final reports whether err, an apply's error, is an answer that retrying cannot change: the
// server found the object invalid or the request bad, refused it (Forbidden), has no such
// namespace or kind (NotFound), or does not allow the verb; or the name is another's, or the kind
// is not one Tidegate applies. Anything else (throttling, a server error, a timeout, a refused
// connection) may pass on a later try.
func Final(err error) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, ErrNameCollision), errors.Is(err, ErrNotApplicable):
		return true
	}
	return apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsForbidden(err) ||
		apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) || apierrors.IsNotAcceptable(err) ||
		apierrors.IsUnsupportedMediaType(err) || apierrors.IsRequestEntityTooLargeError(err)
}

// What Redact takes out of a cluster's message: it may name the identity Tidegate reaches the
// cluster as (an IAM role's ARN, an account, a user) and where the cluster is.
var (
	redactUser    = regexp.MustCompile(`User "[^"]*"`)
	redactARN     = regexp.MustCompile(`arn:aws[a-zA-Z-]*:[^\s"',;]*`)
	redactURL     = regexp.MustCompile(`[a-z][a-z0-9+.-]*://[^\s"',;]+`)
	redactIP      = regexp.MustCompile(`\b(\d{1,3}\.){3}\d{1,3}(:\d+)?\b|\[[0-9a-fA-F:]+\](:\d+)?`)
	redactHost    = regexp.MustCompile(`\b[a-zA-Z0-9-]+(\.[a-zA-Z0-9-]+)*\.(amazonaws\.com|eks\.amazonaws\.com|internal|local|cluster\.local)(:\d+)?\b`)
	redactAccount = regexp.MustCompile(`\b\d{12}\b`)
)

// maxMessage bounds a message kept on a job's record.
const maxMessage = 1000

// Redact is a cluster's message fit for a tenant's eyes: without the identity Tidegate acts as
// (user names, ARNs, account ids) or the cluster's addresses (URLs, hosts, IPs), and at most
// maxMessage bytes.
func Redact(msg string) string {
	msg = redactUser.ReplaceAllString(msg, `Tidegate`)
	msg = redactARN.ReplaceAllString(msg, "[identity]")
	msg = redactURL.ReplaceAllString(msg, "[cluster]")
	msg = redactHost.ReplaceAllString(msg, "[cluster]")
	msg = redactIP.ReplaceAllString(msg, "[address]")
	msg = redactAccount.ReplaceAllString(msg, "[account]")
	if len(msg) > maxMessage {
		msg = strings.ToValidUTF8(msg[:maxMessage], "") + "…"
	}
	return msg
}
