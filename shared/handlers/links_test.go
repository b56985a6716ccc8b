package handlers_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/tidegate/tidegate/"

// devOnly are the stand-ins and the dev stack: no function links them.
var devOnly = []string{module + "shared/dev/"}

// kubernetes is every Kubernetes package: their inits run in each cold start of a binary that
// links them, used or not (client-go's scheme alone registers every API group).
var kubernetes = []string{"k8s.io/", "sigs.k8s.io/", module + "shared/kube"}

// admitting is what only the API needs: the admission policy, with the Pod Security evaluator.
var admitting = []string{"k8s.io/pod-security-admission/", module + "shared/policy", module + "shared/httpapi"}

// typedClients is client-go's typed client set (and our wrapper of it), whose scheme registers
// every API group at start: dispatch applies with the dynamic client alone.
var typedClients = []string{"k8s.io/client-go/kubernetes", "k8s.io/client-go/kubernetes/", module + "shared/kube/typed"}

// sealing is the keyring and its KMS client: only the functions that seal or open secrets need them.
var sealing = []string{"github.com/aws/aws-sdk-go-v2/service/kms", module + "shared/keyring", module + "shared/handlers/sealing"}

// mustNotLink lists, for each function's main package (and the packages every function starts
// from), what it must not depend on, however indirectly. A prefix ending in "/" covers a tree.
var mustNotLink = map[string][]string{
	"functions/api":       devOnly,
	"functions/dispatch":  join(devOnly, admitting, typedClients, sealing, []string{module + "shared/hosting", module + "shared/reconcile"}),
	"functions/reconcile": join(devOnly, admitting),
	"functions/webhook":   join(devOnly, kubernetes),
	"shared/handlers":     join(devOnly, kubernetes, sealing),
	"shared/config":       join(devOnly, kubernetes),
	// The API reaches a job's objects through shared/jobobjects, not through the functions that
	// dispatch and follow jobs.
	"shared/httpapi": join(devOnly, []string{module + "shared/dispatch", module + "shared/reconcile"}),
	// The key API's authorizer answers before the API runs, on every key API Gateway has not
	// cached: it reads keys, and links neither a cluster client nor the API.
	"functions/authorizer": join(devOnly, kubernetes, admitting, sealing),
}

func join(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

func TestFunctionsLinkOnlyWhatTheyUse(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool on PATH to list the imports with: %v", err)
	}
	for pkg, forbidden := range mustNotLink {
		t.Run(pkg, func(t *testing.T) {
			// Listed with the tag the functions are built with (build/sam.mk).
			out, err := exec.Command(goTool, "list", "-tags", "lambda.norpc", "-deps", "../../"+pkg).Output()
			if err != nil {
				t.Fatalf("go list -deps %s: %v", pkg, err)
			}
			deps := strings.Fields(string(out))
			if len(deps) == 0 {
				t.Fatalf("go list -deps %s listed nothing", pkg)
			}
			for _, dep := range deps {
				for _, f := range forbidden {
					if dep == f || (strings.HasSuffix(f, "/") && strings.HasPrefix(dep, f)) {
						t.Errorf("%s links %s", pkg, dep)
					}
				}
			}
		})
	}
}
