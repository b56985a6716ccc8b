package apiclient

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Upload is where and how to PUT a release's sources straight to the sources bucket, which
// takes releases too large for the API's request body (about 4.5 MB behind API Gateway).
type Upload struct {
	Upload string `json:"upload"`
	App    string `json:"app"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
	Method string `json:"method"`
	URL    string `json:"url"`
	// Headers must go with the PUT as they are: the URL's signature covers them.
	Headers      map[string]string `json:"headers"`
	URLExpiresAt time.Time         `json:"url_expires_at"`
	ExpiresAt    time.Time         `json:"expires_at"`
}

// StartUpload declares a tarball of app's sources by its sha256 and length, and answers where to
// PUT it.
func (c *Client) StartUpload(ctx context.Context, app, sha string, n int64) (Upload, error) {
	rq, err := jsonRequest(http.MethodPost, appPath(app)+"/uploads", map[string]any{"sha256": sha, "bytes": n})
	if err != nil {
		return Upload{}, err
	}
	var out Upload
	return out, c.do(ctx, rq, &out)
}

// putTimeout bounds a PUT of sources to the bucket: the presigned URL's own life.
const putTimeout = 15 * time.Minute

// PutUpload PUTs tarball to u's presigned URL with the headers u lists and nothing else: the
// bucket gets neither the API key nor a signature of the caller's. progress, when not nil, is
// told how much has gone.
func (c *Client) PutUpload(ctx context.Context, u Upload, tarball []byte, progress func(sent, total int64)) error {
	var body io.Reader = bytes.NewReader(tarball)
	if progress != nil {
		body = &progressReader{r: body, total: int64(len(tarball)), report: progress}
	}
	req, err := http.NewRequestWithContext(ctx, u.Method, u.URL, body)
	if err != nil {
		return fmt.Errorf("making the PUT of upload %s: %w", u.Upload, err)
	}
	req.ContentLength = int64(len(tarball))
	for k, v := range u.Headers {
		if !strings.EqualFold(k, "Content-Length") { // net/http sends ContentLength itself
			req.Header.Set(k, v)
		}
	}
	resp, err := (&http.Client{Timeout: putTimeout}).Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		host := ""
		if pu, perr := url.Parse(u.URL); perr == nil {
			host = pu.Host
		}
		return fmt.Errorf("sending the sources to the bucket at %s: %w", host, unwrapURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 2<<10))
		return fmt.Errorf("the sources bucket refused upload %s: %s %s", u.Upload, resp.Status, strings.TrimSpace(string(b)))
	}
	return nil
}

// ReleaseUpload makes app's next release from upload id, whose object was PUT.
func (c *Client) ReleaseUpload(ctx context.Context, app, id, note string) (Release, error) {
	b, err := json.Marshal(map[string]string{"upload": id})
	if err != nil {
		return Release{}, err
	}
	q := url.Values{}
	if note != "" {
		q.Set("note", note)
	}
	rq := request{method: http.MethodPost, path: appPath(app) + "/releases", query: q, body: b, contentType: "application/json"}
	var out Release
	return out, c.do(ctx, rq, &out)
}

// UploadViaS3 sends an app's sources (a gzip tar) as a new release through the sources bucket:
// StartUpload, PutUpload, ReleaseUpload. It takes any release up to the API's 10 MiB, however
// little of a body the API's gateway lets through.
func (c *Client) UploadViaS3(ctx context.Context, app string, tarball []byte, note string, progress func(sent, total int64)) (Release, error) {
	sum := sha256.Sum256(tarball)
	u, err := c.StartUpload(ctx, app, hex.EncodeToString(sum[:]), int64(len(tarball)))
	if err != nil {
		return Release{}, err
	}
	if err := c.PutUpload(ctx, u, tarball, progress); err != nil {
		return Release{}, err
	}
	return c.ReleaseUpload(ctx, app, u.Upload, note)
}
