package httpapi

import (
	"strconv"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/tenancy"
)

// TestPrincipalCacheBound: a full cache makes room by dropping what has expired first, and
// otherwise an eighth of its entries, never growing past maxCachedPrincipals.
func TestPrincipalCacheBound(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := NewPrincipalCache(nil, nil)
	p := tenancy.Principal{Subject: "key:x"}
	for i := range maxCachedPrincipals {
		at := start
		if i%2 == 0 {
			at = start.Add(-PrincipalTTL) // expired by start
		}
		c.put("old"+strconv.Itoa(i), p, at)
	}
	c.put("new", p, start)
	if got, want := len(c.entries), maxCachedPrincipals/2+1; got != want {
		t.Errorf("after one more put into a full cache, half expired: %d entries, want %d (the live half and the new one)", got, want)
	}
	for i := range maxCachedPrincipals {
		c.put("fresh"+strconv.Itoa(i), p, start)
	}
	if got, least := len(c.entries), maxCachedPrincipals-maxCachedPrincipals/8; got > maxCachedPrincipals || got < least {
		t.Errorf("after filling with live entries: %d entries, want from %d to the bound %d", got, least, maxCachedPrincipals)
	}
	if _, ok := c.entries["fresh"+strconv.Itoa(maxCachedPrincipals-1)]; !ok {
		t.Error("the last entry put into a full cache is missing")
	}
}
