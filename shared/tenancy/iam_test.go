package tenancy

import (
	"strings"
	"testing"
)

func TestMappedIAM(t *testing.T) {
	for _, tc := range []struct {
		arn, want, refused string
	}{
		{arn: "arn:aws:iam::123456789012:role/ml-ci", want: "arn:aws:iam::123456789012:role/ml-ci"},
		{arn: "arn:aws:iam::123456789012:role/service-role/ci/ml-ci", want: "arn:aws:iam::123456789012:role/ml-ci"},
		{arn: "arn:aws:iam::123456789012:user/ops/alice", want: "arn:aws:iam::123456789012:user/alice"},
		{arn: "arn:aws:iam::123456789012:root", want: "arn:aws:iam::123456789012:root"},
		{arn: "arn:aws-cn:iam::123456789012:role/ml", want: "arn:aws-cn:iam::123456789012:role/ml"},
		{arn: "arn:aws:sts::123456789012:assumed-role/ml-ci/alice", refused: "give the role's ARN: arn:aws:iam::123456789012:role/ml-ci"},
		{arn: "arn:aws:sts::123456789012:federated-user/bob", refused: "temporary session"},
		{arn: "arn:aws:iam::123456789012:group/devs", refused: "neither a user, a role"},
		{arn: "arn:aws:iam::123456789012:policy/p", refused: "neither a user, a role"},
		{arn: "arn:aws:iam::123456789012:role/", refused: "neither a user, a role"},
		{arn: "arn:aws:iam::123456789012:role/a b", refused: "neither a user, a role"},
		{arn: "arn:aws:s3:::bucket", refused: "not of the form"},
		{arn: "arn:aws:iam::12345:role/ml", refused: "not of the form"},
		{arn: "ml-ci", refused: "not of the form"},
	} {
		got, err := MappedIAM(tc.arn)
		switch {
		case tc.refused == "" && (err != nil || got != tc.want):
			t.Errorf("MappedIAM(%q) = %q, %v; want %q", tc.arn, got, err, tc.want)
		case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
			t.Errorf("MappedIAM(%q) = %q, %v; want an error saying %q", tc.arn, got, err, tc.refused)
		}
	}
}

// TestCallerIAMIsTheRole: a caller's session name, which it chooses, never changes what it
// resolves to, and no choice of it reaches another role, account or partition.
func TestCallerIAMIsTheRole(t *testing.T) {
	for _, tc := range []struct {
		caller, want string
	}{
		{"arn:aws:sts::123456789012:assumed-role/ml-ci/alice", "arn:aws:iam::123456789012:role/ml-ci"},
		{"arn:aws:sts::123456789012:assumed-role/ml-ci/bob@example.com", "arn:aws:iam::123456789012:role/ml-ci"},
		// A session named like another role stays the role that was assumed.
		{"arn:aws:sts::123456789012:assumed-role/other/ml-ci", "arn:aws:iam::123456789012:role/other"},
		{"arn:aws:sts::123456789012:assumed-role/other/role/ml-ci", "arn:aws:iam::123456789012:role/other"},
		{"arn:aws:sts::210987654321:assumed-role/ml-ci/alice", "arn:aws:iam::210987654321:role/ml-ci"},
		{"arn:aws-us-gov:sts::123456789012:assumed-role/ml-ci/alice", "arn:aws-us-gov:iam::123456789012:role/ml-ci"},
		{"arn:aws:iam::123456789012:user/ops/alice", "arn:aws:iam::123456789012:user/alice"},
		{"arn:aws:iam::123456789012:root", "arn:aws:iam::123456789012:root"},
	} {
		got, ok := CallerIAM(tc.caller)
		if !ok || got != tc.want {
			t.Errorf("CallerIAM(%q) = %q, %v; want %q", tc.caller, got, ok, tc.want)
		}
		if mapped, err := MappedIAM(tc.want); err != nil || mapped != got {
			t.Errorf("the mapping %q is kept as %q, %v; a caller resolving to it would not find it", tc.want, mapped, err)
		}
	}
	for _, caller := range []string{
		"arn:aws:sts::123456789012:federated-user/bob",
		"arn:aws:sts::123456789012:assumed-role/ml-ci",
		"arn:aws:sts::123456789012:assumed-role/ml-ci/",
		"arn:aws:iam::123456789012:group/devs",
		"",
		"arn:aws:sts::123456789012:assumed-role/ml ci/x",
	} {
		if got, ok := CallerIAM(caller); ok {
			t.Errorf("CallerIAM(%q) = %q; want no mapping", caller, got)
		}
	}
}
