package jobs

import "testing"

func TestParseStatusFilter(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Status
		ok   bool
	}{
		{"completed", StatusSucceeded, true},
		{"succeeded", StatusSucceeded, true},
		{"failed", StatusFailed, true},
		{"queued", StatusQueued, true},
		{"Completed", "", false},
		{"done", "", false},
		{"", "", false},
	} {
		got, ok := ParseStatusFilter(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseStatusFilter(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	if _, ok := ParseStatus("completed"); ok {
		t.Error(`ParseStatus("completed") is ok; records hold "succeeded" only`)
	}
}
