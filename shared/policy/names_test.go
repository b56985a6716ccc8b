package policy

import (
	"strings"
	"testing"
)

// formats are the rules names.go scans for, by name.
var formats = map[string]format{
	"DNS subdomain name": dnsSubdomainName,
	"DNS label name":     dnsLabelName,
	"DNS label":          dnsLabelValue,
	"label key":          labelKey,
	"label value":        labelValue,
	"port name":          portName,
	"env name":           envName,
	"data key":           configKey,
}

// FuzzFormatsAgreeWithUpstream holds each scan to apimachinery's function for its rule: a scan
// that admitted what the function refuses would let through what the API server refuses, and one
// that refused what the function admits would only cost the function's time (the function
// decides), so both ways are held.
func FuzzFormatsAgreeWithUpstream(f *testing.F) {
	for _, s := range []string{
		"", "a", "A", "0", "-", ".", "_", "a-b", "a--b", "-a", "a-", "a.b", "a..b", "a.-b", "a-.b", ".a", "a.",
		"my_name", "My.Name", "example.com/name", "Example.com/Name", "/name", "example.com/", "a/b/c",
		"http", "http-alt", "8080", "a23456789012345", "a234567890123456", "9-a",
		"MY_VAR", "1.my env-name!~", "A=B", "CAFÉ", "a\tb", "\x7f", " ",
		"config.yaml", ".env", "..env", "..", "a..b", "my key",
		strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 253), strings.Repeat("a", 254),
		strings.Repeat("a", 63) + "." + strings.Repeat("a", 63), strings.Repeat("a.", 126) + "a",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, fm := range formats {
			if got, want := fm.valid(s), len(fm.upstream(s)) == 0; got != want {
				t.Errorf("%s: scan(%q) = %t, apimachinery says %t: %q", name, s, got, want, fm.upstream(s))
			}
		}
	})
}

// A generateName is held to its kind's rule with a trailing dash allowed, as apimachinery's
// prefix validation does.
func TestFormatPrefix(t *testing.T) {
	for _, tt := range []struct {
		f      format
		prefix string
		ok     bool
	}{
		{dnsSubdomainName, "web-", true},
		{dnsSubdomainName, "web.v1-", true},
		{dnsSubdomainName, "-", false},
		{dnsSubdomainName, "web_", false},
		{dnsLabelName, "web-", true},
		{dnsLabelName, "web.v1-", false},
	} {
		if got := tt.f.prefix(tt.prefix) == ""; got != tt.ok {
			t.Errorf("prefix(%q) accepted = %t, want %t", tt.prefix, got, tt.ok)
		}
	}
}
