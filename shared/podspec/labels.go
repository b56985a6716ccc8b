package podspec

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/tidegate/tidegate/shared/jobs"
)

// Every host's pod and Secret carry these, so the beat lists its own with Selector and nothing
// else.
const (
	// AppLabel holds AppStamp of the app's key: a label value cannot hold the key's '/'.
	AppLabel = "tidegate.io/app"
	// AppAnnotation holds the app's key itself, <org>/<app>.
	AppAnnotation = "tidegate.io/app"
	// OrgLabel holds the app's org (a DNS label, so a valid label value): one org's hosts are
	// listed alone with OrgSelector.
	OrgLabel = "tidegate.io/org"
	// StackLabel holds the deployment the host belongs to (StackValue of its name): each
	// deployment's beat lists only its own hosts (StackSelector), so two sharing a namespace
	// leave each other's alone.
	StackLabel = "tidegate.io/stack"
	// ReleaseLabel holds the release the host runs, in decimal.
	ReleaseLabel = "tidegate.io/release"
	// ManagedByLabel is ManagedBy on every host.
	ManagedByLabel = "tidegate.io/managed-by"
	// ManagedBy tells hosts from anything else in the namespace.
	ManagedBy = "tidegate-hosting"
)

// stampHexDigits of a SHA-256 make the label: 64 bits, so two apps of a cluster never share one
// in practice, and AppOf checks the stamp against the annotation anyway.
const stampHexDigits = 16

// Selector is the label selector of every host's pod, and of nothing else: a tenant's job that
// copied our labels onto its pods still carries jobs.IDKey, so such pods are left out.
func Selector() string {
	return ManagedByLabel + "=" + ManagedBy + "," + AppLabel + ",!" + jobs.IDKey
}

// OrgSelector is Selector narrowed to org's hosts.
func OrgSelector(org string) string {
	return Selector() + "," + OrgLabel + "=" + org
}

// StackSelector narrows selector (Selector or OrgSelector) to the hosts of the deployment whose
// label value (StackValue) is stack.
func StackSelector(selector, stack string) string {
	return selector + "," + StackLabel + "=" + stack
}

// StackValue is the label value of the deployment named stack: the name itself where it is a
// label value (a CloudFormation stack name of at most 63 characters is), else its stamp as
// AppStamp makes one.
func StackValue(stack string) string {
	if stack != "" && len(validation.IsValidLabelValue(stack)) == 0 {
		return stack
	}
	return AppStamp(stack)
}

// AppKey is an app's key: <org>/<app>.
func AppKey(org, app string) string { return org + "/" + app }

// AppStamp is the app key as a label value takes it: hex of its SHA-256, cut short.
func AppStamp(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])[:stampHexDigits]
}

// AppOf reads back the key of the app whose host obj is. ok is false for an object that is not
// a host's: without our labels, or whose annotation does not match its stamp.
func AppOf(obj metav1.Object) (key string, ok bool) {
	labels := obj.GetLabels()
	if labels[ManagedByLabel] != ManagedBy {
		return "", false
	}
	if _, job := labels[jobs.IDKey]; job {
		return "", false
	}
	key = obj.GetAnnotations()[AppAnnotation]
	if !strings.Contains(key, "/") || labels[AppLabel] != AppStamp(key) {
		return "", false
	}
	return key, true
}

// ReleaseOf reads back the release a host runs; ok is false when obj has no valid one.
func ReleaseOf(obj metav1.Object) (release int, ok bool) {
	if _, ours := AppOf(obj); !ours {
		return 0, false
	}
	n, err := strconv.Atoi(obj.GetLabels()[ReleaseLabel])
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

// objectMeta is what the pod and the Secret of l's host both carry, with its name.
func objectMeta(l Launch, name string) metav1.ObjectMeta {
	key := AppKey(l.Org, l.App)
	return metav1.ObjectMeta{
		Name:      name,
		Namespace: l.Namespace,
		Labels: map[string]string{
			AppLabel:       AppStamp(key),
			OrgLabel:       l.Org,
			StackLabel:     l.Stack,
			ReleaseLabel:   strconv.Itoa(l.Release),
			ManagedByLabel: ManagedBy,
		},
		Annotations: map[string]string{AppAnnotation: key},
	}
}
