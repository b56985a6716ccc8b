package apiclient

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
)

// The API's resources decode into typed values that also keep the API's own JSON: encoding one
// again gives back exactly what the API said, fields this client does not know included, so
// output for scripts is the API's and stays stable as it grows.

// keep decodes b into plain (the value's fields) and remembers b in raw.
func keep(b []byte, plain any, raw *json.RawMessage) error {
	if err := json.Unmarshal(b, plain); err != nil {
		return err
	}
	*raw = append(json.RawMessage(nil), b...)
	return nil
}

// give is the API's JSON when the value came from it, else the value's fields encoded.
func give(raw json.RawMessage, plain any) ([]byte, error) {
	if raw != nil {
		return raw, nil
	}
	return json.Marshal(plain)
}

// Page is API.md's shape for every list: the items, and the cursor of the next page (nil when
// this is the last).
type Page[T any] struct {
	Items      []T     `json:"items"`
	NextCursor *string `json:"next_cursor"`
}

// ListOptions choose a page: Limit items (the API's default 100 when 0; at most 1000 a call) from
// Cursor (a previous page's NextCursor).
type ListOptions struct {
	Limit  int
	Cursor string
}

// maxPage is the API's largest page.
const maxPage = 1000

func (o ListOptions) query(q url.Values) url.Values {
	if q == nil {
		q = url.Values{}
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(min(o.Limit, maxPage)))
	}
	if o.Cursor != "" {
		q.Set("cursor", o.Cursor)
	}
	return q
}

// Collect gathers up to limit items (all of them when limit is 0), a page at a time from cursor.
// The answer's NextCursor resumes after the last item gathered, nil when none are left.
func Collect[T any](ctx context.Context, limit int, cursor string, list func(context.Context, ListOptions) (Page[T], error)) (Page[T], error) {
	out := Page[T]{Items: []T{}}
	for {
		want := maxPage
		if limit > 0 {
			want = min(limit-len(out.Items), maxPage)
		}
		p, err := list(ctx, ListOptions{Limit: want, Cursor: cursor})
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, p.Items...)
		out.NextCursor = p.NextCursor
		if p.NextCursor == nil || (limit > 0 && len(out.Items) >= limit) || len(p.Items) == 0 {
			return out, nil
		}
		cursor = *p.NextCursor
	}
}
