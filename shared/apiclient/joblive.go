package apiclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Pod is one of a job's pods as the cluster has it now.
type Pod struct {
	Name       string            `json:"name"`
	Phase      string            `json:"phase"`
	NodeName   string            `json:"node_name"`
	Conditions []PodCondition    `json:"conditions"`
	Containers []ContainerStatus `json:"containers"`
	Labels     map[string]string `json:"labels"`

	raw json.RawMessage
}

type plainPod Pod

// UnmarshalJSON keeps the API's JSON along with the fields.
func (p *Pod) UnmarshalJSON(b []byte) error { return keep(b, (*plainPod)(p), &p.raw) }

// MarshalJSON gives back the API's JSON.
func (p Pod) MarshalJSON() ([]byte, error) { return give(p.raw, plainPod(p)) }

// PodCondition is one of a pod's conditions.
type PodCondition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// ContainerStatus is one container of a pod: ready or not, restarts, and its state as Kubernetes
// writes it ({"running": {...}}, {"terminated": {...}}, {"waiting": {...}}).
type ContainerStatus struct {
	Name         string         `json:"name"`
	Ready        bool           `json:"ready"`
	RestartCount int            `json:"restart_count"`
	State        map[string]any `json:"state"`
}

// Event is a cluster event about one of a job's objects or pods.
type Event struct {
	Type     string    `json:"type"`
	Reason   string    `json:"reason"`
	Message  string    `json:"message"`
	Count    int       `json:"count"`
	Object   string    `json:"object"`
	LastSeen time.Time `json:"last_seen"`

	raw json.RawMessage
}

type plainEvent Event

// UnmarshalJSON keeps the API's JSON along with the fields.
func (e *Event) UnmarshalJSON(b []byte) error { return keep(b, (*plainEvent)(e), &e.raw) }

// MarshalJSON gives back the API's JSON.
func (e Event) MarshalJSON() ([]byte, error) { return give(e.raw, plainEvent(e)) }

// Items is a listing the API answers whole, without pages.
type Items[T any] struct {
	Items []T `json:"items"`
}

// JobPods lists a job's pods, live from its cluster.
func (c *Client) JobPods(ctx context.Context, id string) ([]Pod, error) {
	var out Items[Pod]
	return out.Items, c.do(ctx, request{method: http.MethodGet, path: "/api/v1/jobs/" + pathEscape(id) + "/pods"}, &out)
}

// maxEventPages bounds how many pages JobEvents reads on: each reads up to 1,000 of the namespace's
// events, so ten are a namespace of 10,000, past which the newest are what a person wants anyway.
const maxEventPages = 10

// JobEvents lists the cluster's events about a job's objects and pods, reading on with each
// page's cursor (the API reads a bounded part of the namespace's events a request) until the
// last, or maxEventPages.
func (c *Client) JobEvents(ctx context.Context, id string) ([]Event, error) {
	var all []Event
	q := url.Values{}
	for range maxEventPages {
		var out Page[Event]
		if err := c.do(ctx, request{method: http.MethodGet, path: "/api/v1/jobs/" + pathEscape(id) + "/events", query: q}, &out); err != nil {
			return nil, err
		}
		all = append(all, out.Items...)
		if out.NextCursor == nil {
			break
		}
		q = url.Values{"cursor": {*out.NextCursor}}
	}
	return all, nil
}

// LogOptions choose which logs to read.
type LogOptions struct {
	Container string
	// Tail is how many lines from the end; all (up to the API's bound) when 0.
	Tail     int
	Previous bool
	// SinceSeconds reads only what was written that many seconds ago or later; all when 0.
	SinceSeconds int
}

// Logs are a job's log lines: from its newest pod, or from its record once the pods are gone.
type Logs struct {
	Pod       *string  `json:"pod"`
	Container string   `json:"container,omitempty"`
	Lines     []string `json:"lines"`
	// From is "cluster" or "record".
	From string `json:"from"`

	raw json.RawMessage
}

type plainLogs Logs

// UnmarshalJSON keeps the API's JSON along with the fields.
func (l *Logs) UnmarshalJSON(b []byte) error { return keep(b, (*plainLogs)(l), &l.raw) }

// MarshalJSON gives back the API's JSON.
func (l Logs) MarshalJSON() ([]byte, error) { return give(l.raw, plainLogs(l)) }

// JobLogs reads a job's logs.
func (c *Client) JobLogs(ctx context.Context, id string, o LogOptions) (Logs, error) {
	q := url.Values{}
	if o.Container != "" {
		q.Set("container", o.Container)
	}
	if o.Tail > 0 {
		q.Set("tail", strconv.Itoa(o.Tail))
	}
	if o.Previous {
		q.Set("previous", "true")
	}
	if o.SinceSeconds > 0 {
		q.Set("since_seconds", strconv.Itoa(o.SinceSeconds))
	}
	var out Logs
	return out, c.do(ctx, request{method: http.MethodGet, path: "/api/v1/jobs/" + pathEscape(id) + "/logs", query: q}, &out)
}

// Decision is one thing Tidegate decided about a job (GET /api/v1/jobs/{id}/decisions).
type Decision struct {
	At       time.Time                `json:"at"`
	Kind     string                   `json:"kind"`
	Reason   string                   `json:"reason"`
	Attempt  int                      `json:"attempt"`
	Region   string                   `json:"region"`
	Flavor   string                   `json:"flavor"`
	Resource string                   `json:"resource"`
	Quota    map[string]QuotaStanding `json:"quota"`
	Price    *SpotGate                `json:"price"`
	Evicted  int                      `json:"evicted"`
	Rule     string                   `json:"rule"`
}

// QuotaStanding is what a tenant held of one resource of a flavor, and its nominal quota there.
type QuotaStanding struct {
	Held    string `json:"held"`
	Nominal string `json:"nominal"`
}

// JobDecisions reads what was decided about job id, newest first.
func (c *Client) JobDecisions(ctx context.Context, id string) ([]Decision, error) {
	var out Items[Decision]
	err := c.do(ctx, request{method: http.MethodGet, path: "/api/v1/jobs/" + pathEscape(id) + "/decisions"}, &out)
	return out.Items, err
}
