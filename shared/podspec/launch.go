// Package podspec provides a hosted app's host as Kubernetes objects: its gVisor pod, which
// installs the release's sources and then runs them, and the Secret its environment comes from.
// It builds objects and touches nothing.
package podspec

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/tidegate/tidegate/shared/apps"
)

// ErrInvalidLaunch is what every error of Pod and Secret wraps: the Launch cannot make a host.
var ErrInvalidLaunch = errors.New("invalid launch")

// Launch is one host to start: whose app, which release, where its sources are, and what its
// process starts with.
type Launch struct {
	// Org and App name the app; together, as AppKey(Org, App), they are its key.
	Org, App string
	// Host is the pod's name, <app>-r<release>-<8 hex>: a DNS label, made by the app store.
	Host string
	// Release is the release the host runs, from 1.
	Release int
	// Namespace is the hosting cluster's namespace for apps.
	Namespace string
	// Stack is the deployment the host belongs to, as its label holds it (StackValue): two
	// deployments sharing Namespace each see and touch only their own hosts.
	Stack string
	// Image runs both containers; "" is DefaultImage. It needs sh, tar, sha256sum, timeout
	// and the release's package manager (node and npm for DefaultImage).
	Image string
	// SourcesURL is a presigned GET of the release's sources (a gzipped tar) and
	// SourcesSHA256 their digest, checked before anything is unpacked. The URL is in the pod's
	// spec: it should expire within minutes and grant nothing else.
	SourcesURL, SourcesSHA256 string
	// Command starts the app, run as is (never through a shell). Empty runs `npm start` for a
	// release with a package.json, else `python3 main.py`.
	Command []string
	// Ready is the app's readiness check (its tidegate.json "ready"), the app container's
	// readiness probe; nil gives the pod none, and its registration alone says it serves.
	Ready *apps.Ready
	// Env is the org's secrets. Only the Secret holds them; the pod names the Secret.
	Env map[string]string
	// HostToken is what the host proves itself with when it registers at RegisterURL.
	HostToken, RegisterURL string
}

// maxSecretBytes is the apiserver's limit on one Secret's data (corev1.MaxSecretSize).
const maxSecretBytes = 1 << 20

var (
	envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	digest  = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// reservedPrefix starts the variables Tidegate sets itself; an org's secret may not.
const reservedPrefix = "TIDEGATE_"

// CheckEnvName reports why name cannot be one of an org's secrets, or nil if it can. The
// secrets route can refuse a bad name when it is written rather than when a host starts.
func CheckEnvName(name string) error {
	if !envName.MatchString(name) {
		return fmt.Errorf("%q is not an environment variable name: use letters, digits and _, not starting with a digit", name)
	}
	if strings.HasPrefix(strings.ToUpper(name), reservedPrefix) {
		return fmt.Errorf("%q starts with %s, which is kept for the variables Tidegate sets", name, reservedPrefix)
	}
	return nil
}

// check reports every problem with l at once; nil means Pod and Secret can be built from it.
func (l Launch) check() error {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	for field, v := range map[string]string{"Org": l.Org, "App": l.App} {
		if v == "" || strings.Contains(v, "/") || !utf8.ValidString(v) {
			add("%s %q must be non-empty UTF-8 without '/'", field, v)
		}
	}
	if errs := validation.IsDNS1123Label(l.Host); len(errs) > 0 {
		add("Host %q is not a DNS label: %s", l.Host, strings.Join(errs, "; "))
	}
	if l.Release < 1 {
		add("Release %d must be 1 or more", l.Release)
	}
	if errs := validation.IsDNS1123Label(l.Namespace); len(errs) > 0 {
		add("Namespace %q is not a DNS label: %s", l.Namespace, strings.Join(errs, "; "))
	}
	if l.Stack == "" || len(validation.IsValidLabelValue(l.Stack)) > 0 {
		add("Stack %q must be a non-empty label value: pass the deployment's name through StackValue", l.Stack)
	}
	if err := checkURL(l.SourcesURL); err != nil {
		add("SourcesURL: %v", err)
	}
	if !digest.MatchString(l.SourcesSHA256) {
		add("SourcesSHA256 %q must be a sha256 digest: 64 lowercase hex digits", l.SourcesSHA256)
	}
	if l.HostToken == "" {
		add("HostToken is empty: the host could not register")
	}
	if err := checkURL(l.RegisterURL); err != nil {
		add("RegisterURL: %v", err)
	}
	if l.Ready != nil {
		if err := apps.CheckReady(*l.Ready); err != nil {
			add("Ready: %v", err)
		}
	}
	size := 0
	for _, name := range slices.Sorted(maps.Keys(l.Env)) {
		if err := CheckEnvName(name); err != nil {
			add("secret %v", err)
		}
		size += len(name) + len(l.Env[name])
	}
	if size > maxSecretBytes {
		add("the org's secrets add up to %d bytes; a host's Secret holds at most %d", size, maxSecretBytes)
	}
	if len(problems) == 0 {
		return nil
	}
	slices.Sort(problems)
	return fmt.Errorf("host %q: %s: %w", l.Host, strings.Join(problems, "; "), ErrInvalidLaunch)
}

// checkURL accepts an absolute http or https URL; http is for the local stand-ins.
func checkURL(raw string) error {
	// The parse error is not passed on: it would quote the URL, and a presigned one is a
	// credential.
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("not a URL")
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return errors.New("must be an absolute http or https URL")
	}
	return nil
}
