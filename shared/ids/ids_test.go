package ids

import (
	"regexp"
	"testing"
	"time"
)

func TestNewSortsByTimeAndIsADNSLabel(t *testing.T) {
	dns := regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	prev := ""
	seen := map[string]bool{}
	for i := range 1000 {
		id := New("job-", t0.Add(time.Duration(i/10)*time.Millisecond))
		if len(id) != len("job-")+26 || !dns.MatchString(id) {
			t.Fatalf("New = %q, want job- and 26 DNS-label characters", id)
		}
		if i%10 == 0 && id <= prev {
			t.Errorf("New at a later millisecond = %q, not after %q", id, prev)
		}
		if seen[id] {
			t.Fatalf("New repeated %q", id)
		}
		seen[id], prev = true, id
	}
}
