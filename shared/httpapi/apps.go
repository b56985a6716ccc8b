package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/podspec"
	"github.com/tidegate/tidegate/shared/records"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// AppStore keeps hosted apps and their releases; dynamo.AppStore is the real one. The API only
// records what is wanted: the beat starts and stops hosts.
type AppStore interface {
	CreateRelease(ctx context.Context, org string, r apps.Release) (apps.Release, error)
	App(ctx context.Context, org, name string) (apps.App, error)
	Apps(ctx context.Context, org string, limit int, cursor string) ([]apps.App, string, error)
	Releases(ctx context.Context, org, name string, limit int, cursor string) ([]apps.Release, string, error)
	Rollback(ctx context.Context, org, name string, from int, now time.Time) (apps.Release, error)
	SetStopped(ctx context.Context, org, name string, stopped bool, now time.Time) (apps.App, error)
	Delete(ctx context.Context, org, name string) error
	Register(ctx context.Context, host, pod, token string, now time.Time) (org, app string, err error)
	Release(ctx context.Context, org, name string, n int) (apps.Release, error)
	CreateUpload(ctx context.Context, org string, u apps.Upload) error
	Upload(ctx context.Context, org, app, id string) (apps.Upload, error)
	DeleteUpload(ctx context.Context, org, app, id string) error
}

var _ AppStore = (*dynamo.AppStore)(nil)

// SourceObjects stores release sources, reads uploads back and deletes them once used; the S3
// client is the real one.
type SourceObjects interface {
	PutObject(ctx context.Context, in *s3.PutObjectInput, opts ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	GetObject(ctx context.Context, in *s3.GetObjectInput, opts ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, opts ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
}

var _ SourceObjects = (*s3.Client)(nil)

// maxNote bounds a release's note: a commit subject or a sentence, not a changelog.
const maxNote = 500

// What an app's caller reads, kept together.
const (
	detailNoApp      = "org %s has no app %q; upload its first release with POST /api/v1/apps/%s/releases"
	detailNoRelease  = "app %q has no release %d; list them with GET /api/v1/apps/%s/releases"
	detailGzipOnly   = "send the sources as a gzipped tar with Content-Type: application/gzip, or name an upload of them as application/json {\"upload\": \"up-…\"} (got %q)"
	detailPackedSize = "the sources are over %d bytes (10 MiB) packed; send the sources without their dependencies (the host installs those)"
	detailBusy       = "other uploads to app %q kept taking the next release number; retry in a moment"
)

// appView is an app as the API answers it. host is the host the app wants now, named with the
// org's current secrets digest; live_release, live_host and failed_why are null while unset.
type appView struct {
	Name        string     `json:"name"`
	Release     int        `json:"release"`
	LiveRelease *int       `json:"live_release"`
	State       apps.State `json:"state"`
	FailedWhy   *string    `json:"failed_why"`
	Host        string     `json:"host"`
	LiveHost    *string    `json:"live_host"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
}

// appDetail is one app as the API answers it alone: with its last revives (oldest first, each
// with its host's last lines then), which a list leaves out to stay small.
type appDetail struct {
	appView
	Revives []apps.Revive `json:"revives"`
}

func viewApp(a apps.App, secretsDigest string) appView {
	v := appView{
		Name: a.Name, Release: a.Release, State: a.State, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt,
		Host: apps.HostName(a.Org, a.Name, a.Release, a.SHA256, secretsDigest),
	}
	if a.LiveRelease != 0 {
		v.LiveRelease = &a.LiveRelease
	}
	if a.LiveHost != "" {
		v.LiveHost = &a.LiveHost
	}
	if a.FailedWhy != "" {
		v.FailedWhy = &a.FailedWhy
	}
	return v
}

// appName is the {name} of an app's path, checked.
func appName(r *http.Request) (string, error) {
	name := r.PathValue("name")
	if err := apps.CheckName(name); err != nil {
		return "", Invalid("the app's name in the path is not one an app can have", FieldProblem{"name", err.Error()})
	}
	return name, nil
}

func orgOf(ctx context.Context) string { return principalOf(ctx).Tenant.Org }

// uploadRelease makes app name's next release: from the tarball in the body (application/gzip),
// checked as it arrives, or from an upload's object the JSON body names (uploads.go). The first
// release creates the app.
func (a *api) uploadRelease(w http.ResponseWriter, r *http.Request) error {
	name, err := appName(r)
	if err != nil {
		return err
	}
	note := r.URL.Query().Get("note")
	if utf8.RuneCountInString(note) > maxNote || !utf8.ValidString(note) {
		return Invalid("the note is too long", FieldProblem{"note", fmt.Sprintf("at most %d characters of UTF-8", maxNote)})
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case err == nil && mt == "application/json":
		return a.releaseFromUpload(w, r, name, note)
	case err != nil || (mt != "application/gzip" && mt != "application/x-gzip"):
		return Errorf(CodeUnsupported, detailGzipOnly, r.Header.Get("Content-Type"))
	}
	var packed bytes.Buffer
	src, err := apps.CheckTarball(io.TeeReader(http.MaxBytesReader(w, r.Body, apps.MaxPackedBytes), &packed))
	if err != nil {
		return tarballError(err)
	}
	rel, err := a.storeRelease(r.Context(), name, note, packed.Bytes(), src)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, rel)
}

// storeRelease reads src's tidegate.json, stores the checked tarball packed under its digest and
// records it as app name's next release.
func (a *api) storeRelease(ctx context.Context, name, note string, packed []byte, src apps.Sources) (apps.Release, error) {
	var launch *apps.Launch
	if src.Launch != nil {
		l, err := apps.ParseLaunch(src.Launch, a.appRuntimes)
		var bad *apps.LaunchError
		if errors.As(err, &bad) {
			field := apps.LaunchFile
			if bad.Field != "" {
				field += ":" + bad.Field
			}
			return apps.Release{}, Invalid(bad.Error(), FieldProblem{field, bad.Problem})
		}
		launch = &l
	}
	_, err := a.sources.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(a.sourcesBucket), Key: aws.String(apps.SourcesKey(a.sourcesPrefix, src.SHA256)),
		Body: bytes.NewReader(packed), ContentLength: aws.Int64(src.Bytes), ContentType: aws.String("application/gzip"),
	})
	if err != nil {
		return apps.Release{}, fmt.Errorf("storing sources %s: %w", src.SHA256, err)
	}
	rel, err := a.apps.CreateRelease(ctx, orgOf(ctx), apps.Release{
		App: name, SHA256: src.SHA256, Bytes: src.Bytes, Note: note, CreatedAt: a.now().UTC(), Launch: launch,
	})
	if errors.Is(err, dynamo.ErrBusy) {
		return rel, Errorf(CodeConflict, detailBusy, name)
	}
	return rel, err
}

// tarballError words why an upload was refused: too large (413), not fit to unpack (400 naming
// the entry), or cut short.
func tarballError(err error) error {
	var (
		tooLarge *http.MaxBytesError
		bad      *apps.TarballError
	)
	switch {
	case errors.As(err, &tooLarge):
		return Errorf(CodeTooLarge, detailPackedSize, tooLarge.Limit)
	case errors.As(err, &bad):
		return Invalid(bad.Error())
	}
	return Invalid("the upload could not be read to its end: " + err.Error())
}

func (a *api) listApps(w http.ResponseWriter, r *http.Request) error {
	limit, cursor, err := pageParams(r.URL.Query())
	if err != nil {
		return err
	}
	if cursor != "" && apps.CheckName(cursor) != nil {
		return Invalid("cursor is not one this API gave out", FieldProblem{"cursor", "pass next_cursor from the previous page unchanged"})
	}
	org := orgOf(r.Context())
	list, next, err := a.apps.Apps(r.Context(), org, limit, cursor)
	if err != nil {
		return err
	}
	digest, err := a.secrets.Digest(r.Context(), org)
	if err != nil {
		return err
	}
	views := make([]appView, 0, len(list))
	deployer := principalOf(r.Context()).Tenant.Role.CanDeploy()
	for _, app := range list {
		views = append(views, forRole(viewApp(app, digest), deployer))
	}
	return writeJSON(w, http.StatusOK, listPage[appView]{Items: views, NextCursor: nextCursor(next)})
}

// app reads the app the path names, in the caller's org; another org's app is not found.
func (a *api) app(r *http.Request) (apps.App, error) {
	name, err := appName(r)
	if err != nil {
		return apps.App{}, err
	}
	org := orgOf(r.Context())
	app, err := a.apps.App(r.Context(), org, name)
	if errors.Is(err, records.ErrNotFound) {
		return app, Errorf(CodeNotFound, detailNoApp, org, name, name)
	}
	return app, err
}

// writeApp answers app with the host it wants under the org's current secrets.
func (a *api) writeApp(w http.ResponseWriter, r *http.Request, app apps.App) error {
	digest, err := a.secrets.Digest(r.Context(), app.Org)
	if err != nil {
		return err
	}
	deployer := principalOf(r.Context()).Tenant.Role.CanDeploy()
	d := appDetail{appView: forRole(viewApp(app, digest), deployer), Revives: []apps.Revive{}}
	for _, rv := range app.Revives {
		if !deployer {
			rv.Lines = []string{} // what the host printed may hold the org's secrets
		}
		d.Revives = append(d.Revives, rv)
	}
	return writeJSON(w, http.StatusOK, d)
}

// forRole is v as a caller sees it: failed_why quotes what the host printed, which may hold any
// secret of the org, so only a role that may deploy (tenancy.Role.CanDeploy) reads it.
func forRole(v appView, deployer bool) appView {
	if !deployer {
		v.FailedWhy = nil
	}
	return v
}

func (a *api) getApp(w http.ResponseWriter, r *http.Request) error {
	app, err := a.app(r)
	if err != nil {
		return err
	}
	return a.writeApp(w, r, app)
}

func (a *api) listReleases(w http.ResponseWriter, r *http.Request) error {
	limit, cursor, err := pageParams(r.URL.Query())
	if err != nil {
		return err
	}
	if n, convErr := strconv.Atoi(cursor); cursor != "" && (convErr != nil || n < 1) {
		return Invalid("cursor is not one this API gave out", FieldProblem{"cursor", "pass next_cursor from the previous page unchanged"})
	}
	app, err := a.app(r)
	if err != nil {
		return err
	}
	list, next, err := a.apps.Releases(r.Context(), app.Org, app.Name, limit, cursor)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, listPage[apps.Release]{Items: list, NextCursor: nextCursor(next)})
}

type rollbackRequest struct {
	Release int `json:"release"`
}

func (a *api) rollbackApp(w http.ResponseWriter, r *http.Request) error {
	var req rollbackRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if req.Release < 1 {
		return Invalid("name the release to roll back to", FieldProblem{"release", "required: a release number, 1 or more"})
	}
	app, err := a.app(r)
	if err != nil {
		return err
	}
	rel, err := a.apps.Rollback(r.Context(), app.Org, app.Name, req.Release, a.now().UTC())
	switch {
	case errors.Is(err, records.ErrNotFound):
		return Errorf(CodeNotFound, detailNoRelease, app.Name, req.Release, app.Name)
	case errors.Is(err, dynamo.ErrBusy):
		return Errorf(CodeConflict, detailBusy, app.Name)
	case err != nil:
		return err
	}
	return writeJSON(w, http.StatusCreated, rel)
}

func (a *api) stopApp(w http.ResponseWriter, r *http.Request) error {
	return a.setStopped(w, r, true)
}

func (a *api) startApp(w http.ResponseWriter, r *http.Request) error {
	return a.setStopped(w, r, false)
}

func (a *api) setStopped(w http.ResponseWriter, r *http.Request, stopped bool) error {
	name, err := appName(r)
	if err != nil {
		return err
	}
	org := orgOf(r.Context())
	app, err := a.apps.SetStopped(r.Context(), org, name, stopped, a.now())
	if errors.Is(err, records.ErrNotFound) {
		return Errorf(CodeNotFound, detailNoApp, org, name, name)
	}
	if err != nil {
		return err
	}
	return a.writeApp(w, r, app)
}

func (a *api) deleteApp(w http.ResponseWriter, r *http.Request) error {
	name, err := appName(r)
	if err != nil {
		return err
	}
	org := orgOf(r.Context())
	if err := a.apps.Delete(r.Context(), org, name); errors.Is(err, records.ErrNotFound) {
		return Errorf(CodeNotFound, detailNoApp, org, name, name)
	} else if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// What a registering host reads.
const (
	detailNoHostToken = "send the host token the host was started with as 'Authorization: Bearer <token>'"
	detailBadHostTok  = "the host token is not %s's; a host registers with the token it was started with"
	detailNoHost      = "no host %q is known; a host registers under the name it was started with"
	detailNotWanted   = "app %s no longer wants host %s (a newer release or secret replaced it, or the app was stopped or failed); stop this host"
	detailNoPodUID    = "a host registers from its pod: POST to the URL in its TIDEGATE_REGISTER_URL, which names the pod"
	problemPodUID     = "must be the UID of the pod the process runs in, as %s holds it"
)

// podUIDParam names, on a registration, the pod the registering process runs in: the registration
// counts for that pod alone, not for a pod of the same host started again.
const podUIDParam = podspec.PodUIDParam

// registerHost is called by a hosted app's host with its own token, not an API key, and the UID of
// the pod it runs in: it makes that pod of the host the app's registered one, which the beat then
// makes live.
func (a *api) registerHost(w http.ResponseWriter, r *http.Request) error {
	host := r.PathValue("host")
	if !tenancy.IsDNSLabel(host) {
		return Errorf(CodeNotFound, detailNoHost, host)
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if token = strings.TrimSpace(token); !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return Errorf(CodeUnauthenticated, detailNoHostToken)
	}
	pod := r.URL.Query().Get(podUIDParam)
	if !apps.IsPodUID(pod) {
		return Invalid(detailNoPodUID, FieldProblem{podUIDParam, fmt.Sprintf(problemPodUID, podspec.EnvPodUID)})
	}
	_, app, err := a.apps.Register(r.Context(), host, pod, token, a.now())
	switch {
	case errors.Is(err, records.ErrNotFound):
		return Errorf(CodeNotFound, detailNoHost, host)
	case errors.Is(err, dynamo.ErrBadHostToken):
		return Errorf(CodeUnauthenticated, detailBadHostTok, host)
	case errors.Is(err, dynamo.ErrHostNotWanted):
		return Errorf(CodeConflict, detailNotWanted, app, host)
	case err != nil:
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"host": host, "app": app, "registered": true})
}
