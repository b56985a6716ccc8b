package secretbox

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func mustBox(t *testing.T, primary []byte, older ...[]byte) *Box {
	t.Helper()
	b, err := New(primary, older...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return b
}

func TestSealOpen(t *testing.T) {
	b := mustBox(t, bytes.Repeat([]byte{1}, KeySize))
	const value = "sk-live-0123456789 'quoted' $HOME\nsecond line"
	sealed, err := b.Seal(value, "acme/API_KEY")
	if err != nil {
		t.Fatalf("Seal: %v", err)
	}
	if strings.Contains(sealed, "sk-live") || !strings.HasPrefix(sealed, "tgs1."+KeyID(bytes.Repeat([]byte{1}, KeySize))+".") {
		t.Errorf("Seal = %q, want tgs1.<key id>.<ciphertext> with nothing of the value", sealed)
	}
	again, _ := b.Seal(value, "acme/API_KEY")
	if again == sealed {
		t.Errorf("two Seals of one value are equal; want a fresh nonce each time")
	}
	if got, err := b.Open(sealed, "acme/API_KEY"); err != nil || got != value {
		t.Errorf("Open(Seal(v)) = %q, %v; want the value", got, err)
	}
	tampered := []byte(sealed)
	tampered[len(tampered)-3] ^= 1
	for name, tt := range map[string]struct{ sealed, binding string }{
		"another binding": {sealed, "other/API_KEY"},
		"altered":         {string(tampered), "acme/API_KEY"},
		"not sealed":      {"plain", "acme/API_KEY"},
		"bad base64":      {"tgs1." + KeyID(bytes.Repeat([]byte{1}, KeySize)) + ".!!!", "acme/API_KEY"},
		"too short":       {"tgs1." + KeyID(bytes.Repeat([]byte{1}, KeySize)) + ".AAAA", "acme/API_KEY"},
	} {
		if got, err := b.Open(tt.sealed, tt.binding); !errors.Is(err, ErrOpen) {
			t.Errorf("Open(%s) = %q, %v; want ErrOpen", name, got, err)
		}
	}
}

func TestSealedKeyID(t *testing.T) {
	k := bytes.Repeat([]byte{3}, KeySize)
	sealed, _ := mustBox(t, k).Seal("v", "b")
	if got, err := SealedKeyID(sealed); err != nil || got != KeyID(k) {
		t.Errorf("SealedKeyID(Seal under k) = %q, %v; want %s", got, err, KeyID(k))
	}
	for _, bad := range []string{"", "plain", "tgs1.abc.xyz", "tgs2." + KeyID(k) + ".xyz", "tgs1." + KeyID(k)} {
		if got, err := SealedKeyID(bad); !errors.Is(err, ErrOpen) {
			t.Errorf("SealedKeyID(%q) = %q, %v; want ErrOpen", bad, got, err)
		}
	}
}

func TestRotation(t *testing.T) {
	oldKey, newKey := bytes.Repeat([]byte{1}, KeySize), bytes.Repeat([]byte{2}, KeySize)
	sealedOld, _ := mustBox(t, oldKey).Seal("v", "b")
	rotated := mustBox(t, newKey, oldKey)
	if got, err := rotated.Open(sealedOld, "b"); err != nil || got != "v" {
		t.Errorf("a box with the old key among its older keys: Open = %q, %v; want v", got, err)
	}
	sealedNew, _ := rotated.Seal("v", "b")
	if !strings.Contains(sealedNew, KeyID(newKey)) {
		t.Errorf("the rotated box sealed %q, want it under the new key %s", sealedNew, KeyID(newKey))
	}
	if _, err := mustBox(t, oldKey).Open(sealedNew, "b"); !errors.Is(err, ErrOpen) || !strings.Contains(err.Error(), KeyID(newKey)) {
		t.Errorf("the old box opening a new value = %v, want ErrOpen naming key %s", err, KeyID(newKey))
	}
	if _, err := New(make([]byte, 16)); err == nil {
		t.Errorf("New(16-byte key) accepted it")
	}
}

func TestFingerprint(t *testing.T) {
	k := bytes.Repeat([]byte{7}, KeySize)
	fp := Fingerprint(k, "API_KEY", "v1")
	if fp != Fingerprint(k, "API_KEY", "v1") || len(fp) != 64 {
		t.Errorf("Fingerprint = %q, want 64 hex, stable", fp)
	}
	for name, other := range map[string]string{
		"another value":      Fingerprint(k, "API_KEY", "v2"),
		"another name":       Fingerprint(k, "API_KEY2", "v1"),
		"name and value run": Fingerprint(k, "API_KEYv", "1"),
		"another key":        Fingerprint(bytes.Repeat([]byte{8}, KeySize), "API_KEY", "v1"),
	} {
		if other == fp {
			t.Errorf("Fingerprint with %s = the same %q", name, fp)
		}
	}
	if got := mustBox(t, k).Fingerprint("API_KEY", "v1"); got != fp {
		t.Errorf("Box.Fingerprint = %q, want the primary key's %q", got, fp)
	}
}

func TestKeyFromSetting(t *testing.T) {
	raw := bytes.Repeat([]byte{9}, KeySize)
	if got, err := KeyFromSetting(base64.StdEncoding.EncodeToString(raw) + "\n"); err != nil || !bytes.Equal(got, raw) {
		t.Errorf("KeyFromSetting(base64 of 32 bytes) = %x, %v; want those bytes", got, err)
	}
	generated := "Zq8vR2mXc4TnB7wLp1sKd9HfJ0gYe5Ua"
	got, err := KeyFromSetting(generated)
	if err != nil || len(got) != KeySize {
		t.Errorf("KeyFromSetting(a generated 32-character string) = %x, %v; want its SHA-256", got, err)
	}
	for _, bad := range []string{"", "short", base64.StdEncoding.EncodeToString(make([]byte, 16))} {
		if _, err := KeyFromSetting(bad); err == nil || !strings.Contains(err.Error(), "openssl rand -base64 32") {
			t.Errorf("KeyFromSetting(%q) = %v, want an error that says how to make a key", bad, err)
		}
	}
	if a, b := NewKey(), NewKey(); len(a) != KeySize || bytes.Equal(a, b) {
		t.Errorf("NewKey = %x then %x, want two different %d-byte keys", a, b, KeySize)
	}
}
