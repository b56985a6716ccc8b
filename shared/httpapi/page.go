package httpapi

import (
	"encoding/base64"
	"net/url"
	"strconv"
)

// Listing limits from API.md: limit is 1–1000, 100 when not given.
const (
	defaultLimit = 100
	maxLimit     = 1000
)

// listPage is API.md's shape for every list.
type listPage[T any] struct {
	Items      []T     `json:"items"`
	NextCursor *string `json:"next_cursor"`
}

// pageParams reads limit and cursor. The cursor is opaque to clients: base64url of the store's own.
func pageParams(q url.Values) (limit int, cursor string, err error) {
	limit = defaultLimit
	if s := q.Get("limit"); s != "" {
		n, convErr := strconv.Atoi(s)
		if convErr != nil || n < 1 || n > maxLimit {
			return 0, "", Invalid("limit is out of range", FieldProblem{Field: "limit", Problem: "must be a whole number from 1 to 1000"})
		}
		limit = n
	}
	cursor, err = cursorParam(q)
	return limit, cursor, err
}

// cursorParam reads the cursor alone, for a listing whose pages the store sizes.
func cursorParam(q url.Values) (string, error) {
	s := q.Get("cursor")
	if s == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) == 0 {
		return "", Invalid("cursor is not one this API gave out", FieldProblem{Field: "cursor", Problem: "pass next_cursor from the previous page unchanged"})
	}
	return string(b), nil
}

// nextCursor wraps the store's cursor for the client; nil when there is no next page.
func nextCursor(storeCursor string) *string {
	if storeCursor == "" {
		return nil
	}
	c := base64.RawURLEncoding.EncodeToString([]byte(storeCursor))
	return &c
}
