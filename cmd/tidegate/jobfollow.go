package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tidegate/tidegate/shared/apiclient"
)

// How often following commands ask again. A job moves at most once a reconcile beat (seconds in
// dev, a minute in AWS), and one GET a second is nothing to the API.
const (
	followEvery = time.Second
	// watchEvery spaces a listing's refreshes: a whole page is more to read than one job.
	watchEvery = 2 * time.Second
	// maxFollowFailures is how many answers in a row may fail (a dropped connection, a 5xx)
	// before following gives up: one beat's worth of retries outlasts a blip.
	maxFollowFailures = 5
)

// msgStoppedWaiting is what an interrupted wait says: the job itself goes on.
const msgStoppedWaiting = "stopped waiting; job %s goes on: see it with `tidegate jobs get %s`"

// retryable reports whether a failed call may succeed if asked again: the network or the server,
// not the request.
func retryable(err error) bool {
	var apiErr *apiclient.Error
	if errors.As(err, &apiErr) {
		return apiErr.Status >= 500 || apiErr.Status == 429
	}
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// waitJob follows a job until it ends, printing each status it passes through once (to out for
// people, to err when out is for a script), with a live line saying what it waits for.
func waitJob(ctx context.Context, p *printer, c *apiclient.Client, id string) (apiclient.Job, error) {
	st := p.status()
	defer st.clear()
	seen, failures := 0, 0
	var j apiclient.Job
	for {
		got, err := c.Job(ctx, id)
		switch {
		case ctx.Err() != nil:
			st.clear()
			return j, fmt.Errorf(msgStoppedWaiting, id, id)
		case err != nil && retryable(err) && failures < maxFollowFailures:
			failures++
			st.set("%s: asking again (%v)", id, err)
		case err != nil:
			return j, err
		default:
			j, failures = got, 0
			for ; seen < len(j.StatusHistory); seen++ {
				st.clear()
				line := transitionText(j.StatusHistory[seen])
				if p.scripted() {
					p.note("%s", line)
				} else {
					p.line("%s", line)
				}
			}
			if j.Terminal() {
				return j, nil
			}
			st.set("%s: %s", id, statusText(j))
		}
		select {
		case <-ctx.Done():
			st.clear()
			return j, fmt.Errorf(msgStoppedWaiting, id, id)
		case <-time.After(followEvery):
		}
	}
}

// maxTail is the most lines the API answers from the end of a log.
const maxTail = 10000

// followLogs prints a job's log lines as they come, until the job ends: it reads the end of the
// newest pod's log each time and prints what follows the lines it printed before. --tail chooses
// how much of what is there already to print first.
func followLogs(ctx context.Context, p *printer, c *apiclient.Client, id string, o apiclient.LogOptions) error {
	first := o.Tail
	o.Tail = maxTail
	var shown []string
	pod, failures := "", 0
	for {
		logs, err := c.JobLogs(ctx, id, o)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil && retryable(err) && failures < maxFollowFailures:
			failures++
		case err != nil:
			return err
		default:
			failures = 0
			fresh := newLines(shown, logs.Lines)
			if name := podName(logs); name != pod {
				if pod != "" {
					p.note("-- pod %s --", name)
					fresh = logs.Lines
				}
				pod = name
			}
			if shown == nil && first > 0 && len(fresh) > first {
				fresh = fresh[len(fresh)-first:]
			}
			for _, l := range fresh {
				p.line("%s", l)
			}
			shown = append([]string{}, logs.Lines...)
			if logs.From == "record" {
				return nil // the pods are gone: the job has ended and this is its kept tail
			}
			if j, err := c.Job(ctx, id); err == nil && j.Terminal() {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(followEvery):
		}
	}
}

// newLines answers the lines of now that follow those of shown, the same log read earlier: what
// was appended when shown is still its start, else (the window of the last lines slid on) what
// comes after the last place shown's final lines appear. When they appear nowhere, all of now.
func newLines(shown, now []string) []string {
	if len(now) >= len(shown) && slices.Equal(now[:len(shown)], shown) {
		return now[len(shown):]
	}
	k := min(len(shown), overlapLines)
	tail := shown[len(shown)-k:]
	for end := len(now); end >= k; end-- {
		if slices.Equal(now[end-k:end], tail) {
			return now[end:]
		}
	}
	return now
}

// overlapLines is how many of the last lines shown must reappear to mark where new lines start:
// enough that a short repeated line does not fool it.
const overlapLines = 20

func podName(l apiclient.Logs) string {
	if l.Pod == nil {
		return ""
	}
	return *l.Pod
}
