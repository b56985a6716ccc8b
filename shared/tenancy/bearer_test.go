package tenancy

import "testing"

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
