// Package tenancy provides tenants, the principals that act for them, and API keys: who may do
// what, decided without I/O.
package tenancy

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Role is what a tenant's principals may do.
type Role string

// Roles, from most to least power. A viewer reads; a member also submits and changes jobs,
// templates and webhooks' tests; a deployer also deploys the org's apps (releases, rollbacks,
// stop, start, delete) and reads their hosts' logs and why a release failed; an admin also
// manages the tenant's webhooks, secrets and keys. An app's host gets every secret of its org
// as its environment, so whoever ships its code, or reads what it prints, can read them: that
// is the deployer's and the admin's, not every member's.
const (
	RoleAdmin    Role = "admin"
	RoleDeployer Role = "deployer"
	RoleMember   Role = "member"
	RoleViewer   Role = "viewer"
)

// ParseRole reads a role name.
func ParseRole(s string) (Role, error) {
	switch r := Role(s); r {
	case RoleAdmin, RoleDeployer, RoleMember, RoleViewer:
		return r, nil
	}
	return "", fmt.Errorf("role %q is not one of admin, deployer, member, viewer", s)
}

// CanDeploy reports whether the role may deploy the org's apps and read what their hosts print,
// which may hold the org's secrets.
func (r Role) CanDeploy() bool { return r == RoleAdmin || r == RoleDeployer }

// CanWrite reports whether the role may submit, change and delete.
func (r Role) CanWrite() bool { return r == RoleAdmin || r == RoleDeployer || r == RoleMember }

// Tenant is a team: its principals see and touch only its namespaces, and its hosted apps belong
// to its org.
type Tenant struct {
	Name       string    `json:"name" dynamodbav:"name"`
	Org        string    `json:"org" dynamodbav:"org"`
	Namespaces []string  `json:"namespaces" dynamodbav:"namespaces"`
	Role       Role      `json:"role" dynamodbav:"role"`
	CreatedAt  time.Time `json:"created_at" dynamodbav:"created_at"`
	// RateLimit (requests a second) and RateBurst replace, where above 0, the API's default
	// request budget for each of this tenant's credentials (see Rate).
	RateLimit float64 `json:"rate_limit,omitempty" dynamodbav:"rate_limit,omitempty"`
	RateBurst int     `json:"rate_burst,omitempty" dynamodbav:"rate_burst,omitempty"`
	// MaxPriority is the highest priority the tenant's jobs may have; nil is TopPriority (see
	// PriorityLimit). A pointer, since 0 is a limit too.
	MaxPriority *int `json:"max_priority,omitempty" dynamodbav:"max_priority,omitempty"`
	// MaxQueued is how many of the tenant's jobs may wait in the queues at once, across regions;
	// nil is the deployment's cap, 0 none (see QueuedLimit).
	MaxQueued *int `json:"max_queued,omitempty" dynamodbav:"max_queued,omitempty"`
	// Quotas is the tenant's nominal share of each region, by region; a region not named gives it
	// the configured default share (see QuotaIn).
	Quotas map[string]Quota `json:"quotas,omitempty" dynamodbav:"quotas,omitempty"`
	// Operator marks the deployment's operator: its principals see every tenant's costs and use
	// of the queues. A tenant's admin manages its own tenant only, and sees only its own figures:
	// the role a team needs for its webhooks and secrets must not show it the other teams.
	Operator bool `json:"operator,omitempty" dynamodbav:"operator,omitempty"`
	// PreemptWithin, PreemptLowerPriority, lets the tenant's waiting jobs evict its own running
	// jobs of lower priority when their region has no room for them; "" never does. The
	// operator's to set, as quotas are: evicting costs the tenant's own work.
	PreemptWithin string `json:"preempt_within,omitempty" dynamodbav:"preempt_within,omitempty"`
	// Held, the operator's to set (`tidegate admin tenants hold`), dispatches none of the tenant's
	// jobs: they keep their place in the queues, and what runs goes on.
	Held bool `json:"held,omitempty" dynamodbav:"held,omitempty"`
}

// PreemptLowerPriority is Tenant.PreemptWithin's one setting.
const PreemptLowerPriority = "lower-priority"

// dnsLabel is RFC 1123's label: what Kubernetes accepts as a namespace name.
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// Validate reports every problem with the tenant at once.
func (t Tenant) Validate() error {
	var errs []error
	if !dnsLabel.MatchString(t.Name) {
		errs = append(errs, fmt.Errorf("tenant name %q must be a DNS label (lowercase letters, digits, '-'; at most 63)", t.Name))
	}
	if !dnsLabel.MatchString(t.Org) {
		errs = append(errs, fmt.Errorf("org %q must be a DNS label", t.Org))
	}
	if len(t.Namespaces) == 0 {
		errs = append(errs, errors.New("a tenant needs at least one namespace"))
	}
	for _, ns := range t.Namespaces {
		if !dnsLabel.MatchString(ns) {
			errs = append(errs, fmt.Errorf("namespace %q must be a DNS label", ns))
		}
	}
	if _, err := ParseRole(string(t.Role)); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, t.rateProblems()...)
	errs = append(errs, t.limitProblems()...)
	if t.PreemptWithin != "" && t.PreemptWithin != PreemptLowerPriority {
		errs = append(errs, fmt.Errorf("preempt-within %q must be %s or nothing", t.PreemptWithin, PreemptLowerPriority))
	}
	return errors.Join(errs...)
}

// Allows reports whether the tenant may act in namespace ns.
func (t Tenant) Allows(ns string) bool { return slices.Contains(t.Namespaces, ns) }

// Principal is who a request acts as: an API key's or an IAM caller's tenant.
type Principal struct {
	Tenant Tenant
	// Subject names the caller for logs: "key:<id>" or "iam:<arn>", an assumed role's session
	// included.
	Subject string
	// Credential is the credential the caller was resolved through, as an admin added it:
	// "key:<id>", or "iam:<arn>" of the user, role or account (a role's sessions share it). The
	// API's request budget is kept per credential.
	Credential string
}

// keyPrefix marks Tidegate keys so secret scanners and people can tell them apart.
const keyPrefix = "tg_"

// RefuseUnread reports whether key can be refused without being looked up: it carries the prefix
// of the keys Tidegate makes but is none of their forms (FormOf is KeyMalformed), so it was
// mistyped, cut short or made up. A key without the prefix is not judged: a dev stack's operator
// may choose any key (--api-key), and such a key is only ever looked up.
func RefuseUnread(key string) bool {
	return strings.HasPrefix(key, keyPrefix) && FormOf(key) == KeyMalformed
}

// keyBytes of randomness make a key: 256 bits, beyond guessing, so a fast hash is enough to store it.
const keyBytes = 32

// NewKey makes a fresh API key: keyPrefix, then base64url of keyBytes of randomness followed by
// their CRC-32, a checksum as GitHub's tokens carry, so that a key mistyped, cut short or made up
// is told from one that may be stored without looking it up (FormOf): the key authorizer refuses
// it before any read, which a flood of random keys would otherwise cost each. The plaintext is
// shown once; only HashKey(plaintext) is kept.
func NewKey() (string, error) {
	b := make([]byte, keyBytes, keyBytes+crc32.Size)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("reading randomness for a key: %w", err)
	}
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	return keyPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// KeyForm is what a presented key looks like, before it is looked up.
type KeyForm int

const (
	// KeyMalformed is no key Tidegate made: not its prefix, length or alphabet, or a checksum
	// that does not match. It is refused without a read.
	KeyMalformed KeyForm = iota
	// KeyLegacy is a key made before keys carried a checksum (keyPrefix and 43 characters): it is
	// looked up, and keeps working until it is rotated.
	KeyLegacy
	// KeyChecked is a key whose checksum matches: it is looked up.
	KeyChecked
)

// FormOf says what key looks like (KeyForm); it reads nothing.
func FormOf(key string) KeyForm {
	body, ok := strings.CutPrefix(key, keyPrefix)
	if !ok {
		return KeyMalformed
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(body)
	switch {
	case err != nil:
		return KeyMalformed
	case len(b) == keyBytes:
		return KeyLegacy
	case len(b) == keyBytes+crc32.Size && crc32.ChecksumIEEE(b[:keyBytes]) == binary.BigEndian.Uint32(b[keyBytes:]):
		return KeyChecked
	}
	return KeyMalformed
}

// HashKey is what is stored for a key and what a presented key is looked up by.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// KeyID is a short, non-secret name for a key: the start of its hash, safe to log and list.
func KeyID(key string) string { return HashKey(key)[:12] }

// IsDNSLabel reports whether s is an RFC 1123 label, as Kubernetes names namespaces and objects.
func IsDNSLabel(s string) bool { return dnsLabel.MatchString(s) }
