package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/apiclient"
	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
)

var names atomic.Int32

// uniqueName is a Kubernetes name no other test's object has, in this or another test binary:
// the shared cluster's team-a outlives every dev stack.
func uniqueName(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), names.Add(1))
}

// exampleJob is examples/job.yaml under another name.
func exampleJob(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../examples/job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\n  name: hello\n") {
		t.Fatal("examples/job.yaml no longer names its Job hello; update exampleJob")
	}
	return strings.Replace(string(b), "\n  name: hello\n", "\n  name: "+name+"\n", 1)
}

// statusLine is one line --wait prints for a status the job passed through.
var statusLine = regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d  (\w+)`)

// TestSubmitWaitFollowsTheJob: the README's first command. `jobs submit --wait` on the example
// prints the job going queued → pending → running → succeeded and exits 0; then every way of
// looking at the finished job answers.
func TestSubmitWaitFollowsTheJob(t *testing.T) {
	h := newHarness(t)
	name := uniqueName("hello")
	h.stdin = exampleJob(t, name)
	out := h.ok("jobs", "submit", "-f", "-", "--wait")
	var seen []string
	for _, m := range statusLine.FindAllStringSubmatch(out, -1) {
		seen = append(seen, m[1])
	}
	if want := []string{"queued", "pending", "running", "succeeded"}; !subsequence(want, seen) {
		t.Errorf("jobs submit --wait printed statuses %v, want %v in that order:\n%s", seen, want, out)
	}
	id := jobID.FindString(out)
	if id == "" || !strings.HasPrefix(out, "job "+id+" submitted to us-east-1 (namespace team-a)\n") {
		t.Fatalf("jobs submit --wait began %q, want the job's id, region and namespace", out)
	}

	var page struct {
		Items      []map[string]any `json:"items"`
		NextCursor *string          `json:"next_cursor"`
	}
	if err := json.Unmarshal([]byte(h.ok("jobs", "list", "-o", "json")), &page); err != nil {
		t.Fatalf("jobs list -o json is not JSON: %v", err)
	}
	if len(page.Items) != 1 || page.Items[0]["id"] != id || page.Items[0]["status"] != "succeeded" || page.Items[0]["status_history"] == nil {
		t.Errorf("jobs list -o json items = %v, want the one succeeded job with the API's fields", page.Items)
	}
	if y := h.ok("jobs", "get", id, "-o", "yaml"); !strings.Contains(y, "\nstatus: succeeded\n") || !strings.Contains(y, "id: "+id+"\n") {
		t.Errorf("jobs get -o yaml = %s, want the job as YAML", y)
	}
	get := h.ok("jobs", "get", id)
	for _, want := range []string{`(?m)^Status:\s+succeeded$`, `(?m)^Objects:\s+Job/` + name + `$`, `(?m)^History:$`, `(?m)^\s+\d\d:\d\d:\d\d  running`} {
		if !regexp.MustCompile(want).MatchString(get) {
			t.Errorf("jobs get %s does not match %s:\n%s", id, want, get)
		}
	}
	// The sandbox's kwok node now and then loses its address for a moment, and the apiserver
	// cannot fetch logs until it is back: ask again rather than fail on that.
	var logs string
	h.eventually("the pod's logs being served", func() bool {
		out, _, err := h.run("jobs", "logs", id)
		logs = out
		return err == nil
	})
	if !strings.Contains(logs, sandbox.FakePodLog) {
		t.Errorf("jobs logs = %q, want the sandbox pod's line %q", logs, sandbox.FakePodLog)
	}
	if followed := h.ok("jobs", "logs", id, "-f", "--tail", "1"); followed != sandbox.FakePodLog+"\n" {
		t.Errorf("jobs logs -f of a finished job = %q, want its one line, then to return", followed)
	}
	if pods := h.ok("jobs", "pods", id); !strings.HasPrefix(pods, "NAME ") {
		t.Errorf("jobs pods = %q, want a table", pods)
	}
	if evs := h.ok("jobs", "events", id); !strings.HasPrefix(evs, "LAST SEEN ") {
		t.Errorf("jobs events = %q, want a table", evs)
	}
	if why := h.ok("jobs", "why", id); !regexp.MustCompile(`(?m)^\S.*\badmitted\b.*\bus-east-1/`).MatchString(why) {
		t.Errorf("jobs why = %q, want its admission in us-east-1 on a flavor", why)
	}

	// The dev stack has no spot price for the kwok node's g5.xlarge: the job's cost is known
	// incomplete, and counted so.
	golden(t, "costs_by_namespace", h.ok("costs", "--group-by", "namespace"))
	var costs struct {
		Groups []map[string]any `json:"groups"`
	}
	if err := json.Unmarshal([]byte(h.ok("costs", "-o", "json")), &costs); err != nil || len(costs.Groups) != 1 || costs.Groups[0]["incomplete_jobs"] != 1.0 {
		t.Errorf("costs -o json groups = %v (%v), want the tenant's one job, its estimate incomplete", costs.Groups, err)
	}
	if e := h.fails("costs", "--group-by", "region"); !strings.Contains(e, "group_by: must be tenant, namespace, group, day or label:KEY") {
		t.Errorf("costs --group-by region failed with %q, want the parameter named", e)
	}

	retry := h.ok("jobs", "retry", id, "-o", "json")
	var again map[string]any
	if err := json.Unmarshal([]byte(retry), &again); err != nil || again["retry_of"] != id || again["status"] != "queued" {
		t.Errorf("jobs retry -o json = %s, want a queued job with retry_of %s", retry, id)
	}
}

// subsequence reports whether want appears in got in order, other items between.
func subsequence(want, got []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

// heldJob submits the example with a spot cap on an instance type the dev stack has no price for,
// so dispatch holds it queued (spot_price_unknown): a job that stays put while a test looks at it.
func heldJob(t *testing.T, h *harness, priority string, labels ...string) string {
	t.Helper()
	h.stdin = exampleJob(t, uniqueName("held"))
	args := []string{"jobs", "submit", "-f", "-", "--region", "us-east-1", "--priority", priority,
		"--max-spot-price", "0.1", "--spot-instance-type", "g5.xlarge", "-o", "json"}
	for _, l := range labels {
		args = append(args, "-l", l)
	}
	var j struct{ ID string }
	if err := json.Unmarshal([]byte(h.ok(args...)), &j); err != nil || j.ID == "" {
		t.Fatalf("jobs submit -o json answered no job id (%v)", err)
	}
	h.eventually("dispatch holding "+j.ID, func() bool {
		got, err := h.api.Job(context.Background(), j.ID)
		return err == nil && got.PendingReason == "spot_price_unknown" && got.QueuePosition > 0
	})
	return j.ID
}

// countQueues keeps region's census as the next drain's would count the dev stack's queues now:
// its drains count them at most once a minute, so the one they kept is likely from before the
// last job held. The queue's stats show what the census counted.
func countQueues(t *testing.T, h *harness, region string) {
	t.Helper()
	ctx := context.Background()
	tables := dynamo.Tables{Jobs: h.state.Env[config.EnvJobsTable], Events: h.state.Env[config.EnvEventsTable], Control: h.state.Env[config.EnvControlTable]}
	js := dynamo.NewJobStore(testenv.AWS(t).DynamoDB(), tables)
	c := dynamo.RegionCensus{Region: region, At: time.Now(), Queued: map[string]dynamo.Queued{}}
	for _, q := range []dynamo.Queue{dynamo.RegionQueue(region), dynamo.LongRunningQueue(region), dynamo.HeldQueue(region), dynamo.BackoffQueue(region)} {
		got, err := js.Census(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for tenant, n := range got.Tenants {
			c.Queued[tenant] = c.Queued[tenant].Add(n)
		}
	}
	if err := js.PutCensus(ctx, c); err != nil {
		t.Fatal(err)
	}
}

// TestSubmitSpotDeadline: --spot-deadline and --on-deadline reach the job's cap.
func TestSubmitSpotDeadline(t *testing.T) {
	h := newHarness(t)
	h.stdin = exampleJob(t, uniqueName("deadline"))
	out := h.ok("jobs", "submit", "-f", "-", "--region", "us-east-1", "--max-spot-price", "0.1", "--spot-instance-type", "g5.xlarge",
		"--spot-deadline", "2h", "--on-deadline", "on_demand", "-o", "json")
	var j apiclient.Job
	if err := json.Unmarshal([]byte(out), &j); err != nil || j.Spot == nil || j.Spot.Deadline == nil {
		t.Fatalf("jobs submit -o json = %s (%v), want a job with a spot deadline", out, err)
	}
	if d := time.Until(*j.Spot.Deadline); d < 119*time.Minute || d > 2*time.Hour || j.Spot.OnDeadline != "on_demand" {
		t.Errorf("spot = %+v (deadline in %s), want one 2h off, on_demand", j.Spot, d)
	}
	h.stdin = exampleJob(t, uniqueName("deadline"))
	if stderr := h.fails("jobs", "submit", "-f", "-", "--region", "us-east-1", "--spot-deadline", "2h"); !strings.Contains(stderr, "spot_deadline") {
		t.Errorf("a deadline without a cap: stderr %q, want it to name spot_deadline", stderr)
	}
}

// TestSpotDeadlineOnDev: on the dev stack, with no price for the type (so the gate holds the
// jobs), a 2 s deadline fails the job that asked to fail, with spot_deadline_passed, and
// dispatches the one that asked to run on demand, saying so in its history.
func TestSpotDeadlineOnDev(t *testing.T) {
	h := newHarness(t)
	submit := func(on string) string {
		h.stdin = exampleJob(t, uniqueName("deadline"))
		out := h.ok("jobs", "submit", "-f", "-", "--region", "us-east-1", "--max-spot-price", "0.1", "--spot-instance-type", "g5.xlarge",
			"--spot-deadline", "2s", "--on-deadline", on, "-o", "json")
		var j apiclient.Job
		if err := json.Unmarshal([]byte(out), &j); err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	failing, onDemand := submit("fail"), submit("on_demand")
	reasonOf := func(id string, status string) bool {
		j, err := h.api.Job(context.Background(), id)
		return err == nil && slices.ContainsFunc(j.StatusHistory, func(tr apiclient.Transition) bool {
			return tr.Status == status && tr.Reason == map[string]string{"failed": "spot_deadline_passed", "pending": "spot deadline passed: on demand"}[status]
		})
	}
	h.eventually(failing+" failed with spot_deadline_passed", func() bool { return reasonOf(failing, "failed") })
	h.eventually(onDemand+" dispatched on demand", func() bool { return reasonOf(onDemand, "pending") })
}

// TestHeldJobs: listing, filtering, sorting, the queue's numbers, why a job waits, and cancelling
// one job or many.
func TestHeldJobs(t *testing.T) {
	h := newHarness(t)
	high := heldJob(t, h, "70", "team=ml")
	low := heldJob(t, h, "30", "team=ml", "run=nightly")

	golden(t, "jobs_list_held", h.ok("jobs", "list"))
	countQueues(t, h, "us-east-1")
	golden(t, "queue_stats", h.ok("queue", "stats"))

	get := h.ok("jobs", "get", high)
	for _, want := range []string{"queued: held in us-east-1: the spot price is not known yet, 1st in line", "g5.xlarge at most $0.1/h", "Labels:", "team=ml", "Name:", "held-", "Images:", "busybox:1.36"} {
		if !strings.Contains(get, want) {
			t.Errorf("jobs get %s does not say %q:\n%s", high, want, get)
		}
	}
	byPriority := jobID.FindAllString(h.ok("jobs", "list", "--sort", "priority"), -1)
	if !slices.Equal(byPriority, []string{high, low}) {
		t.Errorf("jobs list --sort priority = %v, want [%s %s]", byPriority, high, low)
	}
	if got := jobID.FindAllString(h.ok("jobs", "list", "--sort", "priority:asc"), -1); !slices.Equal(got, []string{low, high}) {
		t.Errorf("jobs list --sort priority:asc = %v, want [%s %s]", got, low, high)
	}
	if got := jobID.FindAllString(h.ok("jobs", "list", "--sort", "created:asc"), -1); !slices.Equal(got, []string{high, low}) {
		t.Errorf("jobs list --sort created:asc = %v, want [%s %s] (oldest first)", got, high, low)
	}
	lowJob, err := h.api.Job(context.Background(), low)
	if err != nil || !strings.HasPrefix(lowJob.Name, "held-") {
		t.Fatalf("job %s's name = %q, %v; want its Job's name, held-…", low, lowJob.Name, err)
	}
	if got := jobID.FindAllString(h.ok("jobs", "list", "--name", lowJob.Name), -1); !slices.Equal(got, []string{low}) {
		t.Errorf("jobs list --name %s = %v, want [%s]", lowJob.Name, got, low)
	}
	if got := jobID.FindAllString(h.ok("jobs", "list", "--name", "held-*"), -1); len(got) != 2 {
		t.Errorf("jobs list --name 'held-*' = %v, want both held jobs", got)
	}
	if e := h.fails("jobs", "list", "--name", "Held_*"); !strings.Contains(e, "name") {
		t.Errorf("jobs list --name Held_* said %q; want a refusal naming the filter", e)
	}
	if got := jobID.FindAllString(h.ok("jobs", "list", "-l", "run=nightly", "--status", "queued"), -1); !slices.Equal(got, []string{low}) {
		t.Errorf("jobs list -l run=nightly = %v, want [%s]", got, low)
	}
	if got := jobID.FindAllString(h.ok("jobs", "list", "--limit", "1"), -1); len(got) != 1 {
		t.Errorf("jobs list --limit 1 listed %v", got)
	}

	if got := h.ok("__complete", "jobs", "get", ""); !strings.Contains(got, high+"\tqueued in us-east-1\n") || !strings.Contains(got, low+"\t") {
		t.Errorf("completing jobs get offered\n%s\nwant both job ids with their status", got)
	}
	if got := h.ok("__complete", "jobs", "list", "--region", "us-"); !strings.HasPrefix(got, "us-east-1\nus-west-2\n") {
		t.Errorf("completing --region offered\n%s\nwant the API's regions", got)
	}

	if out := h.ok("jobs", "bulk-delete", "-l", "team=ml", "--dry-run"); !strings.HasPrefix(out, "2 job(s) match; nothing was cancelled") {
		t.Errorf("bulk-delete --dry-run = %q, want 2 matching", out)
	}
	if e := h.fails("jobs", "bulk-delete", "-l", "team=ml"); e != "tidegate: "+msgBulkConfirm+"\n" {
		t.Errorf("bulk-delete without --yes off a terminal said %q", e)
	}
	if out := h.ok("jobs", "delete", low); out != "job "+low+" cancelled\n" {
		t.Errorf("jobs delete = %q", out)
	}
	if out := h.ok("jobs", "bulk-delete", "-l", "team=ml", "--yes"); !strings.HasPrefix(out, "1 of 1 matching job(s) cancelled") {
		t.Errorf("bulk-delete --yes = %q, want the one left cancelled", out)
	}
	// A finished job: deleting it again removes what is left of it (nothing here), and keeps it.
	if out := h.ok("jobs", "delete", low); out != "job "+low+" cancelled\n" {
		t.Errorf("jobs delete of a cancelled job = %q, want it answered, still cancelled", out)
	}
	if out := h.ok("jobs", "bulk-delete", "-l", "team=ml", "--status", "cancelled", "--dry-run"); !strings.HasPrefix(out, "2 job(s) match; nothing was deleted") {
		t.Errorf("bulk-delete --status cancelled --dry-run = %q, want both cancelled jobs", out)
	}
	if out := h.ok("jobs", "delete", "--purge", low); out != "job "+low+" deleted, its record too\n" {
		t.Errorf("jobs delete --purge = %q", out)
	}
	e := h.fails("jobs", "get", low)
	if !regexp.MustCompile(`^tidegate: no job "` + low + `" in your namespaces \(request id \S+\)\n$`).MatchString(e) {
		t.Errorf("jobs get of a purged job said %q, want not found", e)
	}
	if out := h.ok("jobs", "bulk-delete", "-l", "team=ml", "--status", "completed", "--older-than-days", "1", "--purge", "--yes"); !strings.HasPrefix(out, "0 of 0 matching job(s) deleted") {
		t.Errorf("bulk-delete --status completed = %q, want none (none succeeded, none is a day old)", out)
	}
	if out := h.ok("jobs", "bulk-delete", "-l", "team=ml", "--status", "cancelled", "--purge", "--yes"); !strings.HasPrefix(out, "1 of 1 matching job(s) deleted, their records too") {
		t.Errorf("bulk-delete --status cancelled --purge = %q, want the one left deleted", out)
	}
}

// TestDependsOnDev: on the dev stack, a job submitted with --depends-on waits blocked, says on
// what, and runs once its dependency has succeeded, released by the watch that records the end;
// one that waited for the dependency to fail is cancelled dependency_not_met.
func TestDependsOnDev(t *testing.T) {
	h := newHarness(t)
	submit := func(args ...string) apiclient.Job {
		t.Helper()
		h.stdin = exampleJob(t, uniqueName("dep"))
		out := h.ok(append([]string{"jobs", "submit", "-f", "-", "--region", "us-east-1", "-o", "json"}, args...)...)
		var j apiclient.Job
		if err := json.Unmarshal([]byte(out), &j); err != nil {
			t.Fatalf("jobs submit -o json = %s: %v", out, err)
		}
		return j
	}
	first := submit()
	next := submit("--depends-on", first.ID)
	onFailure := submit("--depends-on", first.ID+":failed")
	if next.Status != "blocked" && next.Status != "queued" {
		t.Errorf("%s, depending on a job just submitted, is %s; want blocked (or queued, had it ended already)", next.ID, next.Status)
	}
	if next.Status == "blocked" {
		out := h.ok("jobs", "get", next.ID)
		if !strings.Contains(out, "blocked until the jobs it depends on end as it asks ("+first.ID+")") || !strings.Contains(out, "Waits for:  "+first.ID+" succeeded") {
			t.Errorf("jobs get %s =\n%s\nwant it blocked on %s, and what it waits for", next.ID, out, first.ID)
		}
	}
	status := func(id string) (string, string) {
		j, err := h.api.Job(context.Background(), id)
		if err != nil {
			return "", ""
		}
		return j.Status, j.StatusHistory[len(j.StatusHistory)-1].Reason
	}
	h.eventually(next.ID+" succeeded after "+first.ID, func() bool { s, _ := status(next.ID); return s == "succeeded" })
	h.eventually(onFailure.ID+" cancelled", func() bool {
		s, why := status(onFailure.ID)
		return s == "cancelled" && strings.HasPrefix(why, "dependency_not_met: "+first.ID+" succeeded")
	})
	h.stdin = exampleJob(t, uniqueName("dep"))
	if stderr := h.fails("jobs", "submit", "-f", "-", "--region", "us-east-1", "--depends-on", first.ID+":later"); !strings.Contains(stderr, "depends_on[0].on") {
		t.Errorf("an unknown condition: stderr %q, want it to name depends_on[0].on", stderr)
	}
}

// TestArrayOnDev: on the dev stack, an array of 6 at parallelism 2 runs every child, never more
// than 2 let in at once (sampled as it runs), and ends succeeded with its counts adding up.
func TestArrayOnDev(t *testing.T) {
	h := newHarness(t)
	h.stdin = exampleJob(t, uniqueName("arr"))
	out := h.ok("jobs", "submit", "-f", "-", "--region", "us-east-1", "--array", "6", "--parallelism", "2", "-o", "json")
	var p apiclient.Job
	if err := json.Unmarshal([]byte(out), &p); err != nil || p.Array == nil || p.ArrayStatus == nil {
		t.Fatalf("jobs submit --array -o json = %s (%v), want an array with its status", out, err)
	}
	most := 0
	h.eventually(p.ID+" succeeded", func() bool {
		page, err := h.api.Jobs(context.Background(), apiclient.JobFilter{Parent: p.ID}, apiclient.ListOptions{Limit: 100})
		if err != nil {
			return false
		}
		active := 0
		for _, c := range page.Items {
			if c.Status != "blocked" && c.Status != "succeeded" && c.Status != "failed" && c.Status != "cancelled" {
				active++
			}
		}
		most = max(most, active)
		j, err := h.api.Job(context.Background(), p.ID)
		return err == nil && j.Status == "succeeded"
	})
	if most > 2 {
		t.Errorf("at most %d children let in at once, want at most 2", most)
	}
	j, err := h.api.Job(context.Background(), p.ID)
	if err != nil || j.ArrayStatus == nil || *j.ArrayStatus != (apiclient.ArrayStatus{Succeeded: 6}) {
		t.Errorf("the array's status at its end = %+v, %v; want 6 succeeded", j.ArrayStatus, err)
	}
	if got := h.ok("jobs", "get", p.ID); !strings.Contains(got, "Array:      6 children, 2 at once: 0 blocked, 0 active, 6 succeeded") {
		t.Errorf("jobs get %s =\n%s\nwant its array line", p.ID, got)
	}
	if got := h.ok("jobs", "list", "--parent", p.ID); strings.Count(got, "succeeded") != 6 {
		t.Errorf("jobs list --parent =\n%s\nwant its 6 children, succeeded", got)
	}
}

// TestNToNOnDev: on the dev stack, two arrays of 100, the second n_to_n on the first: every
// child i of the second starts only after child i of the first succeeded, and both succeed.
func TestNToNOnDev(t *testing.T) {
	h := newHarness(t)
	submit := func(args ...string) apiclient.Job {
		t.Helper()
		h.stdin = exampleJob(t, uniqueName("nn"))
		out := h.ok(append([]string{"jobs", "submit", "-f", "-", "--region", "us-east-1", "--array", "100", "-o", "json"}, args...)...)
		var j apiclient.Job
		if err := json.Unmarshal([]byte(out), &j); err != nil {
			t.Fatalf("jobs submit = %s: %v", out, err)
		}
		return j
	}
	first := submit("--parallelism", "25")
	jr := apiclient.JobRequest{Region: "us-east-1", Namespace: "team-a", Array: &apiclient.Array{Size: 100}, DependsOn: []apiclient.Dependency{{Job: first.ID, On: "succeeded", Mode: "n_to_n"}}}
	docs, err := documents([]byte(exampleJob(t, uniqueName("nn"))))
	if err != nil {
		t.Fatal(err)
	}
	jr.Manifest = docs[0]
	second, err := h.api.SubmitJob(context.Background(), jr, "")
	if err != nil {
		t.Fatalf("an array n_to_n on another: %v", err)
	}
	h.eventually("both arrays succeeded", func() bool {
		a, err1 := h.api.Job(context.Background(), first.ID)
		b, err2 := h.api.Job(context.Background(), second.ID)
		return err1 == nil && err2 == nil && a.Status == "succeeded" && b.Status == "succeeded"
	})
	at := func(j apiclient.Job, status string) time.Time {
		for _, tr := range j.StatusHistory {
			if tr.Status == status {
				return tr.At
			}
		}
		return time.Time{}
	}
	children := func(id string) []apiclient.Job {
		page, err := h.api.Jobs(context.Background(), apiclient.JobFilter{Parent: id}, apiclient.ListOptions{Limit: 100})
		if err != nil || len(page.Items) != 100 {
			t.Fatalf("the children of %s: %d, %v; want 100", id, len(page.Items), err)
		}
		return page.Items
	}
	as, bs := children(first.ID), children(second.ID)
	for i := range 100 {
		a, b := as[i], bs[i]
		if *a.ArrayIndex != i || *b.ArrayIndex != i {
			t.Fatalf("children listed out of order: %d and %d at %d", *a.ArrayIndex, *b.ArrayIndex, i)
		}
		if done, started := at(a, "succeeded"), at(b, "dispatching"); started.Before(done) {
			t.Errorf("child %d of the second was dispatched at %s, before child %d of the first succeeded at %s", i, started.Format(time.StampMilli), i, done.Format(time.StampMilli))
		}
	}
	h.stdin = exampleJob(t, uniqueName("nn"))
	if stderr := h.fails("jobs", "submit", "-f", "-", "--region", "us-east-1", "--array", "3", "--depends-on", first.ID+":succeeded:n_to_n"); !strings.Contains(stderr, "not an array of 3") {
		t.Errorf("n_to_n on an array of another size: stderr %q, want it refused", stderr)
	}
}

// TestAuditOnDev: `tidegate audit` shows a submission and a cancel the dev tenant made, each once
// with its outcome; a read made between leaves nothing.
func TestAuditOnDev(t *testing.T) {
	h := newHarness(t)
	from := time.Now().UTC().Add(-time.Second).Format(time.RFC3339)
	h.stdin = exampleJob(t, uniqueName("audited"))
	out := h.ok("jobs", "submit", "-f", "-", "--region", "us-east-1", "-o", "json")
	var j apiclient.Job
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatal(err)
	}
	h.ok("jobs", "get", j.ID)
	h.ok("jobs", "delete", j.ID)
	log := h.ok("audit", "--from", from, "-o", "json")
	var page apiclient.Page[apiclient.AuditRecord]
	if err := json.Unmarshal([]byte(log), &page); err != nil {
		t.Fatalf("audit -o json = %s: %v", log, err)
	}
	seen := map[string]int{}
	for _, r := range page.Items {
		if strings.Contains(r.Path, j.ID) || r.Action == "POST /api/v1/manifests" {
			seen[r.Action+" "+strconv.Itoa(r.Status)]++
		}
		if r.Action == "GET /api/v1/jobs/{id}" {
			t.Errorf("a read was audited: %+v", r)
		}
	}
	if seen["POST /api/v1/manifests 202"] < 1 || seen["DELETE /api/v1/jobs/{id} 200"] != 1 {
		t.Errorf("audit since %s = %v, want the submission (202) and the cancel (200)", from, seen)
	}
	if table := h.ok("audit", "--from", from, "--action", "DELETE /api/v1/jobs/{id}"); !strings.Contains(table, "/api/v1/jobs/"+j.ID) {
		t.Errorf("tidegate audit --action = %s, want the cancel's row", table)
	}
}
