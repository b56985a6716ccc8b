// Command arrays measures array jobs on `tidegate dev`'s stack on the stand-ins: what submitting a
// 10,000-child array costs in DynamoDB units against single submissions of as many jobs (the
// API function's calls, every one asking ReturnConsumedCapacity), and an array of 1,000
// one-second children at parallelism 50 run to its end, its children let in sampled each second
// (never more than the parallelism) and its counts checked to add up.
//
//	go run ./bench/arrays [-size 10000] [-singles 1000] [-run-size 1000] [-parallelism 50]
//
// The singles' units are measured on -singles submissions and scaled to -size: each single
// submission writes the same items (its record, its event, its idempotency key), so the cost of
// 10,000 is ten times that of 1,000. With TIDEGATE_SANDBOX_STATE naming a running sandbox's state
// file (`tidegate sandbox --kube`), the run uses its stand-ins; otherwise it starts its own.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/tidegate/tidegate/bench/jobsapi"
	"github.com/tidegate/tidegate/shared/dev/awscalls"
	"github.com/tidegate/tidegate/shared/dev/devstack"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/jobs"
)

// goalUnits bounds an array's submission against single submissions of as many jobs.
const goalUnits = 1.1

func main() {
	size := flag.Int("size", 10_000, "children of the array whose submission is counted")
	singles := flag.Int("singles", 1_000, "single submissions counted, scaled to -size")
	runSize := flag.Int("run-size", 1_000, "children of the array run to its end")
	parallelism := flag.Int("parallelism", 50, "the run array's parallelism")
	run := flag.Duration("run", time.Second, "how long each child's pod runs (kwok's pod-complete delay)")
	timeout := flag.Duration("timeout", 15*time.Minute, "longest the run array may take")
	flag.Parse()
	if *size < jobs.MinArraySize || *size > jobs.MaxArraySize || *singles < 1 || *runSize < jobs.MinArraySize || *parallelism < 1 || *parallelism > *runSize {
		fail(fmt.Errorf("-size and -run-size must be arrays' sizes (%d–%d), -singles at least 1, -parallelism from 1 to -run-size", jobs.MinArraySize, jobs.MaxArraySize))
	}
	r, err := measure(*size, *singles, *runSize, *parallelism, *run, *timeout)
	if err != nil {
		fail(err)
	}
	r.print(os.Stdout)
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "arrays: %v\n", err)
	os.Exit(1)
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "arrays: "+format+"\n", args...)
}

// result is what one run measured.
type result struct {
	size, singles              int
	singleUnits, arrayUnits    float64 // the API function's read and write units
	singleTook, arrayTook      time.Duration
	runSize, parallelism, most int
	ran                        time.Duration
	status                     jobs.ArrayStatus
	parentStatus               jobs.Status
	samples                    int
}

func measure(size, singles, runSize, parallelism int, run, timeout time.Duration) (result, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, work, stop, err := sandbox.AttachTemp(ctx, "tidegate-arrays-", func(msg string) { progress("%s", msg) })
	if err != nil {
		return result{}, err
	}
	defer stop()
	counter := &awscalls.Counter{}
	stack, err := devstack.Start(ctx, devstack.Options{
		Addr: "127.0.0.1:0", APIKey: "arrays-bench", Beat: time.Minute,
		Dir: filepath.Join(work, "dev"), Standins: &st, Prefix: fmt.Sprintf("arrays-%d", os.Getpid()),
		Meter: counter, RegionCapacity: fmt.Sprintf("us-east-1=%d", 2*parallelism), RateLimit: 100000, RateBurst: 100000,
	}, slog.New(slog.NewTextHandler(io.Discard, nil)), 3*time.Minute)
	if err != nil {
		return result{}, err
	}
	defer stack.Stop()
	api := jobsapi.Client{URL: stack.State.URL, Key: stack.State.APIKey}
	time.Sleep(10 * time.Second) // the first beat's isolation objects
	r := result{size: size, singles: singles, runSize: runSize, parallelism: parallelism}
	request := func(name string, delay time.Duration) map[string]any {
		return jobsapi.JobRequest(name, map[string]string{"bench": "arrays"}, map[string]string{"pod-complete.stage.kwok.x-k8s.io/delay": delay.String()}, "sleep", "1")
	}

	progress("submitting %d single jobs, 8 at a time", singles)
	counter.Reset()
	start := time.Now()
	ids, err := api.SubmitAll(ctx, singles, 8, func(i int) string { return fmt.Sprintf("one-%d", i) }, func(name string) map[string]any { return request(name, 0) })
	if err != nil {
		return r, err
	}
	r.singleTook, r.singleUnits = time.Since(start), apiUnits(counter)
	if _, err := api.WaitEnded(ctx, "bench=arrays", ids, time.Now().Add(timeout)); err != nil {
		return r, err
	}

	progress("submitting an array of %d children", size)
	big := request("big", 0)
	big["array"] = map[string]any{"size": size, "parallelism": 1}
	counter.Reset()
	start = time.Now()
	bigID, err := api.Submit(ctx, "big", big)
	if err != nil {
		return r, err
	}
	r.arrayTook, r.arrayUnits = time.Since(start), apiUnits(counter)
	progress("cancelling it")
	if code, body, err := api.Do(ctx, http.MethodDelete, "/api/v1/jobs/"+bigID, nil, nil); err != nil || code != http.StatusOK {
		return r, fmt.Errorf("DELETE the array = %d %s: %v", code, body, err)
	}

	progress("running an array of %d children of %s at parallelism %d", runSize, run, parallelism)
	small := request("shards", run)
	small["array"] = map[string]any{"size": runSize, "parallelism": parallelism}
	start = time.Now()
	id, err := api.Submit(ctx, "shards", small)
	if err != nil {
		return r, err
	}
	return r, r.follow(ctx, api, id, start, time.Now().Add(timeout))
}

// apiUnits are the read and write units of the API function's calls counted so far.
func apiUnits(c *awscalls.Counter) float64 {
	total := 0.0
	for k, t := range c.Calls() {
		if k.Function == "api" {
			total += t.ReadUnits + t.WriteUnits
		}
	}
	return total
}

// follow samples array id's children once a second until the array ends, keeping the most let
// in at once, then its counts.
func (r *result) follow(ctx context.Context, api jobsapi.Client, id string, start, deadline time.Time) error {
	for ; ; time.Sleep(time.Second) {
		active, err := letIn(ctx, api, id)
		if err != nil {
			return err
		}
		r.most, r.samples = max(r.most, active), r.samples+1
		code, body, err := api.Do(ctx, http.MethodGet, "/api/v1/jobs/"+id, nil, nil)
		if err != nil || code != http.StatusOK {
			return fmt.Errorf("GET the array = %d %s: %v", code, body, err)
		}
		var j jobs.Job
		if err := json.Unmarshal(body, &j); err != nil || j.ArrayStatus == nil {
			return fmt.Errorf("the array's answer %s: %v", body, err)
		}
		if j.Status.Terminal() {
			r.ran, r.status, r.parentStatus = time.Since(start), *j.ArrayStatus, j.Status
			return nil
		}
		if r.samples%15 == 0 {
			progress("%+v", *j.ArrayStatus)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the array had not ended by the deadline: %+v", *j.ArrayStatus)
		}
	}
}

// letIn counts array id's children let in and not ended, from its children's listing.
func letIn(ctx context.Context, api jobsapi.Client, id string) (int, error) {
	n, cursor := 0, ""
	for {
		path := "/api/v1/jobs?limit=1000&parent=" + id
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		code, body, err := api.Do(ctx, http.MethodGet, path, nil, nil)
		if err != nil || code != http.StatusOK {
			return 0, fmt.Errorf("GET the children = %d %s: %v", code, body, err)
		}
		var page struct {
			Items      []jobs.Job `json:"items"`
			NextCursor *string    `json:"next_cursor"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			return 0, err
		}
		for _, c := range page.Items {
			if c.Status != jobs.StatusBlocked && !c.Status.Terminal() {
				n++
			}
		}
		if page.NextCursor == nil || *page.NextCursor == "" {
			return n, nil
		}
		cursor = *page.NextCursor
	}
}

func (r result) print(w io.Writer) {
	scaled := r.singleUnits * float64(r.size) / float64(r.singles)
	st := r.status
	fmt.Fprintf(w, "- %d single submissions: %.0f read and write units (%.2f a job) in %s; scaled to %d: %.0f\n",
		r.singles, r.singleUnits, r.singleUnits/float64(r.singles), r.singleTook.Round(time.Millisecond), r.size, scaled)
	fmt.Fprintf(w, "- one array of %d: %.0f units (%.2f a child) in %s\n", r.size, r.arrayUnits, r.arrayUnits/float64(r.size), r.arrayTook.Round(time.Millisecond))
	fmt.Fprintf(w, "- an array of %d one-second children at parallelism %d: %s in %s (%.2f children a second); at most %d let in at once in %d samples; array_status %+v, adding up to %d\n\n",
		r.runSize, r.parallelism, r.parentStatus, r.ran.Round(10*time.Millisecond), float64(r.runSize)/r.ran.Seconds(), r.most, r.samples,
		st, st.Blocked+st.Active+st.Succeeded+st.Failed+st.Cancelled)
	fmt.Fprintln(w, "| Figure | Measured | Goal | Ratio |")
	fmt.Fprintln(w, "|---|--:|--:|--:|")
	fmt.Fprintf(w, "| array submission ÷ single submissions, in units | %.0f ÷ %.0f | ≤ %.1f | %.2f× |\n", r.arrayUnits, scaled, goalUnits, r.arrayUnits/scaled)
	fmt.Fprintf(w, "| most children let in at once ÷ the parallelism | %d ÷ %d | ≤ 1 | %.2f× |\n", r.most, r.parallelism, float64(r.most)/float64(r.parallelism))
	sum := st.Blocked + st.Active + st.Succeeded + st.Failed + st.Cancelled
	fmt.Fprintf(w, "| children succeeded ÷ the array's size (its counts adding up) | %d of %d (sum %d) | 1 | %.2f× |\n", st.Succeeded, r.runSize, sum, float64(st.Succeeded)/float64(r.runSize))
}
