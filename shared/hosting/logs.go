package hosting

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/hostplan"
	"github.com/tidegate/tidegate/shared/podspec"
)

// HostLines are the last lines of one of an app's hosts, and where they were read.
type HostLines struct {
	Release int
	Host    string
	// From is FromCluster, FromRecord or FromRevive; empty with no lines.
	From  string
	Lines []string
}

// Where a host's lines were read.
const (
	// FromCluster: read now from the host's pod (the install's while it installs).
	FromCluster = "cluster"
	// FromRecord: kept when the host's release failed.
	FromRecord = "record"
	// FromRevive: kept when the beat last ran the host again after its process exited.
	FromRevive = "revive"
)

// ErrNoLinesLeft is a release none of whose hosts has a pod left to read, and whose lines were
// never kept: it neither failed nor had a host revived.
var ErrNoLinesLeft = errors.New("no host of the release is left, and none of its lines were kept")

// Logs answers the last lines of one of a's hosts. With rel nil, the live host's (the one that
// serves, whatever became of a newer release), else the wanted host's while it deploys, else
// those the live host's last revive kept (while its pod is replaced), else those kept when the
// wanted release failed; none before any host ran. With rel, release rel's: a
// pod of it still in the cluster (the live or the wanted host first), else the lines kept when it
// failed, else those kept at its newest revive; ErrNoLinesLeft when there are none. Only a's own
// hosts are read, selected by its stamp.
func (h *Hoster) Logs(ctx context.Context, a apps.App, rel *apps.Release, lines int) (HostLines, error) {
	w, err := h.read(ctx, a.Org, a.Name)
	if err != nil {
		return HostLines{}, err
	}
	key := podspec.AppKey(a.Org, a.Name)
	var want string
	for _, p := range w.plan {
		if p.Key == key {
			want = p.Host
		}
	}
	if rel == nil {
		for _, name := range []string{a.LiveHost, want} {
			if out, ok, err := w.podLines(ctx, name, lines); ok || err != nil {
				return out, err
			}
		}
		if rv, ok := a.LastRevive(a.LiveRelease); ok && a.LiveRelease != 0 {
			return HostLines{Release: rv.Release, Host: rv.Host, From: FromRevive, Lines: rv.Lines}, nil // its pod is being replaced
		}
		if a.Failed() && a.FailedWhy != "" {
			return HostLines{Release: a.FailedRelease, Host: a.FailedHost, From: FromRecord, Lines: strings.Split(a.FailedWhy, "\n")}, nil
		}
		return HostLines{}, nil
	}
	for _, name := range w.podsOf(rel.Number, a.LiveHost, want) {
		if out, ok, err := w.podLines(ctx, name, lines); ok || err != nil {
			return out, err
		}
	}
	switch rv, revived := a.LastRevive(rel.Number); {
	case rel.FailedWhy != "":
		return HostLines{Release: rel.Number, Host: rel.FailedHost, From: FromRecord, Lines: strings.Split(rel.FailedWhy, "\n")}, nil
	case a.FailedRelease == rel.Number && a.FailedWhy != "":
		// A release that failed before releases kept their failure.
		return HostLines{Release: rel.Number, Host: a.FailedHost, From: FromRecord, Lines: strings.Split(a.FailedWhy, "\n")}, nil
	case revived:
		return HostLines{Release: rel.Number, Host: rv.Host, From: FromRevive, Lines: rv.Lines}, nil
	}
	return HostLines{}, ErrNoLinesLeft
}

// podsOf names the pods read that run release, first among them those of first (in its order),
// then the rest by name: a release's hosts differ only by their org's secrets digest.
func (w *world) podsOf(release int, first ...string) []string {
	var rest []string
	for name, info := range w.podsByName {
		if n, ok := podspec.ReleaseOf(info.spec.p); ok && n == release && !slices.Contains(first, name) {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	var out []string
	for _, name := range first {
		if info, ok := w.podsByName[name]; ok && name != "" {
			if n, ok := podspec.ReleaseOf(info.spec.p); ok && n == release && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return append(out, rest...)
}

// podLines reads the last lines of host name's pod, the install's while it installs or when the
// install failed; ok is false when the beat read no pod of that name.
func (w *world) podLines(ctx context.Context, name string, lines int) (HostLines, bool, error) {
	info, ok := w.podsByName[name]
	if name == "" || !ok {
		return HostLines{}, false, nil
	}
	c, _ := info.spec.container()
	container := podspec.AppContainer
	if c.Installing || c.InstallFailed {
		container = podspec.InstallContainer
	}
	out, err := w.cluster.logs(ctx, name, container, lines, false)
	release, _ := podspec.ReleaseOf(info.spec.p)
	return HostLines{Release: release, Host: name, From: FromCluster, Lines: out}, true, err
}

// recordRevive keeps, with the crash of the host of pod p, its last lines on a's record.
func (h *Hoster) recordRevive(ctx context.Context, a apps.App, p podRef, verdict hostplan.Reason, lines []string) error {
	release, _ := podspec.ReleaseOf(p.p)
	return h.Apps.RecordRevive(ctx, a.Org, a.Name, apps.Revive{Host: p.p.Name, Release: release, Verdict: string(verdict), At: h.now(), Lines: lines})
}
