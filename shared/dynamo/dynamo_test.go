package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/tenancy"
	"github.com/tidegate/tidegate/shared/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestTenantStore(t *testing.T) {
	tables, db := testenv.Tables(t)
	s := dynamo.NewTenantStore(db, tables.Control)
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	want := tenancy.Tenant{Name: "ml", Org: "acme", Namespaces: []string{"a", "b"}, Role: tenancy.RoleMember, CreatedAt: now}
	if err := s.PutTenant(ctx, want); err != nil {
		t.Fatalf("PutTenant: %v", err)
	}
	got, err := s.Tenant(ctx, "ml")
	if err != nil {
		t.Fatalf("Tenant(ml): %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Tenant(ml) (-want +got):\n%s", diff)
	}
	if _, err := s.Tenant(ctx, "nobody"); !errors.Is(err, dynamo.ErrNotFound) {
		t.Errorf("Tenant(nobody) = %v, want ErrNotFound", err)
	}
	if err := s.PutTenant(ctx, tenancy.Tenant{Name: "Bad Name", Org: "acme", Namespaces: []string{"a"}, Role: "root"}); err == nil {
		t.Errorf("PutTenant accepted a bad name and role")
	}

	key, _ := tenancy.NewKey()
	if err := s.AddKey(ctx, "ml", key, now); err != nil {
		t.Fatalf("AddKey: %v", err)
	}
	p, err := s.ByKey(ctx, key)
	if err != nil || p.Tenant.Name != "ml" || p.Subject != "key:"+tenancy.KeyID(key) {
		t.Errorf("ByKey = %+v, %v; want tenant ml, subject key:%s", p, err, tenancy.KeyID(key))
	}
	if _, err := s.ByKey(ctx, key+"x"); !errors.Is(err, dynamo.ErrNotFound) {
		t.Errorf("ByKey(other key) = %v, want ErrNotFound", err)
	}
	if err := s.AddKey(ctx, "ghost", key, now); !errors.Is(err, dynamo.ErrNotFound) {
		t.Errorf("AddKey for a missing tenant = %v, want ErrNotFound", err)
	}
	if _, err := s.ByKey(ctx, key); err != nil {
		t.Errorf("the failed AddKey for a missing tenant disturbed the stored key: %v", err)
	}
}

// TestJobListPages lists jobs across two namespaces newest first, page by page, with a third
// namespace's jobs kept out.
func TestJobListPages(t *testing.T) {
	tables, db := testenv.Tables(t)
	ctx := context.Background()
	base := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	var want []string
	for i := range 7 {
		ns := []string{"a", "b", "c"}[i%3]
		j := jobs.Job{ID: fmt.Sprintf("job-%d", i), Namespace: ns, Region: "us-east-1", Status: jobs.StatusQueued, CreatedAt: base.Add(time.Duration(i) * time.Minute)}
		item, err := attributevalue.MarshalMap(j)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range map[string]string{"pk": "job#" + j.ID, "sk": "job", "gsi1pk": "ns#" + ns, "gsi1sk": j.CreatedAt.Format(time.RFC3339Nano) + "#" + j.ID} {
			item[k], _ = attributevalue.Marshal(v)
		}
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &tables.Jobs, Item: item}); err != nil {
			t.Fatal(err)
		}
		if ns != "c" {
			want = append([]string{j.ID}, want...)
		}
	}
	s := dynamo.NewJobStore(db, tables.Jobs)
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatalf("listing did not end after 5 pages; got %v", got)
		}
		page, err := s.List(ctx, []string{"a", "b"}, 2, cursor)
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		for _, j := range page.Jobs {
			got = append(got, j.ID)
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("jobs in a and b, newest first (-want +got):\n%s", diff)
	}
}
