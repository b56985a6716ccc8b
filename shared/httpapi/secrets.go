package httpapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/keyring"
	"github.com/tidegate/tidegate/shared/records"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// SecretStore keeps orgs' secrets, sealed; dynamo.SecretStore is the real one.
type SecretStore interface {
	Put(ctx context.Context, org, name, sealed, fingerprint string, now time.Time) (created bool, err error)
	Names(ctx context.Context, org string, limit int, cursor string) ([]dynamo.SecretName, string, error)
	Delete(ctx context.Context, org, name string) error
	Digest(ctx context.Context, org string) (string, error)
}

var _ SecretStore = (*dynamo.SecretStore)(nil)

// Sealer seals a secret's value and fingerprints it, each for its owner (keyring.Org of the
// secret's org); keyring.Ring is the real one.
type Sealer interface {
	Seal(ctx context.Context, owner, value, binding string) (string, error)
	Fingerprint(ctx context.Context, owner, name, value string) (string, error)
}

var _ Sealer = (*keyring.Ring)(nil)

// What a secret's writer reads, kept together.
const (
	detailAdminOnly = "role %s may not change the org's secrets; ask a tenant admin"
	detailNoSecret  = "org %s has no secret %q"
)

// secretRequest is PUT /api/v1/secrets/{name}'s body. The value is write-only: no answer, error
// or log line repeats it.
type secretRequest struct {
	Value *string `json:"value"`
}

// secretName is the {name} of a secret's path, checked, for an admin of the org.
func secretName(r *http.Request) (string, error) {
	if role := principalOf(r.Context()).Tenant.Role; role != tenancy.RoleAdmin {
		return "", Errorf(CodeForbidden, detailAdminOnly, role)
	}
	name := r.PathValue("name")
	if err := apps.CheckSecretName(name); err != nil {
		return "", Invalid("the secret's name in the path is not one a secret can have", FieldProblem{"name", err.Error()})
	}
	return name, nil
}

// putSecret seals the value and stores it; the org's hosts get new names from the changed
// digest, so the beat restarts them with it.
func (a *api) putSecret(w http.ResponseWriter, r *http.Request) error {
	name, err := secretName(r)
	if err != nil {
		return err
	}
	var req secretRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if req.Value == nil {
		return Invalid("send the secret's value", FieldProblem{"value", "required: a string"})
	}
	if err := apps.CheckSecretValue(*req.Value); err != nil {
		return Invalid("the secret's value cannot be stored", FieldProblem{"value", err.Error()})
	}
	org := orgOf(r.Context())
	sealed, err := a.sealer.Seal(r.Context(), keyring.Org(org), *req.Value, apps.SecretBinding(org, name))
	if err != nil {
		return err
	}
	fingerprint, err := a.sealer.Fingerprint(r.Context(), keyring.Org(org), name, *req.Value)
	if err != nil {
		return err
	}
	created, err := a.secrets.Put(r.Context(), org, name, sealed, fingerprint, a.now())
	if errors.Is(err, dynamo.ErrTooManySecrets) {
		return Errorf(CodeConflict, "%s", err.Error())
	}
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return writeJSON(w, status, map[string]string{"name": name})
}

func (a *api) listSecrets(w http.ResponseWriter, r *http.Request) error {
	limit, cursor, err := pageParams(r.URL.Query())
	if err != nil {
		return err
	}
	if cursor != "" && apps.CheckSecretName(cursor) != nil {
		return Invalid("cursor is not one this API gave out", FieldProblem{"cursor", "pass next_cursor from the previous page unchanged"})
	}
	names, next, err := a.secrets.Names(r.Context(), orgOf(r.Context()), limit, cursor)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, listPage[dynamo.SecretName]{Items: names, NextCursor: nextCursor(next)})
}

func (a *api) deleteSecret(w http.ResponseWriter, r *http.Request) error {
	name, err := secretName(r)
	if err != nil {
		return err
	}
	org := orgOf(r.Context())
	if err := a.secrets.Delete(r.Context(), org, name); errors.Is(err, records.ErrNotFound) {
		return Errorf(CodeNotFound, detailNoSecret, org, name)
	} else if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
