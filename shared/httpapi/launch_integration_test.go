package httpapi_test

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/tidegate/tidegate/shared/apps"
)

// TestUploadReadsTheLaunchFile: a release's tidegate.json is checked at upload, a problem
// answered 400 naming the file and the field, and what it says is kept on the release and on the
// app for the hosts the beat starts; a release without one runs on the defaults again.
func TestUploadReadsTheLaunchFile(t *testing.T) {
	st := newAppStack(t) // the deployment offers no runtime but the default
	for launch, field := range map[string]string{
		`{"runtime": "python3.12"}`:                    "tidegate.json:runtime",
		`{"start": "python3 main.py"}`:                 "tidegate.json",
		`{"start": ["python3"], "ready": {"port": 0}}`: "tidegate.json:ready.port",
		`{"strat": ["node", "server.js"]}`:             "tidegate.json",
	} {
		status, body := st.upload(t, "bot", sources(t, map[string]string{"main.py": "print(1)\n", "tidegate.json": launch}))
		if status != http.StatusBadRequest || fieldsOf(body) != field {
			t.Errorf("upload with tidegate.json %s = %d %v, want 400 naming %s", launch, status, body, field)
		}
	}

	status, body := st.upload(t, "bot", sources(t, map[string]string{
		"main.py":       "print(1)\n",
		"tidegate.json": `{"start": ["python3", "-u", "main.py"], "ready": {"http_path": "/healthz", "port": 8080}}`,
	}))
	if status != http.StatusCreated {
		t.Fatalf("upload with a good tidegate.json = %d %v", status, body)
	}
	want := &apps.Launch{Start: []string{"python3", "-u", "main.py"}, Ready: &apps.Ready{Path: "/healthz", Port: 8080}}
	app, err := st.store.App(context.Background(), "acme", "bot")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(app.Launch, want) {
		t.Errorf("the app's launch = %+v, want %+v", app.Launch, want)
	}
	if l, _ := body["launch"].(map[string]any); l == nil || l["start"] == nil {
		t.Errorf("the release answered %v, want its launch", body)
	}

	if status, body := st.upload(t, "bot", sources(t, map[string]string{"main.py": "print(2)\n"})); status != http.StatusCreated {
		t.Fatalf("upload without tidegate.json = %d %v", status, body)
	}
	if app, err = st.store.App(context.Background(), "acme", "bot"); err != nil || app.Launch != nil {
		t.Errorf("after a release without tidegate.json the app's launch = %+v (%v), want none", app.Launch, err)
	}
}

// fieldsOf is the fields an error body names, joined.
func fieldsOf(body map[string]any) string {
	var names []string
	fs, _ := body["fields"].([]any)
	for _, f := range fs {
		if m, ok := f.(map[string]any); ok {
			names = append(names, m["field"].(string))
		}
	}
	return strings.Join(names, " ")
}
