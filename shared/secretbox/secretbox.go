// Package secretbox provides the sealing of secret values with AES-256-GCM, under keys named in
// what they seal so that keys can rotate, and keyed fingerprints that change when a value does
// without revealing it.
package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// KeySize is AES-256's key length.
const KeySize = 32

// version prefixes every sealed value: "tgs1.<key id>.<base64url of nonce and ciphertext>". A new
// format gets a new version; a new key a new id.
const version = "tgs1"

// keyIDHex is how much of a key's fingerprint names it: 8 hex characters tell a handful of keys
// in rotation apart, and reveal nothing usable about the key.
const keyIDHex = 8

// ErrOpen is what Open answers for a value it cannot open: not sealed by this package, sealed
// under a key it does not hold, bound to something else, or altered.
var ErrOpen = errors.New("the sealed value does not open")

// Box seals with its primary key and opens with any of its keys.
type Box struct {
	primary *key
	keys    map[string]*key
}

type key struct {
	id   string
	aead cipher.AEAD
	raw  []byte
}

// New returns a box that seals with primary and also opens what older keys sealed. Every key is
// KeySize bytes.
func New(primary []byte, older ...[]byte) (*Box, error) {
	b := &Box{keys: map[string]*key{}}
	for i, raw := range append([][]byte{primary}, older...) {
		k, err := newKey(raw)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			b.primary = k
		}
		b.keys[k.id] = k
	}
	return b, nil
}

func newKey(raw []byte) (*key, error) {
	if len(raw) != KeySize {
		return nil, fmt.Errorf("a secrets key is %d bytes, not %d", KeySize, len(raw))
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, fmt.Errorf("making the cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("making the cipher: %w", err)
	}
	return &key{id: KeyID(raw), aead: aead, raw: append([]byte(nil), raw...)}, nil
}

// KeyID names a key in what it seals: the start of a keyed digest of the key, never the key.
func KeyID(raw []byte) string {
	m := hmac.New(sha256.New, raw)
	m.Write([]byte("tidegate secretbox key id"))
	return hex.EncodeToString(m.Sum(nil))[:keyIDHex]
}

// Seal encrypts value under the primary key with a fresh random nonce, bound to binding (say, the
// org and the secret's name): it opens only with the same binding.
func (b *Box) Seal(value, binding string) (string, error) {
	k := b.primary
	nonce := make([]byte, k.aead.NonceSize(), k.aead.NonceSize()+len(value)+k.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("reading a nonce: %w", err)
	}
	sealed := k.aead.Seal(nonce, nonce, []byte(value), []byte(binding))
	return version + "." + k.id + "." + base64.RawURLEncoding.EncodeToString(sealed), nil
}

// SealedKeyID answers the id of the key sealed was sealed under, as KeyID names it, so that a
// holder of many keys can find the one that opens it; ErrOpen when sealed is not a value Seal made.
func SealedKeyID(sealed string) (string, error) {
	parts := strings.Split(sealed, ".")
	if len(parts) != 3 || parts[0] != version || len(parts[1]) != keyIDHex {
		return "", fmt.Errorf("%w: not a %s value", ErrOpen, version)
	}
	return parts[1], nil
}

// Open decrypts what Seal made with binding; ErrOpen for anything else.
func (b *Box) Open(sealed, binding string) (string, error) {
	parts := strings.Split(sealed, ".")
	if len(parts) != 3 || parts[0] != version {
		return "", fmt.Errorf("%w: not a %s value", ErrOpen, version)
	}
	k, ok := b.keys[parts[1]]
	if !ok {
		return "", fmt.Errorf("%w: sealed under key %s, which this box does not hold", ErrOpen, parts[1])
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(raw) < k.aead.NonceSize() {
		return "", fmt.Errorf("%w: malformed", ErrOpen)
	}
	nonce, ct := raw[:k.aead.NonceSize()], raw[k.aead.NonceSize():]
	plain, err := k.aead.Open(nil, nonce, ct, []byte(binding))
	if err != nil {
		return "", fmt.Errorf("%w: altered, or bound to something else", ErrOpen)
	}
	return string(plain), nil
}

// Fingerprint is the primary key's Fingerprint of name and value.
func (b *Box) Fingerprint(name, value string) string { return Fingerprint(b.primary.raw, name, value) }

// Fingerprint is HMAC-SHA256 of a secret's name and value under a key derived from key: it changes
// when the value does, and without the key it tells nothing about the value.
func Fingerprint(key []byte, name, value string) string {
	m := hmac.New(sha256.New, fingerprintKey(key))
	m.Write([]byte(name))
	m.Write([]byte{0}) // names hold no NUL, so name and value cannot run into each other
	m.Write([]byte(value))
	return hex.EncodeToString(m.Sum(nil))
}

// fingerprintKey keeps the HMAC's key apart from the cipher's, though both come from one secret.
func fingerprintKey(key []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("tidegate secretbox fingerprint"))
	return m.Sum(nil)
}

// NewKey makes a random key, as `tidegate dev` does for each run.
func NewKey() []byte {
	k := make([]byte, KeySize)
	_, _ = rand.Read(k) // crypto/rand.Read never fails; it crashes the program instead
	return k
}

// minSettingLen is the shortest setting taken as a passphrase: as long as a key's base64, and what
// AWS Secrets Manager generates by default.
const minSettingLen = 32

// KeyFromSetting reads a key as it is configured: the base64 of KeySize bytes, or else a
// generated string of at least 32 characters (what Secrets Manager makes), whose SHA-256 is the key.
func KeyFromSetting(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if raw, err := base64.StdEncoding.DecodeString(s); err == nil && len(raw) == KeySize {
		return raw, nil
	}
	if len(s) < minSettingLen {
		return nil, fmt.Errorf("is neither the base64 of %d bytes nor a string of at least %d characters; make one with `openssl rand -base64 32`", KeySize, minSettingLen)
	}
	sum := sha256.Sum256([]byte(s))
	return sum[:], nil
}

// OrgOwner and TenantOwner name whose data key seals a value (shared/keyring): an org's app
// secrets, a tenant's webhook secrets. They live here, with the sealing, so that a store can name
// owners without linking the keyring and its KMS client.
func OrgOwner(name string) string    { return "org/" + name }
func TenantOwner(name string) string { return "tenant/" + name }
