package httpapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/kube"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// memberKey stores tenant name of org, a member holding namespaces, and answers a new API key
// of it.
func memberKey(t *testing.T, tenants *dynamo.TenantStore, name, org string, namespaces ...string) string {
	t.Helper()
	ctx, now := context.Background(), time.Now()
	if err := tenants.PutTenant(ctx, tenancy.Tenant{Name: name, Org: org, Namespaces: namespaces, Role: tenancy.RoleMember, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	key, err := tenancy.NewKey()
	if err == nil {
		err = tenants.AddKey(ctx, name, key, now)
	}
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// regionCluster reaches the cluster of kubeconfig as region us-east-1's, as the API and dispatch
// do in dev.
func regionCluster(t *testing.T, kubeconfig string) *kube.Clusters {
	t.Helper()
	kc, err := kube.New(config.Config{Regions: map[string]string{"us-east-1": "sandbox"}, Kubeconfig: kubeconfig}, aws.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return kc
}
