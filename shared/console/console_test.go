package console

import (
	"io/fs"
	"mime"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func get(t *testing.T, h http.Handler, target string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec
}

// TestEveryAnswerCarriesTheCSP serves the page and every embedded file and checks the policy
// that keeps a tenant's text (job names, log lines) from ever running as script.
func TestEveryAnswerCarriesTheCSP(t *testing.T) {
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'",
		"object-src 'none'", "base-uri 'none'", "connect-src 'self'"} {
		if !strings.Contains(CSP, want) {
			t.Errorf("CSP %q lacks %q", CSP, want)
		}
	}
	if strings.Contains(CSP, "unsafe-") {
		t.Errorf("CSP %q allows inline or eval'd code", CSP)
	}
	check := func(target string, rec *httptest.ResponseRecorder) {
		t.Helper()
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s = %d", target, rec.Code)
		}
		if got := rec.Header().Get("Content-Security-Policy"); got != CSP {
			t.Errorf("GET %s: Content-Security-Policy = %q, want %q", target, got, CSP)
		}
		if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no X-Content-Type-Options: nosniff", target)
		}
	}
	check("/", get(t, Index(), "/"))
	files := embedded(t)
	for _, name := range files {
		if name == "index.html" {
			continue
		}
		target := AssetPrefix + name
		rec := get(t, Assets(), target)
		check(target, rec)
		if want := mime.TypeByExtension(path.Ext(name)); !strings.HasPrefix(rec.Header().Get("Content-Type"), strings.Split(want, ";")[0]) {
			t.Errorf("GET %s: Content-Type %q, want %q", target, rec.Header().Get("Content-Type"), want)
		}
	}
	for _, target := range []string{AssetPrefix, AssetPrefix + "index.html", AssetPrefix + "nothing.js", AssetPrefix + "../console.go"} {
		if rec := get(t, Assets(), target); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", target, rec.Code)
		}
	}
}

// TestNoInlineScriptOrStyle parses every served HTML file: scripts come from files only, and no
// element has a style or event-handler attribute, so the CSP needs no 'unsafe-inline'.
func TestNoInlineScriptOrStyle(t *testing.T) {
	pages := 0
	for _, name := range embedded(t) {
		if path.Ext(name) != ".html" {
			continue
		}
		pages++
		b, _ := fs.ReadFile(static, "static/"+name)
		doc, err := html.Parse(strings.NewReader(string(b)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var walk func(n *html.Node)
		walk = func(n *html.Node) {
			if n.Type == html.ElementNode {
				attrs := map[string]string{}
				for _, a := range n.Attr {
					attrs[strings.ToLower(a.Key)] = a.Val
					if strings.ToLower(a.Key) == "style" || strings.HasPrefix(strings.ToLower(a.Key), "on") {
						t.Errorf("%s: <%s> has an inline %s attribute", name, n.Data, a.Key)
					}
					if strings.HasPrefix(strings.TrimSpace(strings.ToLower(a.Val)), "javascript:") {
						t.Errorf("%s: <%s %s> is a javascript: URL", name, n.Data, a.Key)
					}
				}
				switch n.Data {
				case "style":
					t.Errorf("%s: has an inline <style> element", name)
				case "script":
					if attrs["src"] == "" || n.FirstChild != nil {
						t.Errorf("%s: has an inline <script>", name)
					}
				}
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
		}
		walk(doc)
	}
	if pages == 0 {
		t.Fatal("no HTML page is embedded")
	}
}

// unsafeJS are ways a script could turn text into markup or code, or set an inline style: the
// console builds every element with the DOM API, so a tenant's text stays text.
var unsafeJS = regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setAttribute\(\s*["']style|\.style\.|cssText`)

func TestScriptsBuildNoMarkupFromText(t *testing.T) {
	for _, name := range embedded(t) {
		if path.Ext(name) != ".js" {
			continue
		}
		b, _ := fs.ReadFile(static, "static/"+name)
		for i, line := range strings.Split(string(b), "\n") {
			if m := unsafeJS.FindString(line); m != "" {
				t.Errorf("%s:%d uses %s", name, i+1, m)
			}
		}
	}
}

// TestEmbeddedFilesStaySmall keeps the console's share of the API function's binary, and of its
// cold start, small: the files are embedded as they are and never read at start.
func TestEmbeddedFilesStaySmall(t *testing.T) {
	total := 0
	for _, name := range embedded(t) {
		b, _ := fs.ReadFile(static, "static/"+name)
		total += len(b)
	}
	if total > 96<<10 {
		t.Errorf("the console's files are %d bytes; keep them under 96 KiB", total)
	}
}

func embedded(t *testing.T) []string {
	t.Helper()
	var out []string
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, strings.TrimPrefix(p, "static/"))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
