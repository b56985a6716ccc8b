package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
)

// TestListSortedByName: ?sort=name:asc lists a tenant's jobs a to z across its namespaces (equal
// names newest first), name:desc z to a, both paging with the cursor, and never a job of another
// tenant, whose names interleave with its own; a sort the API does not know is a 400 naming sort.
func TestListSortedByName(t *testing.T) {
	ctx := context.Background()
	tables, db := testenv.Tables(t)
	tenants := dynamo.NewTenantStore(db, tables.Control)
	store := dynamo.NewJobStore(db, tables)
	keyA := memberKey(t, tenants, "ml", "acme", "team-a", "team-a2")
	keyB := memberKey(t, tenants, "rival", "rival", "team-b")
	api := served(t, httpapi.Deps{Principals: tenants, Jobs: store, Regions: []string{"us-east-1"}})
	base := time.Now().Add(-time.Hour)
	n := 0
	stored := func(tenant, ns, name string) string {
		t.Helper()
		n++
		at := base.Add(time.Duration(n) * time.Second)
		j := jobs.New(fmt.Sprintf("job-%02d", n), tenant, ns, "us-east-1", 50, nil, []map[string]any{
			{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": name}},
		}, at)
		if _, _, err := store.Create(ctx, j, jobs.Event(outbox.JobQueued, j, "", at), nil, at); err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	// ml's jobs, in name order: "a" before "a-b" (a name before the longer ones it starts), the
	// two "b"s newest first, namespaces interleaved.
	b1 := stored("ml", "team-a", "b")
	ab := stored("ml", "team-a2", "a-b")
	stored("rival", "team-b", "a-a")
	c := stored("ml", "team-a", "c")
	a := stored("ml", "team-a2", "a")
	stored("rival", "team-b", "bb")
	b2 := stored("ml", "team-a2", "b")
	stored("rival", "team-b", "0")
	want := []string{a, ab, b2, b1, c}

	list := func(key, query string) (int, []string, string) {
		req := httptest.NewRequest("GET", "/api/v1/jobs?"+query, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		var out struct {
			Items      []struct{ ID string }
			NextCursor *string `json:"next_cursor"`
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &out)
		var ids []string
		for _, j := range out.Items {
			ids = append(ids, j.ID)
		}
		next := ""
		if out.NextCursor != nil {
			next = *out.NextCursor
		}
		return rec.Code, ids, next
	}
	all := func(key, query string) []string {
		t.Helper()
		var ids []string
		cursor := ""
		for range 10 {
			code, page, next := list(key, query+"&limit=2&cursor="+cursor)
			if code != 200 {
				t.Fatalf("?%s&limit=2 = %d", query, code)
			}
			ids = append(ids, page...)
			if cursor = next; cursor == "" {
				return ids
			}
		}
		t.Fatalf("?%s did not end after 10 pages: %v", query, ids)
		return nil
	}
	if got := all(keyA, "sort=name:asc"); !slices.Equal(got, want) {
		t.Errorf("tenant ml's ?sort=name:asc = %v, want %v", got, want)
	}
	reversed := slices.Clone(want)
	slices.Reverse(reversed)
	if got := all(keyA, "sort=name:desc"); !slices.Equal(got, reversed) {
		t.Errorf("tenant ml's ?sort=name:desc = %v, want %v", got, reversed)
	}
	if got := all(keyA, "sort=name:asc&namespace=team-a2&name=a*"); !slices.Equal(got, []string{a, ab}) {
		t.Errorf("tenant ml's ?sort=name:asc in team-a2 named a* = %v, want %v", got, []string{a, ab})
	}
	for _, q := range []string{"sort=name:asc", "sort=name:desc", "sort=name:asc&name=a*"} {
		if got := all(keyB, q); slices.ContainsFunc(got, func(id string) bool { return slices.Contains(want, id) }) || len(got) == 0 {
			t.Errorf("tenant rival's ?%s = %v; want only its own jobs", q, got)
		}
	}
	if code, _, _ := list(keyB, "sort=name:asc&namespace=team-a"); code != 403 {
		t.Errorf("tenant rival's ?sort=name:asc&namespace=team-a = %d, want 403", code)
	}
	for _, q := range []string{"sort=name", "sort=name:up", "sort=tenant:asc", "sort=" + strings.Repeat("n", 300)} {
		if code, _, _ := list(keyA, q); code != 400 {
			t.Errorf("?%s = %d, want 400", q, code)
		}
	}
}
