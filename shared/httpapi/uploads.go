package httpapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/ids"
	"github.com/tidegate/tidegate/shared/records"
)

// A Lambda's request body is at most 6 MB, less once API Gateway base64-encodes a binary one, so
// a release over about 4.5 MB cannot come through the API. It goes straight to the sources
// bucket instead, in two steps: POST .../uploads declares the tarball's sha256 and length and
// answers a presigned PUT for exactly those, under a key the API chose; POST .../releases with
// {"upload": id} then reads the object back and checks it as a direct upload is checked before it
// becomes a release.

// UploadPresigner presigns the PUT of an upload's object; s3.PresignClient is the real one.
type UploadPresigner interface {
	PresignPutObject(ctx context.Context, in *s3.PutObjectInput, opts ...func(*s3.PresignOptions)) (*v4.PresignedHTTPRequest, error)
}

var _ UploadPresigner = (*s3.PresignClient)(nil)

// What an upload's caller reads, kept together.
const (
	detailNoUploads     = "this API was started without a presigner for the sources bucket, so it takes releases only as the request's body"
	detailDeclare       = "declare the .tar.gz you will PUT: its sha256 and its length in bytes"
	detailNoUpload      = "app %q has no upload %q: an upload belongs to the org and app it was made for, and is forgotten once it becomes a release; make one with POST /api/v1/apps/%s/uploads"
	detailUploadExpired = "upload %s expired at %s; make a new one with POST /api/v1/apps/%s/uploads and PUT the sources again"
	detailNothingPut    = "nothing was PUT to upload %s yet: PUT the %d bytes you declared to the url its POST answered, with the headers it listed, then make the release"
	detailUploadChanged = "%s: PUT exactly the file whose sha256 and length you declared, or make a new upload for this one"
	problemUploadID     = "the upload id POST /api/v1/apps/{name}/uploads answered (up-…)"
)

// uploadDeclared is the body of POST /api/v1/apps/{name}/uploads.
type uploadDeclared struct {
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

// uploadView is an upload as the API answers it: where and how to PUT the sources.
type uploadView struct {
	Upload string `json:"upload"`
	App    string `json:"app"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
	Method string `json:"method"`
	URL    string `json:"url"`
	// Headers are those the PUT must carry as they are: the URL's signature covers them.
	Headers      map[string]string `json:"headers"`
	URLExpiresAt time.Time         `json:"url_expires_at"`
	ExpiresAt    time.Time         `json:"expires_at"`
}

// createUpload answers POST /api/v1/apps/{name}/uploads: a presigned PUT for the declared
// tarball, good for apps.UploadURLFor, and the upload's id, good for apps.UploadFor. The app need
// not exist yet: its first release creates it.
func (a *api) createUpload(w http.ResponseWriter, r *http.Request) error {
	name, err := appName(r)
	if err != nil {
		return err
	}
	var req uploadDeclared
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if field, problem, tooLarge := apps.CheckDeclared(req.SHA256, req.Bytes); field != "" {
		if tooLarge {
			e := Errorf(CodeTooLarge, detailPackedSize, apps.MaxPackedBytes)
			e.Fields = []FieldProblem{{field, problem}}
			return e
		}
		return Invalid(detailDeclare, FieldProblem{field, problem})
	}
	if a.uploads == nil {
		return Errorf(CodeUnavailable, detailNoUploads)
	}
	now := a.now().UTC()
	u := apps.Upload{ID: ids.New(apps.UploadIDPrefix, now), App: name, SHA256: req.SHA256, Bytes: req.Bytes, CreatedAt: now, ExpiresAt: now.Add(apps.UploadFor)}
	sum, _ := hex.DecodeString(u.SHA256)
	put, err := a.uploads.PresignPutObject(r.Context(), &s3.PutObjectInput{
		Bucket: aws.String(a.sourcesBucket), Key: aws.String(apps.UploadKey(a.sourcesPrefix, u.ID)),
		ContentLength: aws.Int64(u.Bytes), ContentType: aws.String("application/gzip"),
		// S3 refuses a body whose SHA-256 is not this; the release checks it again all the same.
		ChecksumSHA256: aws.String(base64.StdEncoding.EncodeToString(sum)),
	}, s3.WithPresignExpires(apps.UploadURLFor))
	if err != nil {
		return fmt.Errorf("presigning upload %s: %w", u.ID, err)
	}
	if err := a.apps.CreateUpload(r.Context(), orgOf(r.Context()), u); err != nil {
		return err
	}
	headers := map[string]string{}
	for k, v := range put.SignedHeader {
		if !strings.EqualFold(k, "Host") {
			headers[k] = strings.Join(v, ",")
		}
	}
	return writeJSON(w, http.StatusCreated, uploadView{
		Upload: u.ID, App: name, SHA256: u.SHA256, Bytes: u.Bytes, Method: put.Method, URL: put.URL, Headers: headers,
		URLExpiresAt: now.Add(apps.UploadURLFor), ExpiresAt: u.ExpiresAt,
	})
}

// releaseRequest is the JSON body of POST /api/v1/apps/{name}/releases: the upload whose object
// becomes the release.
type releaseRequest struct {
	Upload string `json:"upload"`
}

// releaseFromUpload makes app name's next release from the object of the upload the body names,
// checked as a direct upload is (its bounds, entries, paths, links and tidegate.json) and against
// the sha256 and length its upload declared. The upload is then forgotten and its object deleted.
func (a *api) releaseFromUpload(w http.ResponseWriter, r *http.Request, name, note string) error {
	var req releaseRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if !apps.IsUploadID(req.Upload) {
		return Invalid("name the upload to make the release from", FieldProblem{"upload", problemUploadID})
	}
	ctx, org := r.Context(), orgOf(r.Context())
	u, err := a.apps.Upload(ctx, org, name, req.Upload)
	if errors.Is(err, records.ErrNotFound) {
		return Errorf(CodeNotFound, detailNoUpload, name, req.Upload, name)
	}
	if err != nil {
		return err
	}
	if !a.now().Before(u.ExpiresAt) {
		// Its record was this org's and app's (read above), so the object is theirs to drop.
		a.dropUploadObject(ctx, u.ID)
		return Invalid(fmt.Sprintf(detailUploadExpired, u.ID, u.ExpiresAt.Format(time.RFC3339), name), FieldProblem{"upload", "expired"})
	}
	packed, src, err := a.uploaded(ctx, u)
	if err != nil {
		return err
	}
	rel, err := a.storeRelease(ctx, name, note, packed, src)
	if err != nil {
		return err
	}
	if err := a.apps.DeleteUpload(ctx, org, name, u.ID); err != nil {
		// The release is made; the upload's record goes with its TTL all the same.
		a.log.WarnContext(ctx, "forgetting an upload that became a release", "upload", u.ID, "error", err)
	}
	a.dropUploadObject(ctx, u.ID)
	return writeJSON(w, http.StatusCreated, rel)
}

// dropUploadObject deletes upload id's object once it can make no release: it made one (its
// sources are now stored under their digest, and a used upload is forgotten) or it expired. The
// caller has read the upload's record under the caller's own org and app, so no other org can
// have it dropped. The answer never waits on it: a failed delete is logged, and the bucket's
// lifecycle rule (uploads/, two days) removes the object all the same.
func (a *api) dropUploadObject(ctx context.Context, id string) {
	_, err := a.sources.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(a.sourcesBucket), Key: aws.String(apps.UploadKey(a.sourcesPrefix, id))})
	if err != nil {
		a.log.WarnContext(ctx, "deleting a used upload's object; the bucket's lifecycle rule will", "upload", id, "error", err)
	}
}

// uploaded reads u's object back and checks it: its length against u's before reading it, then
// as a tarball, then its digest against u's.
func (a *api) uploaded(ctx context.Context, u apps.Upload) ([]byte, apps.Sources, error) {
	obj, err := a.sources.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(a.sourcesBucket), Key: aws.String(apps.UploadKey(a.sourcesPrefix, u.ID))})
	if isMissing(err) {
		return nil, apps.Sources{}, Invalid(fmt.Sprintf(detailNothingPut, u.ID, u.Bytes), FieldProblem{"upload", "nothing was PUT to its url"})
	}
	if err != nil {
		return nil, apps.Sources{}, fmt.Errorf("reading upload %s's object: %w", u.ID, err)
	}
	defer obj.Body.Close()
	changed := func(mismatch string) error {
		return Invalid(fmt.Sprintf(detailUploadChanged, mismatch), FieldProblem{"upload", mismatch})
	}
	if n := obj.ContentLength; n != nil {
		if m := apps.UploadMismatch(u, *n, ""); m != "" {
			return nil, apps.Sources{}, changed(m)
		}
	}
	var packed bytes.Buffer
	src, err := apps.CheckTarball(io.TeeReader(http.MaxBytesReader(nil, obj.Body, apps.MaxPackedBytes), &packed))
	if err != nil {
		return nil, apps.Sources{}, tarballError(err)
	}
	if m := apps.UploadMismatch(u, src.Bytes, src.SHA256); m != "" {
		return nil, apps.Sources{}, changed(m)
	}
	return packed.Bytes(), src, nil
}

// isMissing tells an object that is not there.
func isMissing(err error) bool {
	var (
		noKey *types.NoSuchKey
		resp  *awshttp.ResponseError
	)
	return errors.As(err, &noKey) || (errors.As(err, &resp) && resp.HTTPStatusCode() == http.StatusNotFound)
}
