package ekstoken

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

func TestEncode(t *testing.T) {
	const u = "https://sts.eu-west-1.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15&X-Amz-Date=20260101T000000Z"
	got, err := encode(u)
	if err != nil {
		t.Fatalf("encode(%q): %v", u, err)
	}
	if !strings.HasPrefix(got, "k8s-aws-v1.") {
		t.Errorf("encode(%q) = %q, want the k8s-aws-v1. prefix", u, got)
	}
	if strings.ContainsAny(got, "=+/") {
		t.Errorf("encode(%q) = %q, want unpadded base64url", u, got)
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(got, "k8s-aws-v1."))
	if err != nil || string(raw) != u {
		t.Errorf("encode(%q) decodes to %q (%v), want the URL back", u, raw, err)
	}
}

func TestEncodeTooLong(t *testing.T) {
	// base64 makes 4 bytes of 3, so a 3 KiB session token alone encodes to the whole 4 KiB.
	long := "https://sts.us-east-1.amazonaws.com/?X-Amz-Security-Token=" + strings.Repeat("a", 3*1024)
	if _, err := encode(long); !errors.Is(err, ErrTooLong) {
		t.Errorf("encode(a %d-byte URL) error = %v, want ErrTooLong", len(long), err)
	}
}

func TestExpiry(t *testing.T) {
	signed := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	const signedURL = "https://sts.us-east-1.amazonaws.com/?X-Amz-Date=20260304T050607Z"
	lasting := aws.Credentials{AccessKeyID: "AKID"}
	expiring := func(at time.Time) aws.Credentials {
		return aws.Credentials{AccessKeyID: "AKID", CanExpire: true, Expires: at}
	}
	tests := []struct {
		name    string
		url     string
		creds   aws.Credentials
		want    time.Time
		wantErr bool
	}{
		{"fourteen minutes after signing", signedURL, lasting, signed.Add(14 * time.Minute), false},
		{"credentials outlast the token", signedURL, expiring(signed.Add(time.Hour)), signed.Add(14 * time.Minute), false},
		{"credentials expire first", signedURL, expiring(signed.Add(5 * time.Minute)), signed.Add(5 * time.Minute), false},
		{"no date", "https://sts.us-east-1.amazonaws.com/?Action=GetCallerIdentity", lasting, time.Time{}, true},
		{"malformed date", "https://sts.us-east-1.amazonaws.com/?X-Amz-Date=2026-03-04", lasting, time.Time{}, true},
		{"not a URL", "https://sts.us-east-1.amazonaws.com/%zz", lasting, time.Time{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := expiry(tt.url, tt.creds)
			if (err != nil) != tt.wantErr {
				t.Fatalf("expiry(%q) error = %v, want error %v", tt.url, err, tt.wantErr)
			}
			if !got.Equal(tt.want) {
				t.Errorf("expiry(%q) = %v, want %v", tt.url, got, tt.want)
			}
		})
	}
}
