package httpapi

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/records"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// Principals resolves credentials to who they act for, and lists every tenant for the operator's
// queue stats; dynamo.TenantStore is the real one.
type Principals interface {
	ByKey(ctx context.Context, key string) (tenancy.Principal, error)
	ByIAM(ctx context.Context, arn string) (tenancy.Principal, error)
	Tenants(ctx context.Context) ([]tenancy.Tenant, error)
}

var _ Principals = (*dynamo.TenantStore)(nil)

// IAMCaller extracts the IAM caller's ARN that API Gateway authenticated, if any. Lambda wires one
// that reads the request context; `tidegate dev` has none.
type IAMCaller func(r *http.Request) (arn string, ok bool)

// access is what a route needs of its caller.
type access int

const (
	accessRead   access = iota // any role
	accessWrite                // admin, deployer or member
	accessDeploy               // admin or deployer: an app's code and output can reach its org's secrets
)

// authed wraps h so that it runs only for a known principal within its tenant's request budget
// and with the access it needs, found in the request's context by principalOf.
func (a *api) authed(need access, h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, err := a.authenticate(r)
		if err != nil {
			return err
		}
		if err := a.throttle(w, r, p); err != nil {
			return err
		}
		if need == accessWrite && !p.Tenant.Role.CanWrite() {
			return Errorf(CodeForbidden, detailReadOnly, p.Tenant.Role)
		}
		if need == accessDeploy && !p.Tenant.Role.CanDeploy() {
			return Errorf(CodeForbidden, detailNotDeployer, p.Tenant.Role)
		}
		ctx := context.WithValue(r.Context(), keyPrincipal, p)
		if need != accessRead && a.audit != nil {
			// Every change a principal may make (every route that needs more than reading) is
			// audited; reads and dry runs are not.
			return a.audited(w, r.WithContext(ctx), p, h)
		}
		return h(w, r.WithContext(ctx))
	}
}

func (a *api) authenticate(r *http.Request) (tenancy.Principal, error) {
	if arn, ok := a.iamCaller(r); ok {
		p, err := a.principals.ByIAM(r.Context(), arn)
		if errors.Is(err, records.ErrNotFound) {
			return p, Errorf(CodeForbidden, detailIAMUnknown, arn)
		}
		if err != nil {
			return p, fmt.Errorf("resolving IAM caller: %w", err)
		}
		return p, nil
	}
	key, ok := tenancy.BearerKey(r.Header.Get("Authorization"))
	if !ok {
		return tenancy.Principal{}, Errorf(CodeUnauthenticated, detailNoCredentials)
	}
	// A key with Tidegate's prefix that is no form Tidegate makes (a checksum that does not match,
	// a wrong length or alphabet: tenancy.RefuseUnread) is refused before any read, with the
	// answer an unknown key gets. In AWS the key authorizer has refused it already; `tidegate dev`
	// has no authorizer, and the principal cache keeps no refusals, so each made-up key would
	// otherwise cost a read. A legacy key (made before checksums) and a key without the prefix (a
	// dev stack's operator may choose its own with --api-key) are looked up.
	if tenancy.RefuseUnread(key) {
		return tenancy.Principal{}, Errorf(CodeUnauthenticated, detailBadKey)
	}
	p, err := a.principals.ByKey(r.Context(), key)
	if errors.Is(err, records.ErrNotFound) {
		return p, Errorf(CodeUnauthenticated, detailBadKey)
	}
	if err != nil {
		return p, fmt.Errorf("resolving API key: %w", err)
	}
	return p, nil
}

// principalOf is the caller of an authed route.
func principalOf(ctx context.Context) tenancy.Principal {
	p, _ := ctx.Value(keyPrincipal).(tenancy.Principal)
	return p
}

// PrincipalTTL is how long a resolved credential is trusted without asking the store again. A
// key revoked, or a tenant's role or namespaces changed, takes effect within it; in exchange a
// client submitting a job a second reads its key and its tenant once in thirty requests instead
// of on every one (two consistent GetItems, the larger part of a submission's own cost).
const PrincipalTTL = 30 * time.Second

// maxCachedPrincipals bounds a PrincipalCache: more credentials than one API process serves in
// PrincipalTTL (a few per tenant), and at about half a kilobyte an entry, 2 MiB at most.
const maxCachedPrincipals = 4096

// PrincipalCache remembers, in this process, which principal each credential resolved to, for
// PrincipalTTL. Only answers are kept: an unknown key or IAM caller, or a store error, asks the
// store again on the next request, so a key works the moment it is created. An API key is kept
// under its SHA-256, never in plain text. It is safe for concurrent use.
type PrincipalCache struct {
	next Principals
	now  func() time.Time

	mu      sync.Mutex
	entries map[string]cachedPrincipal
}

type cachedPrincipal struct {
	p       tenancy.Principal
	expires time.Time
}

var _ Principals = (*PrincipalCache)(nil)

// NewPrincipalCache caches what next answers; now is the clock, nil for time.Now.
func NewPrincipalCache(next Principals, now func() time.Time) *PrincipalCache {
	if now == nil {
		now = time.Now
	}
	return &PrincipalCache{next: next, now: now, entries: make(map[string]cachedPrincipal)}
}

// ByKey resolves an API key, from the cache while its answer is fresh.
func (c *PrincipalCache) ByKey(ctx context.Context, key string) (tenancy.Principal, error) {
	sum := sha256.Sum256([]byte(key))
	return c.resolve("key:"+string(sum[:]), func() (tenancy.Principal, error) { return c.next.ByKey(ctx, key) })
}

// ByIAM resolves an IAM caller, from the cache while its answer is fresh.
func (c *PrincipalCache) ByIAM(ctx context.Context, arn string) (tenancy.Principal, error) {
	return c.resolve("iam:"+arn, func() (tenancy.Principal, error) { return c.next.ByIAM(ctx, arn) })
}

// Tenants lists every tenant from the store each time: the operator's view of the queue is rare, and
// a share changed by `tidegate admin tenants put` shows at once.
func (c *PrincipalCache) Tenants(ctx context.Context) ([]tenancy.Tenant, error) {
	return c.next.Tenants(ctx)
}

func (c *PrincipalCache) resolve(id string, lookup func() (tenancy.Principal, error)) (tenancy.Principal, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[id]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return clonePrincipal(e.p), nil
	}
	p, err := lookup()
	if err != nil {
		return p, err
	}
	c.put(id, p, now)
	return p, nil
}

// put keeps p under id until now+PrincipalTTL. When the cache is full it drops what has expired
// and then, if that freed less than an eighth, entries at random (the map's iteration order)
// until an eighth is free, so that the scan is paid once per many puts. An evicted credential
// costs one more lookup, never a wrong answer.
func (c *PrincipalCache) put(id string, p tenancy.Principal, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, present := c.entries[id]; !present && len(c.entries) >= maxCachedPrincipals {
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		for k := range c.entries {
			if len(c.entries) <= maxCachedPrincipals-maxCachedPrincipals/8 {
				break
			}
			delete(c.entries, k)
		}
	}
	c.entries[id] = cachedPrincipal{p: clonePrincipal(p), expires: now.Add(PrincipalTTL)}
}

// clonePrincipal copies p's namespaces, so that no request can change what the next one reads.
func clonePrincipal(p tenancy.Principal) tenancy.Principal {
	p.Tenant.Namespaces = slices.Clone(p.Tenant.Namespaces)
	return p
}
