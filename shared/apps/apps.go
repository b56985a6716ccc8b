// Package apps provides hosted apps' names, states, host names and the checks their uploads and
// secrets meet, decided without I/O.
package apps

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// State is where an app stands, as API.md lists the states.
type State string

// The states. An upload or a start makes an app deploying; the beat makes it live once its wanted
// host registers, or failed when that host does not start, register or stay up.
const (
	StateDeploying State = "deploying"
	StateLive      State = "live"
	StateFailed    State = "failed"
	StateStopped   State = "stopped"
)

// App is one org's hosted app as the store keeps it: what is wanted (the newest release) and what
// the beat last saw of it.
type App struct {
	Org  string `dynamodbav:"org"`
	Name string `dynamodbav:"name"`
	// Release is the newest release's number, the one wanted; SHA256 is its sources' digest.
	Release int    `dynamodbav:"release"`
	SHA256  string `dynamodbav:"release_sha"`
	State   State  `dynamodbav:"state"`
	// LiveRelease and LiveHost are what last went live; they keep serving while a newer release
	// deploys.
	LiveRelease int    `dynamodbav:"live_release,omitempty"`
	LiveHost    string `dynamodbav:"live_host,omitempty"`
	// Registered is the host that last registered with its token, and RegisteredPod the UID of
	// the pod whose process registered it: the registration counts for that pod alone, not for a
	// pod of the same name started again.
	Registered    string `dynamodbav:"registered,omitempty"`
	RegisteredPod string `dynamodbav:"registered_pod,omitempty"`
	// RegisteredAt is when that registration was made: a readiness check is judged from then.
	RegisteredAt time.Time `dynamodbav:"registered_at,omitempty"`
	// FailedRelease is the release that failed, with why and its host's last lines; an upload or a
	// start clears them.
	FailedRelease int    `dynamodbav:"failed_release,omitempty"`
	FailedHost    string `dynamodbav:"failed_host,omitempty"`
	FailedWhy     string `dynamodbav:"failed_why,omitempty"`
	// TokenHost is the host the current host token was minted for: the only one that may register.
	TokenHost string `dynamodbav:"token_host,omitempty"`
	// Launch is how the wanted release runs (its Release's Launch), for the hosts the beat starts.
	Launch *Launch `dynamodbav:"launch,omitempty"`
	// Crashes are each host's recent crash times, oldest first, kept across beats.
	Crashes map[string][]time.Time `dynamodbav:"crashes,omitempty"`
	// Revives are the last revives of the app's hosts with their last lines, oldest first
	// (KeepRevive bounds them).
	Revives   []Revive  `dynamodbav:"revives,omitempty"`
	CreatedAt time.Time `dynamodbav:"created_at"`
	UpdatedAt time.Time `dynamodbav:"updated_at"`
}

// Stopped reports whether the org stopped the app: the beat runs none of its hosts.
func (a App) Stopped() bool { return a.State == StateStopped }

// Failed reports whether the wanted release failed: the beat does not start it again.
func (a App) Failed() bool { return a.FailedRelease != 0 && a.FailedRelease == a.Release }

// Release is one upload of an app's sources, numbered from 1 per app.
type Release struct {
	App        string    `json:"app" dynamodbav:"app"`
	Number     int       `json:"release" dynamodbav:"number"`
	SHA256     string    `json:"sha256" dynamodbav:"sha256"`
	Bytes      int64     `json:"bytes" dynamodbav:"bytes"`
	Note       string    `json:"note,omitempty" dynamodbav:"note,omitempty"`
	CreatedAt  time.Time `json:"created_at" dynamodbav:"created_at"`
	RollbackOf int       `json:"rollback_of,omitempty" dynamodbav:"rollback_of,omitempty"`
	// Launch is how the release runs, from its tidegate.json; nil without one.
	Launch *Launch `json:"launch,omitempty" dynamodbav:"launch,omitempty"`
	// FailedHost and FailedWhy are, once the release failed, its host and why with the host's
	// last lines, as the app's record had them: kept here after a newer release clears those.
	FailedHost string `json:"failed_host,omitempty" dynamodbav:"failed_host,omitempty"`
	FailedWhy  string `json:"failed_why,omitempty" dynamodbav:"failed_why,omitempty"`
}

// A host name is `<app>-r<release>-<8 hex>`, and a host's pod name and hostname must be a DNS
// label of at most 63 characters. Release numbers are given twelve digits (a trillion releases,
// more than any app makes), which leaves 40 characters for the app's name.
const (
	maxLabel         = 63
	maxReleaseDigits = 12
	hostHashHex      = 8
	// MaxNameLen is the longest app name whose host names still fit in a DNS label.
	MaxNameLen = maxLabel - len("-r") - maxReleaseDigits - len("-") - hostHashHex
	// MaxRelease is the highest release number a host name has room for.
	MaxRelease = 999_999_999_999
)

// ReleaseDigits is the width release numbers are zero-padded to where they must sort as text.
const ReleaseDigits = maxReleaseDigits

var (
	dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	// podUID is a Kubernetes object UID as the API server makes them: a lowercase UUID.
	podUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

// IsPodUID says s is a pod's UID as the API server makes them, what a registering host gives as
// the pod its process runs in.
func IsPodUID(s string) bool { return podUID.MatchString(s) }

// CheckName reports what is wrong with an app name, or nil.
func CheckName(name string) error {
	if len(name) > MaxNameLen || !dnsLabel.MatchString(name) {
		return fmt.Errorf("must be a DNS label of at most %d characters (lowercase letters, digits and '-', "+
			"starting and ending with a letter or digit), so that its host names stay within 63", MaxNameLen)
	}
	if name == ReservedName {
		return fmt.Errorf("%q is taken by GET /api/v1/apps/%s (the plan preview); choose another name", name, name)
	}
	return nil
}

// ReservedName is the one DNS label an app may not be called: /api/v1/apps/plan is the preview.
const ReservedName = "plan"

// SourcesKey is where a release's sources are kept in the sources bucket: under their digest, so
// a rollback or a re-upload of the same bytes stores nothing new.
func SourcesKey(prefix, sourcesSHA256 string) string {
	return prefix + "sources/" + sourcesSHA256 + ".tar.gz"
}

// HostName names the host that runs release of org's app: a changed source or a changed secret
// of the org (its secrets digest) gives a new name, so the beat starts a new host for either. The
// org is in the digest because every org's hosts share one namespace: two orgs' apps of one name,
// release and sources still get two hosts.
func HostName(org, app string, release int, sourcesSHA256, secretsDigest string) string {
	sum := sha256.Sum256([]byte(org + "\n" + sourcesSHA256 + "\n" + secretsDigest))
	return app + "-r" + strconv.Itoa(release) + "-" + hex.EncodeToString(sum[:])[:hostHashHex]
}
