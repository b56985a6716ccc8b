package jobobjects

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestFinal(t *testing.T) {
	job := schema.GroupResource{Group: "batch", Resource: "jobs"}
	wrap := func(err error) error { return fmt.Errorf("creating Job team-a/x: %w", err) }
	final := map[string]error{
		"invalid":          apierrors.NewInvalid(schema.GroupKind{Group: "batch", Kind: "Job"}, "x", field.ErrorList{field.Invalid(field.NewPath("spec", "backoffLimit"), -1, "must be >= 0")}),
		"bad request":      apierrors.NewBadRequest("json: cannot unmarshal"),
		"forbidden":        apierrors.NewForbidden(job, "x", errors.New("no")),
		"no namespace":     apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "ghost"),
		"no such kind":     apierrors.NewNotFound(job, ""),
		"method":           apierrors.NewMethodNotSupported(job, "create"),
		"too large":        apierrors.NewRequestEntityTooLargeError("limit is 3145728"),
		"name collision":   fmt.Errorf("%w: Job team-a/x already exists", ErrNameCollision),
		"kind not applied": fmt.Errorf("manifest 0: foo/v1, Kind=Bar %w", ErrNotApplicable),
	}
	transient := map[string]error{
		"throttled":      apierrors.NewTooManyRequests("slow down", 2),
		"server error":   apierrors.NewInternalError(errors.New("etcd")),
		"unavailable":    apierrors.NewServiceUnavailable("starting"),
		"server timeout": apierrors.NewServerTimeout(job, "create", 1),
		"conflict":       apierrors.NewConflict(job, "x", errors.New("changed")),
		"refused":        &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED},
		"deadline":       context.DeadlineExceeded,
		"name finishing": fmt.Errorf("%w: Job team-a/x belongs to job-1", ErrNameFinishing),
	}
	for name, err := range final {
		if !Final(err) || !Final(wrap(err)) {
			t.Errorf("%s: Final(%v) = false, want true: no retry changes it", name, err)
		}
	}
	for name, err := range transient {
		if Final(err) || Final(wrap(err)) {
			t.Errorf("%s: Final(%v) = true, want false: a retry may pass", name, err)
		}
	}
	if Final(nil) {
		t.Error("Final(nil) = true")
	}
}

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`jobs.batch "x" is forbidden: User "arn:aws:sts::123456789012:assumed-role/tidegate-dispatch/i-1" cannot create resource "jobs" in API group "batch" in the namespace "team-a"`,
			`jobs.batch "x" is forbidden: Tidegate cannot create resource "jobs" in API group "batch" in the namespace "team-a"`},
		{`Post "https://ABCDEF0123.gr7.us-east-1.eks.amazonaws.com/apis/batch/v1/namespaces/team-a/jobs": dial tcp 10.0.3.7:443: connect: connection refused`,
			`Post "[cluster]": dial tcp [address]: connect: connection refused`},
		{`role arn:aws:iam::123456789012:role/tidegate-api is not allowed; account 123456789012`,
			`role [identity] is not allowed; account [account]`},
		{`Job.batch "hello" is invalid: spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0`,
			`Job.batch "hello" is invalid: spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0`},
		{`node ip-10-0-1-2.ec2.internal refused`, `node [cluster] refused`},
	} {
		if got := Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q)\n = %q\nwant %q", tc.in, got, tc.want)
		}
	}
	long := Redact(strings.Repeat("é", 1000))
	if len(long) > maxMessage+len("…") || !strings.HasSuffix(long, "…") || !strings.Contains(long, "é") {
		t.Errorf("Redact of a long message = %d bytes, want at most %d and marked cut", len(long), maxMessage+len("…"))
	}
}
