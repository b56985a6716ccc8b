package dispatch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tidegate/tidegate/shared/records"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// quotaTTL is how long a drain trusts the quotas it read on a tenant's record: an admin's change
// reaches every warm dispatcher within it, as a changed key or role reaches the API
// (httpapi.PrincipalTTL). A busy region's drains then read no tenant at all.
const quotaTTL = 30 * time.Second

// quotaReads is how many tenant records a drain reads at once when its cache lacks them.
const quotaReads = 8

// quotaCache keeps tenants' quotas per process. Its zero value is ready.
type quotaCache struct {
	mu   sync.Mutex
	seen map[string]quotaEntry
}

type quotaEntry struct {
	quotas map[string]tenancy.Quota // nil for a tenant without a record (deleted since)
	within bool                     // its jobs may evict its own of lower priority
	held   bool                     // none of its jobs is dispatched (tenancy.Tenant.Held)
	at     time.Time
}

// quotasOf answers the quotas of each named tenant, from the cache while fresh, reading the others
// at most quotaReads at a time. A tenant without a record has none.
func (h *Handler) quotasOf(ctx context.Context, names []string) (map[string]map[string]tenancy.Quota, error) {
	now := h.now()
	out := make(map[string]map[string]tenancy.Quota, len(names))
	var missing []string
	c := &h.quotas
	c.mu.Lock()
	for _, name := range names {
		if e, ok := c.seen[name]; ok && now.Sub(e.at) < quotaTTL {
			out[name] = e.quotas
		} else {
			missing = append(missing, name)
		}
	}
	c.mu.Unlock()

	read := make([]quotaEntry, len(missing))
	errs := make([]error, len(missing))
	sem := make(chan struct{}, quotaReads)
	var wg sync.WaitGroup
	for i, name := range missing {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			t, err := h.Tenants.Tenant(ctx, name)
			switch {
			case errors.Is(err, records.ErrNotFound):
				read[i] = quotaEntry{at: now}
			case err != nil:
				errs[i] = fmt.Errorf("reading tenant %s's quotas: %w", name, err)
			default:
				read[i] = quotaEntry{quotas: t.Quotas, within: t.PreemptWithin == tenancy.PreemptLowerPriority, held: t.Held, at: now}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]quotaEntry{}
	}
	for i, name := range missing {
		c.seen[name] = read[i]
		out[name] = read[i].quotas
	}
	return out, nil
}

// withinTenants are those of names, as the cache last read them, whose jobs may evict their own of
// lower priority; quotasOf reads them first.
func (h *Handler) withinTenants(names []string) map[string]bool {
	c := &h.quotas
	c.mu.Lock()
	defer c.mu.Unlock()
	var out map[string]bool
	for _, name := range names {
		if c.seen[name].within {
			if out == nil {
				out = map[string]bool{}
			}
			out[name] = true
		}
	}
	return out
}

// heldTenants are those of names, as the cache last read them, that the operator holds;
// quotasOf reads them first.
func (h *Handler) heldTenants(names []string) map[string]bool {
	c := &h.quotas
	c.mu.Lock()
	defer c.mu.Unlock()
	var out map[string]bool
	for _, name := range names {
		if c.seen[name].held {
			if out == nil {
				out = map[string]bool{}
			}
			out[name] = true
		}
	}
	return out
}
