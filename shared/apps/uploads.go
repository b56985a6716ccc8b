package apps

import (
	"fmt"
	"regexp"
	"time"
)

// Upload is a release's sources on their way to the sources bucket: the caller declared their
// digest and length, then PUTs them to a presigned URL under a key the API chose (UploadKey); a
// release that names the upload is made only from an object that matches both. An upload belongs
// to one org's app: another org naming its id finds nothing.
type Upload struct {
	ID        string    `dynamodbav:"id"`
	App       string    `dynamodbav:"app"`
	SHA256    string    `dynamodbav:"sha256"`
	Bytes     int64     `dynamodbav:"bytes"`
	CreatedAt time.Time `dynamodbav:"created_at"`
	// ExpiresAt is when the upload can no longer become a release.
	ExpiresAt time.Time `dynamodbav:"expires"`
}

// How long an upload lasts. Its URL is good for 15 minutes: ten megabytes at a slow 100 kB/s
// take under two. The upload itself may become a release for a day, so a deploy pipeline that
// uploads in one step and releases in another has room; after that its record and object go.
const (
	UploadURLFor = 15 * time.Minute
	UploadFor    = 24 * time.Hour
)

// UploadIDPrefix starts every upload id (ids.New's 26 characters follow).
const UploadIDPrefix = "up-"

var (
	uploadID  = regexp.MustCompile(`^up-[0-9a-v]{26}$`)
	sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// IsUploadID says s has the shape of an upload id the API gives out.
func IsUploadID(s string) bool { return uploadID.MatchString(s) }

// IsSHA256 says s is a SHA-256 digest in lowercase hex, as releases name their sources.
func IsSHA256(s string) bool { return sha256Hex.MatchString(s) }

// UploadsDir is the folder of the sources bucket (under its prefix) that uploads are PUT to;
// the bucket's lifecycle rule deletes what is left there after UploadFor.
const UploadsDir = "uploads/"

// UploadKey is where upload id's object is PUT, chosen by the API: the caller names only the id.
func UploadKey(prefix, id string) string { return prefix + UploadsDir + id + ".tar.gz" }

// CheckDeclared reports what is wrong with an upload's declared digest and length, naming the
// field, or "" when both are fine. Too many bytes is told apart (tooLarge), as a 413.
func CheckDeclared(sha string, bytes int64) (field, problem string, tooLarge bool) {
	switch {
	case !IsSHA256(sha):
		return "sha256", "the SHA-256 of the .tar.gz, 64 lowercase hex digits (`sha256sum app.tar.gz`)", false
	case bytes < 1:
		return "bytes", "the length of the .tar.gz in bytes, 1 or more", false
	case bytes > MaxPackedBytes:
		return "bytes", fmt.Sprintf("at most %d (10 MiB) packed; send the sources without their dependencies (the host installs those)", MaxPackedBytes), true
	}
	return "", "", false
}

// UploadMismatch says how an uploaded object differs from what its upload declared, or "" when
// it matches: its length first (known before reading it), then its digest.
func UploadMismatch(u Upload, gotBytes int64, gotSHA256 string) string {
	switch {
	case gotBytes != u.Bytes:
		return fmt.Sprintf("the object PUT to upload %s holds %d bytes, not the %d declared", u.ID, gotBytes, u.Bytes)
	case gotSHA256 != "" && gotSHA256 != u.SHA256:
		return fmt.Sprintf("the object PUT to upload %s has sha256 %s, not the %s declared", u.ID, gotSHA256, u.SHA256)
	}
	return ""
}
