package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tidegate/tidegate/shared/apiclient"
)

// TestTableAlignsWhatIsSeen: colour codes take no room, empty cells show as "-".
func TestTableAlignsWhatIsSeen(t *testing.T) {
	for _, color := range []bool{false, true} {
		var b bytes.Buffer
		p := &printer{out: &b, color: color}
		tb := &table{header: []string{"ID", "STATUS", "WHY"}}
		tb.add(plain("job-1"), stateCell("succeeded"), plain(""))
		tb.add(plain("job-22"), stateCell("failed"), plain("OOMKilled"))
		p.print(tb)
		got := strings.NewReplacer("\x1b[32m", "", "\x1b[31m", "", "\x1b[0m", "").Replace(b.String())
		want := "ID       STATUS      WHY\njob-1    succeeded   -\njob-22   failed      OOMKilled\n"
		if got != want {
			t.Errorf("table with color=%v =\n%s\nwant\n%s", color, got, want)
		}
		if hasCodes := strings.Contains(b.String(), "\x1b["); hasCodes != color {
			t.Errorf("table with color=%v has colour codes: %v", color, hasCodes)
		}
	}
}

func TestEmitFormats(t *testing.T) {
	j := apiclient.Job{}
	if err := j.UnmarshalJSON([]byte(`{"id":"job-1","status":"queued","added_later":true}`)); err != nil {
		t.Fatal(err)
	}
	for format, want := range map[string]string{
		"json": "{\n  \"id\": \"job-1\",\n  \"status\": \"queued\",\n  \"added_later\": true\n}\n",
		"yaml": "added_later: true\nid: job-1\nstatus: queued\n",
	} {
		var b bytes.Buffer
		p, err := newPrinter(format, &b, &b, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.emit(j, func() { t.Errorf("-o %s called the human output", format) }); err != nil {
			t.Fatal(err)
		}
		if b.String() != want {
			t.Errorf("-o %s =\n%s\nwant\n%s", format, b.String(), want)
		}
	}
}

func TestAge(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	p := &printer{now: func() time.Time { return now }}
	for d, want := range map[time.Duration]string{
		-time.Second: "0s", 45 * time.Second: "45s", 119 * time.Second: "119s", 2 * time.Minute: "2m",
		119 * time.Minute: "119m", 5 * time.Hour: "5h", 47 * time.Hour: "47h", 72 * time.Hour: "3d",
	} {
		if got := p.age(now.Add(-d)); got != want {
			t.Errorf("age(%s ago) = %q, want %q", d, got, want)
		}
	}
	if p.age(time.Time{}) != "" {
		t.Errorf("age of no time is %q, want empty", p.age(time.Time{}))
	}
}

func TestStatusText(t *testing.T) {
	tests := []struct {
		job  apiclient.Job
		want string
	}{
		{apiclient.Job{Status: "running"}, "running"},
		{apiclient.Job{Status: "queued", Region: "us-east-1", PendingReason: "capacity", QueuePosition: 3}, "queued: waiting for room in us-east-1, 3rd in line"},
		{apiclient.Job{Status: "queued", Region: "us-west-2", PendingReason: "spot_price_above_cap", QueuePosition: 11}, "queued: held in us-west-2: the spot price is above the job's cap, 11th in line"},
		{apiclient.Job{Status: "queued", PendingReason: "a_reason_added_later"}, "queued: a_reason_added_later"},
		{apiclient.Job{Status: "queued", Regions: []string{"us-east-1", "us-west-2"}, PendingReason: "no_allowed_region_open"}, "queued: held: the spot price is above the cap in every allowed region"},
		{apiclient.Job{Status: "queued", Region: "us-east-1", PendingReason: "retry_backoff"}, "queued: waiting in us-east-1 for the retry's backoff to end"},
	}
	for _, tt := range tests {
		if got := statusText(tt.job); got != tt.want {
			t.Errorf("statusText(%+v) = %q, want %q", tt.job, got, tt.want)
		}
	}
}

// TestDescribeJobKindAttemptsServing: a retried long-running job that may run in two regions
// says so, with its earlier attempt and what it serves.
func TestDescribeJobKindAttemptsServing(t *testing.T) {
	ended := time.Date(2026, 12, 1, 10, 0, 0, 0, time.Local)
	j := apiclient.Job{
		ID: "j1", Status: "running", Region: "us-west-2", Regions: []string{"us-east-1", "us-west-2"},
		Kind: "long_running", Attempt: 2, Attempts: []apiclient.JobAttempt{{Attempt: 1, Reason: "spot_interrupted", EndedAt: ended}},
		Serving:      []apiclient.Serving{{Kind: "Deployment", Name: "web", Replicas: 3, Ready: 2}},
		ServingError: "",
	}
	var b bytes.Buffer
	p := &printer{out: &b, now: func() time.Time { return ended }}
	describeJob(p, j)
	for _, want := range []string{
		"Region:     us-west-2 (one of us-east-1, us-west-2)",
		"Kind:       long-running: runs until cancelled",
		"Attempt:    2; earlier: #1 spot_interrupted at 2026-12-01 10:00:00",
		"Serving:\n  Deployment/web  2/3 ready, not available",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("describeJob wrote\n%s\nwant it to contain %q", b.String(), want)
		}
	}
	b.Reset()
	describeJob(p, apiclient.Job{ID: "j2", Status: "succeeded", Region: "us-east-1", Kind: "batch", Attempt: 1})
	for _, absent := range []string{"Kind:", "Attempt:", "Serving:", "one of"} {
		if strings.Contains(b.String(), absent) {
			t.Errorf("a plain batch job's description has %q:\n%s", absent, b.String())
		}
	}
}

func TestPlacementText(t *testing.T) {
	pl := map[string]any{
		"node_name": "ip-10-0-1-2", "node_instance_type": "g5.xlarge", "node_capacity_type": "spot",
		"node_labels": map[string]any{"zone": "us-east-1b"},
		"pod_phases":  map[string]any{"a": "Running", "b": "Running", "c": "Pending"},
	}
	want := "node ip-10-0-1-2 (g5.xlarge, spot, us-east-1b); pods: Pending 1, Running 2"
	if got := placementText(pl); got != want {
		t.Errorf("placementText = %q, want %q", got, want)
	}
}

// TestNewLines: following a log prints each line once, whether the log grew, its window of last
// lines slid on, or it started over.
func TestNewLines(t *testing.T) {
	lines := func(from, to int) []string {
		var out []string
		for i := from; i < to; i++ {
			out = append(out, "line "+string(rune('a'+i%26))+strings.Repeat("!", i/26))
		}
		return out
	}
	tests := []struct {
		name       string
		shown, now []string
		want       []string
	}{
		{"first read", nil, lines(0, 3), lines(0, 3)},
		{"grew", lines(0, 3), lines(0, 5), lines(3, 5)},
		{"unchanged", lines(0, 3), lines(0, 3), nil},
		{"window slid", lines(0, 40), lines(10, 45), lines(40, 45)},
		{"repeated lines grew", []string{"tick", "tick"}, []string{"tick", "tick", "tick"}, []string{"tick"}},
		{"started over", lines(0, 40), []string{"fresh"}, []string{"fresh"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, newLines(tt.shown, tt.now), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("newLines %s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestParseParams(t *testing.T) {
	got, err := parseParams([]string{"tag=1.10", "msg=a=b"}, []string{"workers=4", "flags=[\"x\"]", "on=true"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"tag": "1.10", "msg": "a=b", "workers": 4.0, "flags": []any{"x"}, "on": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseParams (-want +got):\n%s", diff)
	}
	for _, bad := range [][2][]string{{{"noequals"}, nil}, {{"=v"}, nil}, {nil, {"n=notjson"}}} {
		if _, err := parseParams(bad[0], bad[1]); err == nil {
			t.Errorf("parseParams(%q, %q) = nil error", bad[0], bad[1])
		}
	}
}

func TestTemplateRequestFromFiles(t *testing.T) {
	bare := []byte("apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\n")
	tr, err := templateRequest(bare, "train", "", []string{"tag=1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Name != "train" || string(tr.Manifest) != `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"x"}}` || tr.Parameters["tag"] != "1" {
		t.Errorf("templateRequest(bare manifest) = %+v %s", tr, tr.Manifest)
	}
	if _, err := templateRequest(bare, "", "", nil, nil); err == nil || !strings.Contains(err.Error(), "--name") {
		t.Errorf("a bare manifest with no --name = %v, want an error asking for it", err)
	}
	full := []byte("name: t\ndescription: d\nparameters: {a: 1}\nmanifest: {kind: Job}\n")
	tr, err = templateRequest(full, "", "other", nil, []string{"b=2"})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Name != "t" || tr.Description != "other" || tr.Parameters["a"] != 1.0 || tr.Parameters["b"] != 2.0 {
		t.Errorf("templateRequest(template file) = %+v", tr)
	}
}

func TestAppName(t *testing.T) {
	dir := t.TempDir()
	if got, _ := appName(dir, "given"); got != "given" {
		t.Errorf("appName with --name = %q", got)
	}
	write(t, dir, "package.json", `{"name":"@acme/Web_App"}`)
	if got, _ := appName(dir, ""); got != "web-app" {
		t.Errorf("appName from a scoped package.json = %q, want web-app", got)
	}
	sub := dir + "/My Service"
	write(t, sub, "index.js", "")
	if got, _ := appName(sub, ""); got != "my-service" {
		t.Errorf("appName from the folder = %q, want my-service", got)
	}
}

func TestSmallWords(t *testing.T) {
	for n, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 102: "102nd"} {
		if got := ordinal(n); got != want {
			t.Errorf("ordinal(%d) = %q, want %q", n, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1000: "1.0 kB", 12345: "12.3 kB", 4_000_000: "4.0 MB"} {
		if got := bytesText(n); got != want {
			t.Errorf("bytesText(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestReportError(t *testing.T) {
	var b bytes.Buffer
	reportError(&b, &apiclient.Error{Detail: "fix the listed fields", RequestID: "req_1", Fields: []apiclient.FieldProblem{{Field: "region", Problem: "required"}}})
	if want := "tidegate: fix the listed fields (request id req_1)\n  - region: required\n"; b.String() != want {
		t.Errorf("reportError =\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	reportError(&b, errQuiet)
	if b.Len() != 0 {
		t.Errorf("reportError(errQuiet) printed %q", b.String())
	}
}

// TestWatchPrintsChanges: after the first listing, a watch prints a row for each job that is new
// or whose status changed, and nothing for the rest.
func TestWatchPrintsChanges(t *testing.T) {
	first := []apiclient.Job{{ID: "job-a", Status: "queued"}, {ID: "job-b", Status: "running"}}
	next := []apiclient.Job{{ID: "job-c", Status: "queued"}, {ID: "job-a", Status: "pending"}, {ID: "job-b", Status: "running"}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	list := func(context.Context) (apiclient.Page[apiclient.Job], error) {
		calls++
		if calls > 1 {
			cancel()
		}
		return apiclient.Page[apiclient.Job]{Items: next}, nil
	}
	var b bytes.Buffer
	p := &printer{out: &b, now: time.Now}
	if err := watchJobs(ctx, p, first, list); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		ids = append(ids, strings.Fields(line)[0]+" "+strings.Fields(line)[2]) // id, name, status
	}
	if diff := cmp.Diff([]string{"job-c queued", "job-a pending"}, ids); diff != "" {
		t.Errorf("watch printed (-want +got):\n%s\n%s", diff, b.String())
	}
}

func TestListSort(t *testing.T) {
	for in, want := range map[string]string{
		"": "", "created": "", "created:desc": "", "created_at:desc": "", "created:asc": "created_at:asc",
		"priority": "priority:desc", "priority:asc": "priority:asc",
		"name": "name:asc", "name:asc": "name:asc", "name:desc": "name:desc",
	} {
		if got, err := listSort(in); err != nil || got != want {
			t.Errorf("listSort(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"names", "priority:up", "name:za", "age:asc"} {
		if got, err := listSort(in); err == nil {
			t.Errorf("listSort(%q) = %q; want a refusal", in, got)
		}
	}
}
