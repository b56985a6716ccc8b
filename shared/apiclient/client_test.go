package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func answer(status int, body string) *http.Response {
	return &http.Response{
		StatusCode: status, Status: fmt.Sprintf("%d %s", status, http.StatusText(status)),
		Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body)),
	}
}

func client(t *testing.T, rt roundTripper) *Client {
	t.Helper()
	c, err := New(Options{URL: "http://api.test/base/", Auth: APIKey("k"), HTTPClient: &http.Client{Transport: rt}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNewRefusesBadURLs(t *testing.T) {
	for _, u := range []string{"", "api.example.com", "ftp://x", "http://", "https://x/?a=b", "::"} {
		if _, err := New(Options{URL: u}); err == nil {
			t.Errorf("New(URL %q) = nil error, want one naming the URL", u)
		}
	}
	if _, err := New(Options{URL: "https://abc.execute-api.us-east-1.amazonaws.com/prod"}); err != nil {
		t.Errorf("New(an API Gateway stage URL) = %v", err)
	}
}

// TestErrorShapes: the API's error shape, API Gateway's own and a bare proxy page each become an
// *Error whose one line says what happened and which request it was.
func TestErrorShapes(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		body     string
		header   string
		want     Error
		wantLine string
	}{
		{"api error", 400, `{"error":"invalid_request","detail":"fix the listed fields","request_id":"r1","fields":[{"field":"region","problem":"required"}]}`, "r1",
			Error{Status: 400, Code: "invalid_request", Detail: "fix the listed fields", RequestID: "r1", Fields: []FieldProblem{{"region", "required"}}},
			"fix the listed fields (request id r1)"},
		{"policy violation", 422, `{"error":"policy_violation","detail":"1 policy violation(s)","request_id":"r2","violations":[{"document":0,"kind":"Job","name":"x","field":"spec.template.spec.hostNetwork","message":"must be false"}]}`, "",
			Error{Status: 422, Code: "policy_violation", Detail: "1 policy violation(s)", RequestID: "r2", Violations: []Violation{{Kind: "Job", Name: "x", Field: "spec.template.spec.hostNetwork", Message: "must be false"}}},
			"1 policy violation(s) (request id r2)"},
		{"gateway refusal", 403, `{"message":"Missing Authentication Token"}`, "gw-9",
			Error{Status: 403, Detail: "the API answered 403 Forbidden: Missing Authentication Token", RequestID: "gw-9"},
			"the API answered 403 Forbidden: Missing Authentication Token (request id gw-9)"},
		{"html from a proxy", 502, "<html>bad gateway</html>\n<body>", "",
			Error{Status: 502, Detail: "the API answered 502 Bad Gateway: <html>bad gateway</html>"},
			"the API answered 502 Bad Gateway: <html>bad gateway</html>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := client(t, func(*http.Request) (*http.Response, error) {
				r := answer(tt.status, tt.body)
				r.Header.Set("X-Request-Id", tt.header)
				return r, nil
			})
			_, err := c.Job(context.Background(), "job-1")
			var got *Error
			if !errors.As(err, &got) {
				t.Fatalf("Job on a %d = %v, want an *Error", tt.status, err)
			}
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if got.Error() != tt.wantLine {
				t.Errorf("Error() = %q, want %q", got.Error(), tt.wantLine)
			}
		})
	}
}

func TestErrorIsByCode(t *testing.T) {
	err := error(&Error{Code: "not_found", Detail: "no job"})
	if !errors.Is(err, &Error{Code: "not_found"}) || errors.Is(err, &Error{Code: "conflict"}) {
		t.Errorf("errors.Is by code does not tell not_found from conflict")
	}
}

func TestProblemsListFieldsAndViolations(t *testing.T) {
	e := &Error{Fields: []FieldProblem{{"priority", "must be a whole number from 0 to 100"}},
		Violations: []Violation{{Document: 1, Kind: "Job", Name: "j", Field: "spec.x", Message: "no"}, {Document: 0, Message: "kind is not allowed"}}}
	want := []string{"priority: must be a whole number from 0 to 100", "document 1 Job/j spec.x: no", "document 0: kind is not allowed"}
	if diff := cmp.Diff(want, e.Problems()); diff != "" {
		t.Errorf("Problems (-want +got):\n%s", diff)
	}
}

// TestRequestsReachTheirRoutes: paths join the base URL's path, ids are escaped into one
// segment, filters become query parameters.
func TestRequestsReachTheirRoutes(t *testing.T) {
	var got []string
	c := client(t, func(r *http.Request) (*http.Response, error) {
		got = append(got, r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("Authorization"))
		return answer(200, `{"items":[],"next_cursor":null}`), nil
	})
	ctx := context.Background()
	_, _ = c.Jobs(ctx, JobFilter{Status: "queued", LabelSelector: "team=ml"}, ListOptions{Limit: 5000, Cursor: "abc"})
	_, _ = c.Job(ctx, "../templates/x")
	_, _ = c.JobLogs(ctx, "job-1", LogOptions{Tail: 20, Previous: true})
	want := []string{
		"GET /base/api/v1/jobs?cursor=abc&label_selector=team%3Dml&limit=1000&status=queued Bearer k",
		"GET /base/api/v1/jobs/..%2Ftemplates%2Fx Bearer k",
		"GET /base/api/v1/jobs/job-1/logs?previous=true&tail=20 Bearer k",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// TestCollect follows cursors until limit items or the last page, and answers the cursor that
// resumes after what it gathered.
func TestCollect(t *testing.T) {
	all := []int{1, 2, 3, 4, 5}
	var asked []string
	// list pages through all as the API does: the cursor resumes after the last item answered.
	list := func(_ context.Context, o ListOptions) (Page[int], error) {
		asked = append(asked, o.Cursor+":"+strconv.Itoa(o.Limit))
		from, _ := strconv.Atoi(o.Cursor)
		to := min(from+o.Limit, len(all), from+2) // the API answers at most 2 a page here
		p := Page[int]{Items: all[from:to]}
		if to < len(all) {
			p.NextCursor = ptr(strconv.Itoa(to))
		}
		return p, nil
	}
	tests := []struct {
		limit     int
		wantItems []int
		wantNext  *string
		wantAsked []string
	}{
		{0, []int{1, 2, 3, 4, 5}, nil, []string{":1000", "2:1000", "4:1000"}},
		{3, []int{1, 2, 3}, ptr("3"), []string{":3", "2:1"}},
		{2, []int{1, 2}, ptr("2"), []string{":2"}},
		{9, []int{1, 2, 3, 4, 5}, nil, []string{":9", "2:7", "4:5"}},
	}
	for _, tt := range tests {
		asked = nil
		got, err := Collect(context.Background(), tt.limit, "", list)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(Page[int]{Items: tt.wantItems, NextCursor: tt.wantNext}, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Collect(limit %d) (-want +got):\n%s", tt.limit, diff)
		}
		if diff := cmp.Diff(tt.wantAsked, asked); diff != "" {
			t.Errorf("Collect(limit %d) asked (-want +got):\n%s", tt.limit, diff)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestJSONIsTheAPIs: a job read from the API encodes back to the API's bytes, unknown fields
// included; one made here encodes its fields.
func TestJSONIsTheAPIs(t *testing.T) {
	in := `{"id":"job-1","status":"running","a_field_added_later":{"x":1}}`
	var page Page[Job]
	if err := json.Unmarshal([]byte(`{"items":[`+in+`],"next_cursor":null}`), &page); err != nil {
		t.Fatal(err)
	}
	if page.Items[0].Status != "running" {
		t.Errorf("decoded status %q, want running", page.Items[0].Status)
	}
	out, err := json.Marshal(page)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"items":[` + in + `],"next_cursor":null}`; string(out) != want {
		t.Errorf("re-encoded page = %s, want %s", out, want)
	}
	made, _ := json.Marshal(Job{ID: "job-2", Status: "queued"})
	if !strings.Contains(string(made), `"id":"job-2"`) {
		t.Errorf("a job made here encodes as %s", made)
	}
}

func TestSecretListAcceptsNamesOrObjects(t *testing.T) {
	var p Page[Secret]
	if err := json.Unmarshal([]byte(`{"items":["DB_URL",{"name":"API_TOKEN"}],"next_cursor":null}`), &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Items) != 2 || p.Items[0].Name != "DB_URL" || p.Items[1].Name != "API_TOKEN" {
		t.Errorf("secrets = %+v, want DB_URL and API_TOKEN", p.Items)
	}
}
