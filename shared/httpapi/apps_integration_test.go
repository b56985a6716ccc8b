package httpapi_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/hosting"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/kube/typed"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// appStack is the API on per-test tables and a per-test prefix of the sources bucket, with keys
// for an admin and a member of org acme, an admin of org beta, and every log line it wrote.
type appStack struct {
	api            http.Handler
	store          *dynamo.AppStore
	s3             *s3.Client
	bucket, prefix string
	// deployer deploys acme's apps; member, of acme too, may not.
	admin, deployer, member, beta string
	hosting                       *hosting.Hoster // nil unless newAppStackHosted

	mu     sync.Mutex
	bodies []string // every response body, to check no secret value ever appears in one
	logs   *bytes.Buffer
}

func newAppStack(t *testing.T) *appStack {
	t.Helper()
	return newAppStackHosted(t, false)
}

// newAppStackHosted is newAppStack, with a Hoster reading hosts in a namespace of the sandbox
// cluster when hosted.
func newAppStackHosted(t *testing.T, hosted bool) *appStack {
	t.Helper()
	tables, db := testenv.Tables(t)
	bucket, prefix, s3c := testenv.Bucket(t)
	ctx := context.Background()
	tenants := dynamo.NewTenantStore(db, tables.Control)
	st := &appStack{store: dynamo.NewAppStore(db, tables), s3: s3c, bucket: bucket, prefix: prefix, logs: &bytes.Buffer{}}
	now := time.Now()
	for _, tn := range []struct {
		name, org string
		role      tenancy.Role
		key       *string
	}{{"ops", "acme", tenancy.RoleAdmin, &st.admin}, {"dev", "acme", tenancy.RoleDeployer, &st.deployer}, {"crew", "acme", tenancy.RoleMember, &st.member},
		{"rival", "beta", tenancy.RoleAdmin, &st.beta}} {
		if err := tenants.PutTenant(ctx, tenancy.Tenant{Name: tn.name, Org: tn.org, Namespaces: []string{"team-a"}, Role: tn.role, CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
		*tn.key, _ = tenancy.NewKey()
		if err := tenants.AddKey(ctx, tn.name, *tn.key, now); err != nil {
			t.Fatal(err)
		}
	}
	box := testenv.Keyring(t, db, tables.Control)
	if hosted {
		ns, sb := testenv.Namespace(t)
		st.hosting = &hosting.Hoster{
			Region: "us-east-1", Namespace: ns, Stack: tables.Control, Apps: st.store,
			Secrets: dynamo.NewSecretStore(db, tables.Control), Clusters: typed.New(regionCluster(t, sb.Kubeconfig)),
		}
	}
	d := httpapi.Deps{
		Log:        slog.New(slog.NewTextHandler(lockedWriter{&st.mu, st.logs}, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Principals: tenants, Apps: st.store, Secrets: dynamo.NewSecretStore(db, tables.Control), Sealer: box,
		Sources: s3c, SourcesBucket: bucket, SourcesPrefix: prefix, Uploads: s3.NewPresignClient(s3c),
	}
	if st.hosting != nil {
		d.Hosting = st.hosting // left nil otherwise: a nil *Hoster would be a HostingView that is not nil
	}
	st.api = served(t, d)
	return st
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// send makes one request and answers the status and the decoded body (nil when empty).
func (st *appStack) send(t *testing.T, method, path, auth, contentType string, body []byte) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	st.api.ServeHTTP(rec, req)
	st.mu.Lock()
	st.bodies = append(st.bodies, rec.Body.String())
	st.mu.Unlock()
	var out map[string]any
	if rec.Body.Len() > 0 {
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("%s %s: body is not JSON: %q", method, path, rec.Body)
		}
	}
	return rec.Code, out
}

func (st *appStack) upload(t *testing.T, app string, tarball []byte) (int, map[string]any) {
	t.Helper()
	return st.send(t, "POST", "/api/v1/apps/"+app+"/releases?note=first+try", st.deployer, "application/gzip", tarball)
}

// sources is a gzipped tar of files (name → content, in name order); a name ending in "@" is a
// symlink to /etc.
func sources(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, name := range slicesSorted(files) {
		h := &tar.Header{Name: name, Mode: 0o644, Typeflag: tar.TypeReg, Size: int64(len(files[name]))}
		if link, ok := strings.CutSuffix(name, "@"); ok {
			h = &tar.Header{Name: link, Typeflag: tar.TypeSymlink, Linkname: "/etc"}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := io.WriteString(tw, files[name]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func slicesSorted(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func number(v any) int {
	f, _ := v.(float64)
	return int(f)
}

func TestUploadRelease(t *testing.T) {
	st := newAppStack(t)
	first := sources(t, map[string]string{"package.json": `{"name":"web"}`, "index.js": "serve()\n"})
	status, out := st.upload(t, "web", first)
	if status != 201 {
		t.Fatalf("POST /api/v1/apps/web/releases = %d %v, want 201", status, out)
	}
	if out["app"] != "web" || number(out["release"]) != 1 || out["sha256"] != digest(first) || number(out["bytes"]) != len(first) || out["note"] != "first try" || out["created_at"] == nil {
		t.Errorf("first release = %v, want web release 1 with the upload's digest, length and note", out)
	}
	obj, err := st.s3.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(st.bucket), Key: aws.String(st.prefix + "sources/" + digest(first) + ".tar.gz")})
	if err != nil {
		t.Fatalf("the sources are not in S3 under their digest: %v", err)
	}
	stored, _ := io.ReadAll(obj.Body)
	if !bytes.Equal(stored, first) {
		t.Errorf("S3 holds %d bytes under the digest, want the %d uploaded", len(stored), len(first))
	}

	second := sources(t, map[string]string{"index.js": "serve(2)\n"})
	if status, out := st.upload(t, "web", second); status != 201 || number(out["release"]) != 2 {
		t.Errorf("second upload = %d %v, want 201 release 2", status, out)
	}
	status, app := st.send(t, "GET", "/api/v1/apps/web", st.admin, "", nil)
	wantHost := apps.HostName("acme", "web", 2, digest(second), apps.SecretsDigest(nil))
	if status != 200 || number(app["release"]) != 2 || app["state"] != "deploying" || app["host"] != wantHost || app["live_release"] != nil || app["live_host"] != nil || app["failed_why"] != nil {
		t.Errorf("GET /api/v1/apps/web = %d %v, want release 2 deploying on %s, nothing live", status, app, wantHost)
	}
	if status, list := st.send(t, "GET", "/api/v1/apps", st.deployer, "", nil); status != 200 || len(list["items"].([]any)) != 1 {
		t.Errorf("GET /api/v1/apps = %d %v, want web", status, list)
	}
	status, rels := st.send(t, "GET", "/api/v1/apps/web/releases?limit=1", st.deployer, "", nil)
	items, _ := rels["items"].([]any)
	if status != 200 || len(items) != 1 || number(items[0].(map[string]any)["release"]) != 2 || rels["next_cursor"] == nil {
		t.Fatalf("GET releases?limit=1 = %d %v, want release 2 and a cursor", status, rels)
	}
	status, rels = st.send(t, "GET", "/api/v1/apps/web/releases?cursor="+rels["next_cursor"].(string), st.deployer, "", nil)
	if items, _ := rels["items"].([]any); status != 200 || len(items) != 1 || number(items[0].(map[string]any)["release"]) != 1 || rels["next_cursor"] != nil {
		t.Errorf("GET releases, second page = %d %v, want release 1 and no cursor", status, rels)
	}

	tests := []struct {
		name, path, contentType string
		wantStatus              int
		want                    string
	}{
		{"long note", "/api/v1/apps/web/releases?note=" + strings.Repeat("n", 501), "application/gzip", 400, "note"},
		{"bad name", "/api/v1/apps/Web_App/releases", "application/gzip", 400, "at most 40"},
		{"name too long", "/api/v1/apps/" + strings.Repeat("a", 41) + "/releases", "application/gzip", 400, "at most 40"},
		{"not gzip's type", "/api/v1/apps/web/releases", "text/plain", 415, "application/gzip"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := st.send(t, "POST", tt.path, st.deployer, tt.contentType, first)
			if status != tt.wantStatus || !strings.Contains(fmt.Sprint(out), tt.want) {
				t.Errorf("= %d %v, want %d naming %q", status, out, tt.wantStatus, tt.want)
			}
		})
	}
}

func TestUploadRefusals(t *testing.T) {
	st := newAppStack(t)
	// Random bytes do not compress: a tarball of 11 MiB of them is over 10 MiB packed.
	noise := make([]byte, 11<<20)
	_, _ = rand.Read(noise)
	big := sources(t, map[string]string{"noise.bin": string(noise)})
	tests := []struct {
		name       string
		body       []byte
		wantStatus int
		want       string
	}{
		{"dot-dot", sources(t, map[string]string{"ok.js": "x", "../evil": "x"}), 400, `"../evil"`},
		{"absolute path", sources(t, map[string]string{"/etc/passwd": "root"}), 400, `"/etc/passwd"`},
		{"symlink", sources(t, map[string]string{"config@": ""}), 400, `"config"`},
		{"not gzip", []byte("just text"), 400, "not a gzip"},
		{"too big", big, 413, "10485760"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := st.upload(t, "web", tt.body)
			detail, _ := out["detail"].(string)
			if status != tt.wantStatus || !strings.Contains(detail, tt.want) {
				t.Errorf("upload = %d %v, want %d with a detail naming %s", status, out, tt.wantStatus, tt.want)
			}
		})
	}
	if status, out := st.send(t, "GET", "/api/v1/apps/web", st.deployer, "", nil); status != 404 {
		t.Errorf("after only refusals, GET /api/v1/apps/web = %d %v, want 404", status, out)
	}
}

func TestConcurrentUploads(t *testing.T) {
	st := newAppStack(t)
	const n = 6
	var wg sync.WaitGroup
	got := make([]int, n)
	for i := range n {
		wg.Go(func() {
			status, out := st.upload(t, "web", sources(t, map[string]string{"index.js": fmt.Sprint(i)}))
			if status != 201 {
				t.Errorf("upload #%d = %d %v", i, status, out)
			}
			got[i] = number(out["release"])
		})
	}
	wg.Wait()
	slices.Sort(got)
	if !slices.Equal(got, []int{1, 2, 3, 4, 5, 6}) {
		t.Errorf("release numbers of %d concurrent uploads = %v, want 1 to %d, each once", n, got, n)
	}
}

func TestAppLifecycle(t *testing.T) {
	st := newAppStack(t)
	v1 := sources(t, map[string]string{"index.js": "1"})
	st.upload(t, "web", v1)
	st.upload(t, "web", sources(t, map[string]string{"index.js": "2"}))

	status, out := st.send(t, "POST", "/api/v1/apps/web/rollback", st.deployer, "application/json", []byte(`{"release": 1}`))
	if status != 201 || number(out["release"]) != 3 || number(out["rollback_of"]) != 1 || out["sha256"] != digest(v1) {
		t.Errorf("rollback to 1 = %d %v, want 201 release 3 with release 1's sources", status, out)
	}
	for body, want := range map[string]int{`{"release": 9}`: 404, `{}`: 400, `{"release": "one"}`: 400, `{"release": 1, "x": 1}`: 400} {
		if status, out := st.send(t, "POST", "/api/v1/apps/web/rollback", st.deployer, "application/json", []byte(body)); status != want {
			t.Errorf("rollback %s = %d %v, want %d", body, status, out, want)
		}
	}

	if status, out := st.send(t, "POST", "/api/v1/apps/web/stop", st.deployer, "", nil); status != 200 || out["state"] != "stopped" {
		t.Errorf("stop = %d %v, want 200 stopped", status, out)
	}
	if status, out := st.send(t, "POST", "/api/v1/apps/web/start", st.deployer, "", nil); status != 200 || out["state"] != "deploying" {
		t.Errorf("start = %d %v, want 200 deploying", status, out)
	}

	// Another org's tenant finds nothing of acme's, not even to stop or delete.
	for _, rq := range []struct{ method, path string }{
		{"GET", "/api/v1/apps/web"}, {"GET", "/api/v1/apps/web/releases"}, {"POST", "/api/v1/apps/web/stop"},
		{"POST", "/api/v1/apps/web/start"}, {"DELETE", "/api/v1/apps/web"},
	} {
		if status, out := st.send(t, rq.method, rq.path, st.beta, "", nil); status != 404 {
			t.Errorf("beta's %s %s = %d %v, want 404", rq.method, rq.path, status, out)
		}
	}
	if status, out := st.send(t, "GET", "/api/v1/apps", st.beta, "", nil); status != 200 || len(out["items"].([]any)) != 0 {
		t.Errorf("beta's GET /api/v1/apps = %d %v, want none", status, out)
	}

	if status, out := st.send(t, "DELETE", "/api/v1/apps/web", st.deployer, "", nil); status != 204 {
		t.Errorf("DELETE = %d %v, want 204", status, out)
	}
	for _, rq := range []struct{ method, path string }{{"GET", "/api/v1/apps/web"}, {"DELETE", "/api/v1/apps/web"}, {"POST", "/api/v1/apps/web/stop"}} {
		if status, _ := st.send(t, rq.method, rq.path, st.deployer, "", nil); status != 404 {
			t.Errorf("%s %s after DELETE = %d, want 404", rq.method, rq.path, status)
		}
	}
}

func TestSecrets(t *testing.T) {
	st := newAppStack(t)
	const value = "sk-live-DO-NOT-PRINT-4e1f"
	st.upload(t, "web", sources(t, map[string]string{"index.js": "1"}))
	host := func() string {
		_, app := st.send(t, "GET", "/api/v1/apps/web", st.deployer, "", nil)
		return app["host"].(string)
	}
	before := host()

	put := func(key, name, v string) (int, map[string]any) {
		return st.send(t, "PUT", "/api/v1/secrets/"+name, key, "application/json", []byte(mustJSON(map[string]string{"value": v})))
	}
	if status, out := put(st.admin, "API_KEY", value); status != 201 || out["name"] != "API_KEY" || len(out) != 1 {
		t.Errorf("PUT API_KEY = %d %v, want 201 {name}", status, out)
	}
	withSecret := host()
	if withSecret == before {
		t.Errorf("host stayed %s after a secret was added, want a new one", before)
	}
	if status, out := put(st.admin, "API_KEY", value+"-rotated"); status != 200 || out["name"] != "API_KEY" {
		t.Errorf("PUT API_KEY again = %d %v, want 200 {name}", status, out)
	}
	if rotated := host(); rotated == withSecret || rotated == before {
		t.Errorf("host after the value changed = %s, want one neither %s nor %s", rotated, withSecret, before)
	}

	status, list := st.send(t, "GET", "/api/v1/secrets", st.deployer, "", nil)
	items, _ := list["items"].([]any)
	if status != 200 || len(items) != 1 || items[0].(map[string]any)["name"] != "API_KEY" || items[0].(map[string]any)["updated_at"] == nil || len(items[0].(map[string]any)) != 2 {
		t.Errorf("GET /api/v1/secrets = %d %v, want API_KEY's name and updated_at only", status, list)
	}
	if status, list := st.send(t, "GET", "/api/v1/secrets", st.beta, "", nil); status != 200 || len(list["items"].([]any)) != 0 {
		t.Errorf("beta's GET /api/v1/secrets = %d %v, want none of acme's", status, list)
	}

	tests := []struct {
		name, key, secret, value string
		wantStatus               int
	}{
		{"member", st.deployer, "API_KEY", value, 403},
		{"lowercase name", st.admin, "api_key", value, 400},
		{"reserved prefix", st.admin, "TIDEGATE_TOKEN", value, 400},
		{"value too long", st.admin, "BIG", strings.Repeat("v", apps.MaxSecretValue+1), 400},
		{"NUL in value", st.admin, "NUL", value + "\x00", 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if status, out := put(tt.key, tt.secret, tt.value); status != tt.wantStatus {
				t.Errorf("PUT %s = %d %v, want %d", tt.secret, status, out, tt.wantStatus)
			}
		})
	}
	if status, out := st.send(t, "PUT", "/api/v1/secrets/EMPTY", st.admin, "application/json", []byte(`{}`)); status != 400 {
		t.Errorf("PUT without a value = %d %v, want 400", status, out)
	}
	if status, _ := st.send(t, "DELETE", "/api/v1/secrets/API_KEY", st.deployer, "", nil); status != 403 {
		t.Errorf("a member's DELETE = %d, want 403", status)
	}
	if status, _ := st.send(t, "DELETE", "/api/v1/secrets/API_KEY", st.beta, "", nil); status != 404 {
		t.Errorf("beta's DELETE of acme's secret = %d, want 404", status)
	}
	if status, _ := st.send(t, "DELETE", "/api/v1/secrets/API_KEY", st.admin, "", nil); status != 204 {
		t.Errorf("DELETE = %d, want 204", status)
	}
	if status, _ := st.send(t, "DELETE", "/api/v1/secrets/API_KEY", st.admin, "", nil); status != 404 {
		t.Errorf("DELETE again = %d, want 404", status)
	}
	if after := host(); after != before {
		t.Errorf("host after the only secret was deleted = %s, want the first one again, %s", after, before)
	}

	st.mu.Lock()
	defer st.mu.Unlock()
	for _, b := range st.bodies {
		if strings.Contains(b, "DO-NOT-PRINT") {
			t.Errorf("a response body holds the secret's value: %s", b)
		}
	}
	if strings.Contains(st.logs.String(), "DO-NOT-PRINT") {
		t.Errorf("the log holds the secret's value:\n%s", st.logs)
	}
}

func TestRegisterHost(t *testing.T) {
	st := newAppStack(t)
	ctx := context.Background()
	v1 := sources(t, map[string]string{"index.js": "1"})
	st.upload(t, "web", v1)
	host := apps.HostName("acme", "web", 1, digest(v1), apps.SecretsDigest(nil))
	token, err := st.store.MintHostToken(ctx, "acme", "web", host) // as the beat does, starting the host
	if err != nil {
		t.Fatal(err)
	}
	// Another org's host, with its own token: neither token registers the other org's host.
	if status, out := st.send(t, "POST", "/api/v1/apps/site/releases", st.beta, "application/gzip", v1); status != 201 {
		t.Fatalf("beta's upload = %d %v", status, out)
	}
	rivalHost := apps.HostName("beta", "site", 1, digest(v1), apps.SecretsDigest(nil))
	rivalToken, err := st.store.MintHostToken(ctx, "beta", "site", rivalHost)
	if err != nil {
		t.Fatal(err)
	}
	const pod = "6f1c2a9e-0b7d-4c1e-9a52-3d8e4f1b2c3a"
	register := "/api/v1/hosts/" + host + "/register?pod_uid=" + pod
	tests := []struct {
		name, path, auth string
		wantStatus       int
		wantField        string
	}{
		{"no token", register, "", 401, ""},
		{"wrong token", register, token + "x", 401, ""},
		{"an API key", register, st.admin, 401, ""},
		{"another org's host token", register, rivalToken, 401, ""},
		{"its token on another org's host", "/api/v1/hosts/" + rivalHost + "/register?pod_uid=" + pod, token, 401, ""},
		{"unknown host", "/api/v1/hosts/web-r9-00000000/register?pod_uid=" + pod, token, 404, ""},
		{"not a host name", "/api/v1/hosts/Not_A_Host/register?pod_uid=" + pod, token, 404, ""},
		{"no pod", "/api/v1/hosts/" + host + "/register", token, 400, "pod_uid"},
		{"a pod that is no UID", "/api/v1/hosts/" + host + "/register?pod_uid=$(TIDEGATE_POD_UID)", token, 400, "pod_uid"},
		{"an uppercase UID", "/api/v1/hosts/" + host + "/register?pod_uid=" + strings.ToUpper(pod), token, 400, "pod_uid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := st.send(t, "POST", tt.path, tt.auth, "", nil)
			if status != tt.wantStatus {
				t.Errorf("POST %s = %d %v, want %d", tt.path, status, out, tt.wantStatus)
			}
			if fields, _ := out["fields"].([]any); tt.wantField != "" && !slices.ContainsFunc(fields, func(f any) bool { return f.(map[string]any)["field"] == tt.wantField }) {
				t.Errorf("POST %s = %v, want it to name the field %s", tt.path, out, tt.wantField)
			}
		})
	}
	for _, a := range []struct{ org, app string }{{"acme", "web"}, {"beta", "site"}} {
		if got, _ := st.store.App(ctx, a.org, a.app); got.Registered != "" || got.RegisteredPod != "" {
			t.Errorf("%s/%s after the refused registrations: registered %q by %q, want none", a.org, a.app, got.Registered, got.RegisteredPod)
		}
	}
	if status, out := st.send(t, "POST", register, token, "", nil); status != 200 || out["app"] != "web" {
		t.Fatalf("register with the host's token = %d %v, want 200", status, out)
	}
	if a, _ := st.store.App(ctx, "acme", "web"); a.Registered != host || a.RegisteredPod != pod {
		t.Errorf("registered host = %q by pod %q, want %s by %s", a.Registered, a.RegisteredPod, host, pod)
	}

	v2 := sources(t, map[string]string{"index.js": "2"})
	st.upload(t, "web", v2)
	if _, err := st.store.MintHostToken(ctx, "acme", "web", apps.HostName("acme", "web", 2, digest(v2), apps.SecretsDigest(nil))); err != nil {
		t.Fatal(err)
	}
	if status, out := st.send(t, "POST", register, token, "", nil); status != 409 {
		t.Errorf("the first host registering once the app wants the second = %d %v, want 409", status, out)
	}
}
