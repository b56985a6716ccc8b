package tenancy

import (
	"strings"
	"testing"
)

func TestBearerKey(t *testing.T) {
	tests := []struct {
		header, want string
		ok           bool
	}{
		{"Bearer tg_abc", "tg_abc", true},
		{"bearer tg_abc", "tg_abc", true},
		{"BEARER  tg_abc ", "tg_abc", true},
		{"", "", false},
		{"tg_abc", "", false},
		{"Bearer", "", false},
		{"Bearer   ", "", false},
		{"Basic dXNlcjpwYXNz", "", false},
		{"AWS4-HMAC-SHA256 Credential=AKID/20261201/us-east-1/execute-api/aws4_request, SignedHeaders=host;x-amz-date, Signature=ab12", "", false},
	}
	for _, tt := range tests {
		key, ok := BearerKey(tt.header)
		if key != tt.want || ok != tt.ok {
			t.Errorf("BearerKey(%q) = %q, %v; want %q, %v", tt.header, key, ok, tt.want, tt.ok)
		}
	}
}

// FuzzBearerKey: whatever a client sends as Authorization, a key read from it is the non-empty,
// trimmed rest of a header that names the Bearer scheme, and the same header always reads the
// same way.
func FuzzBearerKey(f *testing.F) {
	for _, s := range []string{"Bearer tg_abc", "bearer  tg_abc ", "Bearer", "Basic x", "AWS4-HMAC-SHA256 Credential=A/B", " Bearer x", "Bearer \t", "Bearer\ttg_abc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		key, ok := BearerKey(header)
		if !ok {
			if key != "" {
				t.Errorf("BearerKey(%q) = %q, false; a refusal reads no key", header, key)
			}
			return
		}
		if key == "" || key != strings.TrimSpace(key) || !strings.HasSuffix(strings.TrimSpace(header), key) {
			t.Errorf("BearerKey(%q) = %q; want the trimmed, non-empty rest of the header", header, key)
		}
		if len(header) < len("Bearer ") || !strings.EqualFold(header[:len("Bearer ")], "Bearer ") {
			t.Errorf("BearerKey(%q) = %q, true; the header does not start with the Bearer scheme", header, key)
		}
		if again, ok2 := BearerKey(header); again != key || !ok2 {
			t.Errorf("BearerKey(%q) answered %q then %q", header, key, again)
		}
	})
}
