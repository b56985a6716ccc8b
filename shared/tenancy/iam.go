package tenancy

import (
	"fmt"
	"regexp"
	"strings"
)

// IAM callers act for a tenant by who they are, not by what they call themselves. API Gateway
// reports an assumed role's caller as arn:aws:sts::ACCOUNT:assumed-role/ROLE/SESSION, and the
// session name is whatever the caller passed to AssumeRole: mapping a session ARN would let anyone
// allowed to assume the role pick the tenant it acts for, and would break at the next session. So
// a mapping names an IAM user, a role or an account root, and a caller resolves to one of those.
//
// A role's ARN may carry a path (role/service-role/ci), but an assumed-role ARN never does, and a
// role's or user's name is unique in its account whatever its path: both are kept as
// arn:PARTITION:iam::ACCOUNT:role/NAME (or user/NAME), without the path.

// arnParts matches arn:PARTITION:SERVICE::ACCOUNT:RESOURCE for the partitions IAM lives in.
var arnParts = regexp.MustCompile(`^arn:(aws|aws-cn|aws-us-gov|aws-iso|aws-iso-b):(iam|sts)::([0-9]{12}):(.+)$`)

// iamName is an IAM user or role name, or a path segment: what IAM itself allows.
var iamName = regexp.MustCompile(`^[\w+=,.@-]{1,64}$`)

// MappedIAM checks an ARN given to act for a tenant and returns the form it is kept under: a user's
// or a role's ARN without its path, or an account's root. A session ARN (assumed role,
// federated user) is refused with the ARN to give instead, where there is one.
func MappedIAM(arn string) (string, error) {
	m := arnParts.FindStringSubmatch(arn)
	if m == nil {
		return "", fmt.Errorf("IAM ARN %q is not of the form arn:aws:iam::ACCOUNT:role/NAME (or user/NAME, or root)", arn)
	}
	partition, service, account, resource := m[1], m[2], m[3], m[4]
	if service == "sts" {
		kind, rest, _ := strings.Cut(resource, "/")
		if role, _, ok := strings.Cut(rest, "/"); kind == "assumed-role" && ok && iamName.MatchString(role) {
			return "", fmt.Errorf("IAM ARN %q names one session of a role, and its session name is the caller's choice; give the role's ARN: %s", arn, roleARN(partition, account, role))
		}
		return "", fmt.Errorf("IAM ARN %q names a temporary session, not an IAM user or role; give the ARN of the user or role that callers act as", arn)
	}
	if key, ok := iamKey(partition, account, resource); ok {
		return key, nil
	}
	return "", fmt.Errorf("IAM ARN %q names neither a user, a role nor the account's root; give arn:%s:iam::%s:role/NAME or user/NAME", arn, partition, account)
}

// CallerIAM is the mapping an authenticated IAM caller resolves through: an assumed role's session
// resolves to its role, a user or root to itself. ok is false for a caller no mapping can name
// (a federated user's session), which then acts for no tenant.
func CallerIAM(arn string) (key string, ok bool) {
	m := arnParts.FindStringSubmatch(arn)
	if m == nil {
		return "", false
	}
	partition, service, account, resource := m[1], m[2], m[3], m[4]
	if service == "iam" {
		return iamKey(partition, account, resource)
	}
	kind, rest, _ := strings.Cut(resource, "/")
	role, session, ok := strings.Cut(rest, "/")
	if kind != "assumed-role" || !ok || !iamName.MatchString(role) || session == "" {
		return "", false
	}
	return roleARN(partition, account, role), true
}

// iamKey is the kept form of an iam-service resource: a user's or role's ARN without its path,
// or the root; ok is false for any other resource.
func iamKey(partition, account, resource string) (string, bool) {
	if resource == "root" {
		return "arn:" + partition + ":iam::" + account + ":root", true
	}
	kind, rest, _ := strings.Cut(resource, "/")
	segments := strings.Split(rest, "/")
	for _, s := range segments {
		if !iamName.MatchString(s) {
			return "", false
		}
	}
	if kind != "user" && kind != "role" {
		return "", false
	}
	return "arn:" + partition + ":iam::" + account + ":" + kind + "/" + segments[len(segments)-1], true
}

func roleARN(partition, account, role string) string {
	return "arn:" + partition + ":iam::" + account + ":role/" + role
}
