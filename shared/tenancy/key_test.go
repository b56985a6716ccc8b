package tenancy

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestFormOf: a key NewKey makes is checked; one made before checksums (43 characters) is
// legacy; one with a character changed, cut short, lengthened, of another prefix or alphabet, or
// made up, is malformed, and can be refused without a read.
func TestFormOf(t *testing.T) {
	key, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	body := strings.TrimPrefix(key, keyPrefix)
	flip := []byte(body)
	flip[10] = map[bool]byte{true: 'B', false: 'A'}[flip[10] == 'A'] // one character of the randomness
	legacy := keyPrefix + base64.RawURLEncoding.EncodeToString(make([]byte, keyBytes))
	tests := []struct {
		name, key string
		want      KeyForm
	}{
		{"a new key", key, KeyChecked},
		{"a key made before checksums", legacy, KeyLegacy},
		{"one character changed", keyPrefix + string(flip), KeyMalformed},
		{"the checksum's last character changed", key[:len(key)-1] + map[bool]string{true: "B", false: "A"}[key[len(key)-1] == 'A'], KeyMalformed},
		{"cut short", key[:len(key)-2], KeyMalformed},
		{"a character more", key + "A", KeyMalformed},
		{"another prefix", "tk_" + body, KeyMalformed},
		{"not base64url", keyPrefix + strings.Repeat("!", len(body)), KeyMalformed},
		{"the key's hash", HashKey(key), KeyMalformed},
		{"empty", "", KeyMalformed},
	}
	for _, tt := range tests {
		if got := FormOf(tt.key); got != tt.want {
			t.Errorf("FormOf(%s) = %d, want %d", tt.name, got, tt.want)
		}
	}
	for range 200 {
		k, err := NewKey()
		if err != nil {
			t.Fatal(err)
		}
		if FormOf(k) != KeyChecked {
			t.Fatalf("FormOf(NewKey() = %s) = %d, want KeyChecked", k, FormOf(k))
		}
	}
}

// TestRefuseUnread: only a key with Tidegate's prefix and none of its forms is refused unread; a
// legacy key, a checked key and a key chosen without the prefix are left to be looked up.
func TestRefuseUnread(t *testing.T) {
	key, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	legacy := keyPrefix + base64.RawURLEncoding.EncodeToString(make([]byte, keyBytes))
	tests := []struct {
		name, key string
		want      bool
	}{
		{"a new key", key, false},
		{"a key made before checksums", legacy, false},
		{"a key chosen without the prefix", "bench", false},
		{"empty", "", false},
		{"the checksum's last character changed", key[:len(key)-1] + map[bool]string{true: "B", false: "A"}[key[len(key)-1] == 'A'], true},
		{"cut short", key[:len(key)-2], true},
		{"the prefix and a made-up name", keyPrefix + "cli_test_1", true},
		{"the prefix alone", keyPrefix, true},
	}
	for _, tt := range tests {
		if got := RefuseUnread(tt.key); got != tt.want {
			t.Errorf("RefuseUnread(%s) = %t, want %t", tt.name, got, tt.want)
		}
	}
}
