package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/records"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// cacheFixture is a PrincipalCache over the real tenant store on DynamoDB Local, with a meter on
// the store's DynamoDB calls and a clock the test moves.
type cacheFixture struct {
	db     *dynamodb.Client
	table  string
	store  *dynamo.TenantStore
	meter  *testenv.Meter
	now    time.Time
	cache  *httpapi.PrincipalCache
	tenant tenancy.Tenant
}

func newCacheFixture(t *testing.T) *cacheFixture {
	tables, db := testenv.Tables(t)
	f := &cacheFixture{db: db, table: tables.Control, meter: &testenv.Meter{}, now: time.Now()}
	metered := dynamodb.New(db.Options(), func(o *dynamodb.Options) {
		next := o.HTTPClient
		if next == nil {
			next = http.DefaultClient
		}
		o.HTTPClient = f.meter.DynamoDB(next)
	})
	f.store = dynamo.NewTenantStore(metered, tables.Control)
	f.cache = httpapi.NewPrincipalCache(f.store, func() time.Time { return f.now })
	f.tenant = tenancy.Tenant{Name: "ml", Org: "acme", Namespaces: []string{"team-a"}, Role: tenancy.RoleMember, CreatedAt: f.now.UTC().Truncate(time.Second)}
	if err := f.store.PutTenant(context.Background(), f.tenant); err != nil {
		t.Fatal(err)
	}
	return f
}

// reads is how many DynamoDB calls fn made.
func (f *cacheFixture) reads(fn func()) int {
	f.meter.Reset()
	fn()
	return len(f.meter.Snapshot())
}

// revoke deletes a credential item as an operator revoking it would.
func (f *cacheFixture) revoke(t *testing.T, pk string) {
	_, err := f.db.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: &f.table, Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: "credential"},
	}})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPrincipalCacheKeys: a key's second use reads nothing; a revoked key works until its entry
// is PrincipalTTL old and not after; an unknown key is never remembered, so it works as soon as it
// is created.
func TestPrincipalCacheKeys(t *testing.T) {
	f := newCacheFixture(t)
	ctx := context.Background()
	key, _ := tenancy.NewKey()
	if err := f.store.AddKey(ctx, "ml", key, f.now); err != nil {
		t.Fatal(err)
	}
	want := tenancy.Principal{Tenant: f.tenant, Subject: "key:" + tenancy.KeyID(key), Credential: "key:" + tenancy.KeyID(key)}
	byKey := func(key string) (p tenancy.Principal, err error) {
		return f.cache.ByKey(ctx, key)
	}

	var p tenancy.Principal
	var err error
	if n := f.reads(func() { p, err = byKey(key) }); err != nil || n != 2 {
		t.Fatalf("first ByKey = %v after %d DynamoDB calls; want the principal after 2 (key, tenant)", err, n)
	}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("first ByKey (-want +got):\n%s", diff)
	}
	p.Tenant.Namespaces[0] = "changed by a caller"
	if n := f.reads(func() { p, err = byKey(key) }); err != nil || n != 0 {
		t.Fatalf("second ByKey = %v after %d DynamoDB calls; want the cached principal after none", err, n)
	}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("second ByKey (-want +got):\n%s", diff)
	}

	f.revoke(t, "apikey#"+tenancy.HashKey(key))
	f.now = f.now.Add(httpapi.PrincipalTTL - time.Second)
	if _, err := byKey(key); err != nil {
		t.Errorf("ByKey of a key revoked within PrincipalTTL = %v; want the cached principal", err)
	}
	f.now = f.now.Add(time.Second)
	if _, err := byKey(key); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("ByKey of a key revoked PrincipalTTL ago = %v; want ErrNotFound", err)
	}

	fresh, _ := tenancy.NewKey()
	for i := range 2 {
		if n := f.reads(func() { _, err = byKey(fresh) }); !errors.Is(err, records.ErrNotFound) || n != 1 {
			t.Fatalf("ByKey of an unknown key, try %d = %v after %d DynamoDB calls; want ErrNotFound after 1", i+1, err, n)
		}
	}
	if err := f.store.AddKey(ctx, "ml", fresh, f.now); err != nil {
		t.Fatal(err)
	}
	if _, err := byKey(fresh); err != nil {
		t.Errorf("ByKey of a key created just after it was refused = %v; want its principal", err)
	}
}

// TestPrincipalCacheIAM: an IAM caller is remembered like a key, under its ARN, and a tenant's
// change of namespaces reaches it once its entry expires.
func TestPrincipalCacheIAM(t *testing.T) {
	f := newCacheFixture(t)
	ctx := context.Background()
	const arn = "arn:aws:iam::123456789012:role/ml-ci"
	if _, err := f.cache.ByIAM(ctx, arn); !errors.Is(err, records.ErrNotFound) {
		t.Fatalf("ByIAM of an unmapped caller = %v; want ErrNotFound", err)
	}
	if err := f.store.AddIAM(ctx, "ml", arn, f.now); err != nil {
		t.Fatal(err)
	}
	var p tenancy.Principal
	var err error
	if n := f.reads(func() { p, err = f.cache.ByIAM(ctx, arn) }); err != nil || n != 2 {
		t.Fatalf("ByIAM once mapped = %v after %d DynamoDB calls; want the principal after 2", err, n)
	}
	if p.Subject != "iam:"+arn {
		t.Errorf("ByIAM subject = %q, want %q", p.Subject, "iam:"+arn)
	}

	changed := f.tenant
	changed.Namespaces = []string{"team-a", "team-b"}
	if err := f.store.PutTenant(ctx, changed); err != nil {
		t.Fatal(err)
	}
	if n := f.reads(func() { p, err = f.cache.ByIAM(ctx, arn) }); err != nil || n != 0 || !slices.Equal(p.Tenant.Namespaces, f.tenant.Namespaces) {
		t.Errorf("ByIAM within PrincipalTTL = %v, %v after %d DynamoDB calls; want the cached namespaces %v after none", p.Tenant.Namespaces, err, n, f.tenant.Namespaces)
	}
	f.now = f.now.Add(httpapi.PrincipalTTL)
	if p, err = f.cache.ByIAM(ctx, arn); err != nil || !slices.Equal(p.Tenant.Namespaces, changed.Namespaces) {
		t.Errorf("ByIAM after PrincipalTTL = %v, %v; want the new namespaces %v", p.Tenant.Namespaces, err, changed.Namespaces)
	}
}

// TestPrincipalCacheThroughAPI: with the cache in front of the store, an API key authenticates
// its second request without reading DynamoDB, and a wrong key is still a 401.
func TestPrincipalCacheThroughAPI(t *testing.T) {
	f := newCacheFixture(t)
	key, _ := tenancy.NewKey()
	if err := f.store.AddKey(context.Background(), "ml", key, f.now); err != nil {
		t.Fatal(err)
	}
	tables := dynamo.Tables{Control: f.table}
	h := served(t, httpapi.Deps{Principals: f.cache, Templates: dynamo.NewTemplateStore(f.db, tables.Control)})
	get := func(key string) int {
		req := httptest.NewRequest("GET", "/api/v1/templates", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	for i, wantReads := range []int{2, 0} {
		if n := f.reads(func() {
			if code := get(key); code != 200 {
				t.Fatalf("GET /api/v1/templates, request %d = %d, want 200", i+1, code)
			}
		}); n != wantReads {
			t.Errorf("request %d made %d tenant-store calls, want %d", i+1, n, wantReads)
		}
	}
	if code := get(key + "x"); code != 401 {
		t.Errorf("GET with a wrong key = %d, want 401", code)
	}
}
