// Package console is the web console: static pages, embedded in the API function's binary and
// served at / beside the API, that sign in with an API key and use the documented API alone.
// Nothing is parsed or built at start: the files are served as they are embedded.
package console

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed static
var static embed.FS

// CSP is the Content-Security-Policy of every console answer: scripts, styles and connections
// to this origin only, no inline script or style, no plugins, no framing.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'"

// AssetPrefix is the path the console's scripts and styles are served under.
const AssetPrefix = "/console/"

// Index serves the console's page, for GET / only.
func Index() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		headers(w)
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeFileFS(w, r, static, "static/index.html")
	})
}

// Assets serves the console's scripts and styles under AssetPrefix.
func Assets() http.Handler {
	sub, _ := fs.Sub(static, "static") // "static" is embedded above: Sub cannot fail
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		headers(w)
		name := strings.TrimPrefix(r.URL.Path, AssetPrefix)
		if name == "" || strings.HasSuffix(name, "/") || name == "index.html" {
			http.NotFound(w, r) // no listings; the page itself is at /
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/" + name
		files.ServeHTTP(w, r2)
	})
}

func headers(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}
