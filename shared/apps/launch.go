package apps

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// LaunchFile is the file at the root of a release's sources that says how the app runs. It is
// optional: without it the host runs `npm start` for a package.json, else `python3 main.py`, on
// the deployment's default runtime.
const LaunchFile = "tidegate.json"

// maxLaunchBytes bounds LaunchFile: a command, a runtime's name and a readiness check.
const maxLaunchBytes = 16 << 10

// Launch is how a release runs, as its LaunchFile says.
type Launch struct {
	// Start is the command that starts the app, run as is in the app's folder (never through a
	// shell); empty is the default above.
	Start []string `json:"start,omitempty" dynamodbav:"start,omitempty"`
	// Runtime names one of the deployment's runtimes (config's TIDEGATE_APP_RUNTIMES), the image
	// the host runs on; empty is the default runtime.
	Runtime string `json:"runtime,omitempty" dynamodbav:"runtime,omitempty"`
	// Ready is how the host tells it is ready to serve; nil leaves its registration as the sign.
	Ready *Ready `json:"ready,omitempty" dynamodbav:"ready,omitempty"`
}

// Ready is a readiness check: an HTTP GET of Path on Port answered 2xx or 3xx, or a command that
// exits 0. Exactly one of the two.
type Ready struct {
	Path string   `json:"http_path,omitempty" dynamodbav:"http_path,omitempty"`
	Port int      `json:"port,omitempty" dynamodbav:"port,omitempty"`
	Exec []string `json:"exec,omitempty" dynamodbav:"exec,omitempty"`
}

// LaunchError is a LaunchFile refused: the field at fault and what to do about it.
type LaunchError struct {
	Field   string
	Problem string
}

func (e *LaunchError) Error() string {
	if e.Field == "" {
		return LaunchFile + " " + e.Problem
	}
	return fmt.Sprintf("%s: %s %s", LaunchFile, e.Field, e.Problem)
}

// Bounds of what a LaunchFile may hold.
const (
	maxArgs   = 64
	maxArgLen = 4096
)

// runtimeName is what a runtime may be called: node22, python3.12.
var runtimeName = regexp.MustCompile(`^[a-z][a-z0-9.-]{0,31}$`)

// ParseLaunch reads a LaunchFile strictly (unknown fields refused, so a misspelt "strat" is told
// rather than ignored), checking each field; runtimes are the names the deployment offers. A
// problem is a *LaunchError naming the field.
func ParseLaunch(b []byte, runtimes []string) (Launch, error) {
	var l Launch
	if len(b) > maxLaunchBytes {
		return l, &LaunchError{Problem: fmt.Sprintf("is over %d KiB; it holds a command, a runtime and a readiness check", maxLaunchBytes>>10)}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return l, &LaunchError{Problem: fmt.Sprintf("is not a JSON object of start, runtime and ready (%v)", err)}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return l, &LaunchError{Problem: "has more after its JSON object; keep one object"}
	}
	if err := checkCommand("start", l.Start); err != nil {
		return l, err
	}
	if l.Runtime != "" && !slices.Contains(runtimes, l.Runtime) {
		offered := "only the default (leave runtime out)"
		if len(runtimes) > 0 {
			offered = strings.Join(runtimes, ", ") + ", or leave it out for the default"
		}
		return l, &LaunchError{Field: "runtime", Problem: fmt.Sprintf("%q is not a runtime this deployment offers: choose %s", l.Runtime, offered)}
	}
	if l.Ready != nil {
		if err := CheckReady(*l.Ready); err != nil {
			return l, err
		}
	}
	return l, nil
}

func checkCommand(field string, args []string) error {
	if len(args) > maxArgs {
		return &LaunchError{Field: field, Problem: fmt.Sprintf("has %d arguments, more than %d", len(args), maxArgs)}
	}
	for i, a := range args {
		switch {
		case a == "" && i == 0:
			return &LaunchError{Field: field + "[0]", Problem: "is empty; name the program to run"}
		case len(a) > maxArgLen:
			return &LaunchError{Field: fmt.Sprintf("%s[%d]", field, i), Problem: fmt.Sprintf("is over %d bytes", maxArgLen)}
		case strings.ContainsRune(a, 0):
			return &LaunchError{Field: fmt.Sprintf("%s[%d]", field, i), Problem: "holds a NUL byte"}
		}
	}
	return nil
}

// CheckReady reports what is wrong with a readiness check, as a *LaunchError naming the field, or
// nil when it is exactly one of an HTTP check and a command.
func CheckReady(r Ready) error {
	switch {
	case len(r.Exec) > 0 && (r.Path != "" || r.Port != 0):
		return &LaunchError{Field: "ready", Problem: "gives both exec and an HTTP check; give one"}
	case len(r.Exec) > 0:
		return checkCommand("ready.exec", r.Exec)
	case r.Port < 1 || r.Port > 65535:
		return &LaunchError{Field: "ready.port", Problem: "must be a port from 1 to 65535 (with http_path), or give exec instead"}
	case !strings.HasPrefix(r.Path, "/") || len(r.Path) > 1024 || strings.ContainsAny(r.Path, " \t\r\n"):
		return &LaunchError{Field: "ready.http_path", Problem: "must be a path starting with '/', at most 1,024 bytes, without spaces"}
	}
	return nil
}

// Runtimes are the deployment's runtimes: each name an app's LaunchFile may give, and the image
// (pinned by digest) its hosts run on.
type Runtimes map[string]string

// pinned is an image reference with a digest: repository[:tag]@sha256:<64 hex>.
var pinned = regexp.MustCompile(`^[a-z0-9][a-z0-9./_:-]*@sha256:[0-9a-f]{64}$`)

// ParseRuntimes reads TIDEGATE_APP_RUNTIMES: "name=image@sha256:…,…". Each image must be pinned
// by its digest, so a host runs exactly what the operator reviewed, whatever later happens to a
// tag.
func ParseRuntimes(s string) (Runtimes, error) {
	rs := Runtimes{}
	for entry := range strings.SplitSeq(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name, image, ok := strings.Cut(entry, "=")
		switch {
		case !ok || !runtimeName.MatchString(name):
			return nil, fmt.Errorf("app runtime %q: give name=image@sha256:digest, the name lower-case letters, digits, '.' and '-' (e.g. python3.12=…)", entry)
		case !pinned.MatchString(image):
			return nil, fmt.Errorf("app runtime %s: image %q is not pinned by digest; give repository@sha256:<64 hex digits>, e.g. from `docker buildx imagetools inspect`", name, image)
		case rs[name] != "":
			return nil, fmt.Errorf("app runtime %s is given twice", name)
		}
		rs[name] = image
	}
	return rs, nil
}

// Names are the runtimes' names, sorted.
func (rs Runtimes) Names() []string {
	names := make([]string, 0, len(rs))
	for n := range rs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
