package tenancy

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// NamespaceRules are what a tenant's namespaces are checked against besides their form.
type NamespaceRules struct {
	// AppsNamespace holds the hosted apps' pods and Secrets (config.Config.AppsNamespace): a
	// tenant's jobs there could read or replace another org's hosts.
	AppsNamespace string
	// Share lets the tenant hold namespaces another tenant already holds, which gives each sight
	// of the other's jobs there. Without it, a namespace has one tenant.
	Share bool
}

// Namespaces that no tenant may hold: kube-system and its kin run the cluster itself, and
// default is where objects land when a manifest names no namespace, so it is nobody's.
const (
	systemPrefix     = "kube-"
	defaultNamespace = "default"
)

// Messages of the namespace check, kept together: each says what to do instead.
const (
	msgSystemNamespace = "namespace %q belongs to the cluster itself (kube-*); choose a namespace of the tenant's own"
	msgDefaultNS       = "namespace %q is where unnamed objects land and belongs to no tenant; choose a namespace of the tenant's own"
	msgAppsNamespace   = "namespace %q holds the hosted apps (TIDEGATE_APPS_NAMESPACE); choose a namespace of the tenant's own"
	msgHeldNamespace   = "namespace %q is already held by tenant %s; choose another, or pass --share-namespace to let both tenants see and run jobs there"
)

// CheckNamespaces reports every namespace of t that it may not hold: one the cluster or the
// hosted apps use, or, unless rules.Share says so, one another of tenants already holds.
// tenants may include t's own earlier record, which holds nothing against it.
func CheckNamespaces(t Tenant, tenants []Tenant, rules NamespaceRules) error {
	var errs []error
	for _, ns := range t.Namespaces {
		if err := reservedNamespace(ns, rules.AppsNamespace); err != nil {
			errs = append(errs, err)
			continue
		}
		if rules.Share {
			continue
		}
		if holders := holdersOf(ns, t.Name, tenants); len(holders) > 0 {
			errs = append(errs, fmt.Errorf(msgHeldNamespace, ns, strings.Join(holders, ", ")))
		}
	}
	return errors.Join(errs...)
}

// ReservedNamespace says why no tenant may hold ns — the cluster's own (kube-*), default, or apps,
// the hosted apps' namespace ("" for none) — or nil when one may.
func ReservedNamespace(ns, apps string) error { return reservedNamespace(ns, apps) }

// reservedNamespace says why no tenant may hold ns, or nil when one may.
func reservedNamespace(ns, apps string) error {
	switch {
	case strings.HasPrefix(ns, systemPrefix):
		return fmt.Errorf(msgSystemNamespace, ns)
	case ns == defaultNamespace:
		return fmt.Errorf(msgDefaultNS, ns)
	case apps != "" && ns == apps:
		return fmt.Errorf(msgAppsNamespace, ns)
	}
	return nil
}

// holdersOf names the tenants other than self that hold ns, sorted.
func holdersOf(ns, self string, tenants []Tenant) []string {
	var names []string
	for _, o := range tenants {
		if o.Name != self && slices.Contains(o.Namespaces, ns) {
			names = append(names, o.Name)
		}
	}
	slices.Sort(names)
	return names
}
