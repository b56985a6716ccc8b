package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// Principals resolves credentials to who they act for; dynamo.TenantStore is the real one.
type Principals interface {
	ByKey(ctx context.Context, key string) (tenancy.Principal, error)
	ByIAM(ctx context.Context, arn string) (tenancy.Principal, error)
}

var _ Principals = (*dynamo.TenantStore)(nil)

// IAMCaller extracts the IAM caller's ARN that API Gateway authenticated, if any. Lambda wires one
// that reads the request context; `tidegate dev` has none.
type IAMCaller func(r *http.Request) (arn string, ok bool)

// access is what a route needs of its caller.
type access int

const (
	accessRead  access = iota // any role
	accessWrite               // admin or member
)

// authed wraps h so that it runs only for a known principal with the access it needs, found in the
// request's context by principalOf.
func (a *api) authed(need access, h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, err := a.authenticate(r)
		if err != nil {
			return err
		}
		if need == accessWrite && !p.Tenant.Role.CanWrite() {
			return Errorf(CodeForbidden, detailReadOnly, p.Tenant.Role)
		}
		ctx := context.WithValue(r.Context(), keyPrincipal, p)
		return h(w, r.WithContext(ctx))
	}
}

func (a *api) authenticate(r *http.Request) (tenancy.Principal, error) {
	if arn, ok := a.iamCaller(r); ok {
		p, err := a.principals.ByIAM(r.Context(), arn)
		if errors.Is(err, dynamo.ErrNotFound) {
			return p, Errorf(CodeForbidden, detailIAMUnknown, arn)
		}
		if err != nil {
			return p, fmt.Errorf("resolving IAM caller: %w", err)
		}
		return p, nil
	}
	scheme, key, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(key) == "" {
		return tenancy.Principal{}, Errorf(CodeUnauthenticated, detailNoCredentials)
	}
	p, err := a.principals.ByKey(r.Context(), strings.TrimSpace(key))
	if errors.Is(err, dynamo.ErrNotFound) {
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
