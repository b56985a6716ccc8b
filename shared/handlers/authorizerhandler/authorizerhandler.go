// Package authorizerhandler wires the authorizer function: API Gateway's Lambda authorizer for the
// key API, which lets a request reach the API function only when it carries a live API key. It
// reads the keys the API reads, the same way (shared/dynamo's TenantStore), and links no
// Kubernetes package and not the API: a cold start reads one setting table and nothing else.
package authorizerhandler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/handlers"
	"github.com/tidegate/tidegate/shared/records"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// Keys resolves a presented API key to its principal; records.ErrNotFound for a key that is not
// (or no longer) stored, or whose tenant is gone.
type Keys interface {
	ByKey(ctx context.Context, key string) (tenancy.Principal, error)
}

var _ Keys = (*dynamo.TenantStore)(nil)

// What an allowed request carries to the API function and the access log, as
// requestContext.authorizer.lambda.<name> and $context.authorizer.<name>. API Gateway sets them
// from this answer alone; no header of the request can.
const (
	ContextTenant  = "tenant"  // the tenant the key acts for
	ContextSubject = "subject" // "key:<id>", the key's non-secret name (tenancy.KeyID)
)

// Authorizer answers API Gateway's REQUEST authorizer events (payload format 2.0, simple
// responses).
type Authorizer struct {
	keys Keys
	log  *slog.Logger
}

// New is the authorizer over cfg's control table.
func New(cfg config.Config, c handlers.Clients, log *slog.Logger) *Authorizer {
	return &Authorizer{keys: dynamo.NewTenantStore(c.DynamoDB, handlers.Tables(cfg).Control), log: log}
}

// Handle allows a request whose Authorization header is "Bearer <key>" for a stored key, and
// denies every other: no header, another scheme (a SigV4 signature has no business on the key
// API), a key whose form is not one Tidegate makes (tenancy.FormOf, told without a read), a key
// that was never made or was revoked. A store it cannot read is an error, which API
// Gateway answers with a 500: a key is never let through unchecked.
func (a *Authorizer) Handle(ctx context.Context, ev events.APIGatewayV2CustomAuthorizerV2Request) (events.APIGatewayV2CustomAuthorizerSimpleResponse, error) {
	deny := events.APIGatewayV2CustomAuthorizerSimpleResponse{IsAuthorized: false}
	key, ok := tenancy.BearerKey(header(ev.Headers, "Authorization"))
	if !ok {
		a.log.Info("request without an api key refused", "request_id", ev.RequestContext.RequestID)
		return deny, nil
	}
	if tenancy.FormOf(key) == tenancy.KeyMalformed {
		// Not a key Tidegate made (its checksum, length or prefix): refused before any read, so a
		// flood of random keys costs an invocation each and no DynamoDB call.
		a.log.Info("malformed api key refused", "key_id", tenancy.KeyID(key), "request_id", ev.RequestContext.RequestID)
		return deny, nil
	}
	p, err := a.keys.ByKey(ctx, key)
	if errors.Is(err, records.ErrNotFound) {
		a.log.Info("unknown api key refused", "key_id", tenancy.KeyID(key), "request_id", ev.RequestContext.RequestID)
		return deny, nil
	}
	if err != nil {
		a.log.Error("resolving api key", "key_id", tenancy.KeyID(key), "request_id", ev.RequestContext.RequestID, "err", err)
		return deny, fmt.Errorf("resolving API key %s: %w", tenancy.KeyID(key), err)
	}
	return events.APIGatewayV2CustomAuthorizerSimpleResponse{
		IsAuthorized: true,
		Context:      map[string]any{ContextTenant: p.Tenant.Name, ContextSubject: p.Subject},
	}, nil
}

// header is the value of the header name, in any case: API Gateway sends payload 2.0's headers
// in lower case, and a test or a future format may not.
func header(headers map[string]string, name string) string {
	if v, ok := headers[strings.ToLower(name)]; ok {
		return v
	}
	for k, v := range headers {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}
