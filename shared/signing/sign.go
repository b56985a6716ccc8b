// Package signing signs and verifies webhook deliveries by the Standard Webhooks scheme: headers
// webhook-id, webhook-timestamp and webhook-signature, the signature an HMAC-SHA256 over
// "{id}.{timestamp}.{body}". Numbers in, bytes out: nothing here sends anything.
package signing

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
	"time"
)

// The headers of a signed delivery.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// secretPrefix marks a secret in the Standard Webhooks format: whsec_ then base64 of the key.
const secretPrefix = "whsec_"

// Key sizes the spec recommends: at least 24 bytes, at most 64.
const (
	minKeyBytes = 24
	maxKeyBytes = 64
	newKeyBytes = 32
)

// Secret is a signing key.
type Secret []byte

// ParseSecret reads a secret with or without its whsec_ prefix.
func ParseSecret(s string) (Secret, error) {
	raw := strings.TrimPrefix(s, secretPrefix)
	key, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		return nil, fmt.Errorf("a webhook secret is whsec_ followed by base64: %w", err)
	}
	if len(key) < minKeyBytes || len(key) > maxKeyBytes {
		return nil, fmt.Errorf("a webhook secret holds %d to %d random bytes, not %d", minKeyBytes, maxKeyBytes, len(key))
	}
	return key, nil
}

// NewSecret makes a fresh random secret.
func NewSecret() (Secret, error) {
	key := make([]byte, newKeyBytes)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("reading randomness for a webhook secret: %w", err)
	}
	return key, nil
}

// String is the secret as the spec writes it, to show its owner once.
func (s Secret) String() string { return secretPrefix + base64.StdEncoding.EncodeToString(s) }

// Signer signs with one or more secrets: during a rotation both the old and the new sign, so a
// receiver that knows either accepts the delivery.
type Signer struct {
	macs []hash.Hash
	// Scratch space reused across calls, so a signature costs one allocation: its string.
	prefix, sum, out []byte
}

// NewSigner returns a signer for secrets, in the order their signatures appear.
func NewSigner(secrets ...Secret) *Signer {
	s := &Signer{}
	for _, k := range secrets {
		s.macs = append(s.macs, hmac.New(sha256.New, k))
	}
	return s
}

// Signature is the webhook-signature header for one attempt: a "v1,<base64>" entry per secret,
// separated by spaces. A Signer is not safe for concurrent use.
func (s *Signer) Signature(id string, at time.Time, body []byte) string {
	s.prefix = append(append(s.prefix[:0], id...), '.')
	s.prefix = append(strconv.AppendInt(s.prefix, at.Unix(), 10), '.')
	s.out = s.out[:0]
	for i, mac := range s.macs {
		if i > 0 {
			s.out = append(s.out, ' ')
		}
		mac.Reset()
		mac.Write(s.prefix)
		mac.Write(body)
		s.sum = mac.Sum(s.sum[:0])
		s.out = base64.StdEncoding.AppendEncode(append(s.out, "v1,"...), s.sum)
	}
	return string(s.out)
}

// digest is the HMAC of "{id}.{timestamp}.{body}".
func digest(mac hash.Hash, id, ts string, body []byte) []byte {
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	return mac.Sum(nil)
}

// Tolerance is how far a delivery's timestamp may be from the receiver's clock, either way: the
// spec's five minutes, which bounds how long a captured delivery can be replayed.
const Tolerance = 5 * time.Minute

// Errors Verify answers, so a receiver can say which.
var (
	ErrMissingHeader = errors.New("a webhook header is missing")
	ErrBadTimestamp  = errors.New("the webhook timestamp is not a number of seconds")
	ErrTooOld        = errors.New("the webhook timestamp is too old")
	ErrTooNew        = errors.New("the webhook timestamp is in the future")
	ErrNoMatch       = errors.New("no webhook signature matches")
)

// Verify checks a delivery as a receiver would: the three headers present, the timestamp within
// Tolerance of now, and at least one v1 signature in the header matching one of the secrets
// (compared in constant time). Entries of other versions are ignored.
func Verify(secrets []Secret, id, timestamp, signature string, body []byte, now time.Time) error {
	if id == "" || timestamp == "" || signature == "" {
		return ErrMissingHeader
	}
	sec, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return ErrBadTimestamp
	}
	at := time.Unix(sec, 0)
	switch {
	case now.Sub(at) > Tolerance:
		return ErrTooOld
	case at.Sub(now) > Tolerance:
		return ErrTooNew
	}
	for _, k := range secrets {
		want := digest(hmac.New(sha256.New, k), id, timestamp, body)
		for entry := range strings.FieldsSeq(signature) {
			version, sig, ok := strings.Cut(entry, ",")
			if !ok || version != "v1" {
				continue
			}
			got, err := base64.StdEncoding.DecodeString(sig)
			if err == nil && hmac.Equal(got, want) {
				return nil
			}
		}
	}
	return ErrNoMatch
}
