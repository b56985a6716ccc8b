package isolating_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// rbacFile is what an operator applies to each cluster for the beat (README, scripts/eks-access.sh).
const rbacFile = "../../scripts/eks-isolation-rbac.yaml"

// applyRBAC creates or replaces the ClusterRole and ClusterRoleBinding of rbacFile.
func applyRBAC(t *testing.T, r *rig) {
	t.Helper()
	raw, err := os.ReadFile(rbacFile)
	if err != nil {
		t.Fatal(err)
	}
	docs := bytes.Split(raw, []byte("\n---\n"))
	if len(docs) != 2 {
		t.Fatalf("%s holds %d documents; want a ClusterRole and a ClusterRoleBinding", rbacFile, len(docs))
	}
	var role rbacv1.ClusterRole
	var binding rbacv1.ClusterRoleBinding
	if err := yaml.UnmarshalStrict(docs[0], &role); err != nil {
		t.Fatalf("%s's ClusterRole: %v", rbacFile, err)
	}
	if err := yaml.UnmarshalStrict(docs[1], &binding); err != nil {
		t.Fatalf("%s's ClusterRoleBinding: %v", rbacFile, err)
	}
	ctx := context.Background()
	roles, bindings := r.kc.RbacV1().ClusterRoles(), r.kc.RbacV1().ClusterRoleBindings()
	if _, err := roles.Create(ctx, &role, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		_, err = roles.Update(ctx, &role, metav1.UpdateOptions{})
	} else if err != nil {
		t.Fatal(err)
	}
	if _, err := bindings.Create(ctx, &binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// The RBAC shipped for clusters is enough for the beat: acting as a member of its group alone,
// the keeper reads and writes what it must; without the group, it is refused.
func TestRBACFileLetsTheBeatKeep(t *testing.T) {
	ns, _ := testenv.Namespace(t)
	apps, _ := testenv.Namespace(t)
	tn := tenancy.Tenant{Name: "ml", Org: "acme", Role: tenancy.RoleMember, Namespaces: []string{ns}}

	stranger := newRigAs(t, rest.ImpersonationConfig{UserName: "tidegate-reconcile"}, apps, tn)
	applyRBAC(t, stranger)
	if err := stranger.k.Keep(context.Background()); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("Keep as a user outside the group = %v; want forbidden", err)
	}

	member := newRigAs(t, rest.ImpersonationConfig{UserName: "tidegate-reconcile", Groups: []string{"tidegate-isolation"}}, apps, tn)
	if got := member.beat(t); len(got) != 6 {
		t.Errorf("Keep as a member of tidegate-isolation wrote %d times; want 6 (4 in the tenant's namespace, 2 in the apps')", len(got))
	}
	member.matches(t, "as a member of tidegate-isolation")
}
