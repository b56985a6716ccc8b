package httpapi_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/tidegate/tidegate/shared/apps"
)

// declare starts an upload of tarball for app as key's holder, answering the status and body.
func (st *appStack) declare(t *testing.T, key, app string, sha string, n int) (int, map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"sha256": sha, "bytes": n})
	return st.send(t, "POST", "/api/v1/apps/"+app+"/uploads", key, "application/json", body)
}

// put PUTs body to the upload's presigned URL with the headers it listed, as a plain client
// with no credentials of its own.
func put(t *testing.T, up map[string]any, body []byte) {
	t.Helper()
	req, err := http.NewRequest(up["method"].(string), up["url"].(string), bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range up["headers"].(map[string]any) {
		if !strings.EqualFold(k, "Content-Length") {
			req.Header.Set(k, v.(string))
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 {
		t.Fatalf("PUT to the upload's URL = %d %s", resp.StatusCode, b)
	}
}

// release makes app's next release from upload id as key's holder.
func (st *appStack) releaseFrom(t *testing.T, key, app, id string) (int, map[string]any) {
	t.Helper()
	return st.send(t, "POST", "/api/v1/apps/"+app+"/releases?note=big", key, "application/json", []byte(`{"upload":"`+id+`"}`))
}

// TestUploadThroughS3: a 9 MB release, over what a Lambda's request body can carry, goes to the
// bucket by a presigned PUT and becomes a release once the API has read it back and checked it.
func TestUploadThroughS3(t *testing.T) {
	st := newAppStack(t)
	noise := make([]byte, 9<<20) // random bytes do not compress: the tarball stays over 9 MB
	_, _ = rand.Read(noise)
	big := sources(t, map[string]string{"package.json": `{"name":"web"}`, "noise.bin": string(noise)})
	if len(big) < 9<<20 {
		t.Fatalf("the tarball is %d bytes, want over 9 MiB", len(big))
	}
	status, up := st.declare(t, st.deployer, "web", digest(big), len(big))
	if status != 201 {
		t.Fatalf("POST uploads = %d %v, want 201", status, up)
	}
	id, _ := up["upload"].(string)
	headers, _ := up["headers"].(map[string]any)
	if !apps.IsUploadID(id) || up["method"] != "PUT" || !strings.Contains(up["url"].(string), st.prefix+"uploads/"+id+".tar.gz") ||
		headers["Content-Length"] != fmt.Sprint(len(big)) || headers["X-Amz-Checksum-Sha256"] == nil || up["expires_at"] == nil {
		t.Fatalf("upload = %v, want an id, a PUT under the prefix's uploads/ signing the length and the sha256", up)
	}
	put(t, up, big)
	status, rel := st.releaseFrom(t, st.deployer, "web", id)
	if status != 201 || number(rel["release"]) != 1 || rel["sha256"] != digest(big) || number(rel["bytes"]) != len(big) || rel["note"] != "big" {
		t.Fatalf("release from the upload = %d %v, want release 1 of the upload's digest and length", status, rel)
	}
	obj, err := st.s3.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(st.bucket), Key: aws.String(apps.SourcesKey(st.prefix, digest(big)))})
	if err != nil {
		t.Fatalf("the release's sources are not in S3 under their digest: %v", err)
	}
	stored, _ := io.ReadAll(obj.Body)
	if !bytes.Equal(stored, big) {
		t.Errorf("S3 holds %d bytes under the digest, want the %d uploaded", len(stored), len(big))
	}
	if status, out := st.releaseFrom(t, st.deployer, "web", id); status != 404 {
		t.Errorf("a second release from the same upload = %d %v, want 404: it was used", status, out)
	}
	if st.hasObject(t, apps.UploadKey(st.prefix, id)) {
		t.Errorf("after release 1 was made from upload %s its object is still under uploads/, want it deleted", id)
	}
	// A small release still comes as the body.
	if status, out := st.upload(t, "web", sources(t, map[string]string{"index.js": "x"})); status != 201 || number(out["release"]) != 2 {
		t.Errorf("direct upload after one through S3 = %d %v, want release 2", status, out)
	}
}

// hasObject says the bucket holds key.
func (st *appStack) hasObject(t *testing.T, key string) bool {
	t.Helper()
	_, err := st.s3.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(st.bucket), Key: aws.String(key)})
	var resp *awshttp.ResponseError
	if errors.As(err, &resp) && resp.HTTPStatusCode() == http.StatusNotFound {
		return false
	}
	if err != nil {
		t.Fatalf("HEAD %s: %v", key, err)
	}
	return true
}

// TestUploadObjectDroppedByItsOwnerAlone: a hostile org cannot have another org's upload object
// deleted: naming its id (for an app of the same name, or an expired upload), or its key, is
// refused before anything is deleted, and the owner still makes its release from it. An expired
// upload's object is deleted when its own org names it, since it can make no release.
func TestUploadObjectDroppedByItsOwnerAlone(t *testing.T) {
	st := newAppStack(t)
	good := sources(t, map[string]string{"index.js": "serve()\n"})
	status, up := st.declare(t, st.deployer, "web", digest(good), len(good))
	if status != 201 {
		t.Fatalf("POST uploads = %d %v", status, up)
	}
	id := up["upload"].(string)
	key := apps.UploadKey(st.prefix, id)
	put(t, up, good)
	for _, named := range []string{id, key, "uploads/" + id + ".tar.gz", "up-../../" + key} {
		if status, out := st.releaseFrom(t, st.beta, "web", named); status != 404 && status != 400 {
			t.Errorf("beta releasing acme's upload as %q = %d %v, want 404 or 400", named, status, out)
		}
		if !st.hasObject(t, key) {
			t.Fatalf("after beta named acme's upload as %q, acme's object %s is gone", named, key)
		}
	}
	if status, out := st.releaseFrom(t, st.deployer, "web", id); status != 201 {
		t.Fatalf("acme's release from its upload after beta's tries = %d %v, want 201", status, out)
	}
	if st.hasObject(t, key) {
		t.Errorf("after acme's release from upload %s its object is still there", id)
	}

	old := apps.Upload{ID: "up-00000000000000000000000001", App: "web", SHA256: digest(good), Bytes: int64(len(good)), CreatedAt: time.Now().Add(-48 * time.Hour), ExpiresAt: time.Now().Add(-24 * time.Hour)}
	if err := st.store.CreateUpload(context.Background(), "acme", old); err != nil {
		t.Fatal(err)
	}
	oldKey := apps.UploadKey(st.prefix, old.ID)
	if _, err := st.s3.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(st.bucket), Key: aws.String(oldKey), Body: bytes.NewReader(good)}); err != nil {
		t.Fatal(err)
	}
	if status, out := st.releaseFrom(t, st.beta, "web", old.ID); status != 404 || !st.hasObject(t, oldKey) {
		t.Errorf("beta naming acme's expired upload = %d %v, object kept %v; want 404 and the object kept", status, out, st.hasObject(t, oldKey))
	}
	if status, out := st.releaseFrom(t, st.deployer, "web", old.ID); status != 400 || !strings.Contains(out["detail"].(string), "expired") {
		t.Errorf("acme's release from its expired upload = %d %v, want 400 saying so", status, out)
	}
	if st.hasObject(t, oldKey) {
		t.Errorf("acme's expired upload %s was refused but its object is still there, want it deleted", old.ID)
	}
}

// TestS3UploadRefusals: bad declarations, another org's or app's upload, nothing PUT, an object
// changed after it was declared, and an unfit tarball are each a 4xx saying what to fix.
func TestS3UploadRefusals(t *testing.T) {
	st := newAppStack(t)
	good := sources(t, map[string]string{"index.js": "serve()\n"})
	sha := digest(good)
	for _, tt := range []struct {
		name       string
		body       string
		wantStatus int
		want       string
	}{
		{"upper-case digest", fmt.Sprintf(`{"sha256":%q,"bytes":10}`, strings.ToUpper(sha)), 400, "sha256"},
		{"short digest", fmt.Sprintf(`{"sha256":%q,"bytes":10}`, sha[:10]), 400, "sha256"},
		{"no bytes", fmt.Sprintf(`{"sha256":%q}`, sha), 400, "bytes"},
		{"too many bytes", fmt.Sprintf(`{"sha256":%q,"bytes":%d}`, sha, apps.MaxPackedBytes+1), 413, "bytes"},
		{"unknown field", fmt.Sprintf(`{"sha256":%q,"bytes":10,"key":"sources/x"}`, sha), 400, "key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, out := st.send(t, "POST", "/api/v1/apps/web/uploads", st.deployer, "application/json", []byte(tt.body))
			if status != tt.wantStatus || !strings.Contains(fmt.Sprint(out["fields"], out["detail"]), tt.want) {
				t.Errorf("= %d %v, want %d naming %s", status, out, tt.wantStatus, tt.want)
			}
		})
	}

	status, up := st.declare(t, st.deployer, "web", sha, len(good))
	if status != 201 {
		t.Fatalf("POST uploads = %d %v", status, up)
	}
	id := up["upload"].(string)
	// Another org naming acme's upload, even for an app of the same name, finds nothing; nor does
	// another app of acme's.
	if status, out := st.releaseFrom(t, st.beta, "web", id); status != 404 || !strings.Contains(out["detail"].(string), "no upload") {
		t.Errorf("beta releasing acme's upload = %d %v, want 404", status, out)
	}
	if status, out := st.releaseFrom(t, st.deployer, "api", id); status != 404 {
		t.Errorf("releasing web's upload as app api = %d %v, want 404", status, out)
	}
	if status, out := st.releaseFrom(t, st.deployer, "web", "up-../../sources/x"); status != 400 || !strings.Contains(fmt.Sprint(out["fields"]), "upload") {
		t.Errorf("an upload id that is no id = %d %v, want 400 naming upload", status, out)
	}
	if status, out := st.releaseFrom(t, st.deployer, "web", id); status != 400 || !strings.Contains(out["detail"].(string), "nothing was PUT") {
		t.Errorf("release before the PUT = %d %v, want 400 saying nothing was PUT", status, out)
	}

	// The stand-in takes any body on a presigned PUT; S3 would refuse these, and the API does.
	other := good
	for c := 'a'; len(other) != len(good) || bytes.Equal(other, good); c++ {
		other = sources(t, map[string]string{"index.js": "serv" + string(c) + "()\n"})
	}
	for _, tt := range []struct {
		name string
		body []byte
		want string
	}{
		{"other bytes", append([]byte(nil), other...), "has sha256 " + digest(other)},
		{"longer", append(append([]byte(nil), good...), 0), fmt.Sprintf("holds %d bytes, not the %d declared", len(good)+1, len(good))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			put(t, up, tt.body)
			status, out := st.releaseFrom(t, st.deployer, "web", id)
			if status != 400 || !strings.Contains(out["detail"].(string), tt.want) || !strings.Contains(fmt.Sprint(out["fields"]), "upload") {
				t.Errorf("release from a changed object = %d %v, want 400 naming upload: %s", status, out, tt.want)
			}
		})
	}

	link := sources(t, map[string]string{"config@": ""})
	status, up = st.declare(t, st.deployer, "web", digest(link), len(link))
	if status != 201 {
		t.Fatal(status, up)
	}
	put(t, up, link)
	if status, out := st.releaseFrom(t, st.deployer, "web", up["upload"].(string)); status != 400 || !strings.Contains(out["detail"].(string), `"config"`) {
		t.Errorf("release from an upload holding a link = %d %v, want 400 naming the entry", status, out)
	}

	old := apps.Upload{ID: "up-00000000000000000000000000", App: "web", SHA256: sha, Bytes: int64(len(good)), CreatedAt: time.Now().Add(-48 * time.Hour), ExpiresAt: time.Now().Add(-24 * time.Hour)}
	if err := st.store.CreateUpload(context.Background(), "acme", old); err != nil {
		t.Fatal(err)
	}
	if status, out := st.releaseFrom(t, st.deployer, "web", old.ID); status != 400 || !strings.Contains(out["detail"].(string), "expired") {
		t.Errorf("release from an expired upload = %d %v, want 400 saying so", status, out)
	}
	if status, out := st.send(t, "GET", "/api/v1/apps/web", st.deployer, "", nil); status != 404 {
		t.Errorf("after only refusals, GET /api/v1/apps/web = %d %v, want 404", status, out)
	}
}
