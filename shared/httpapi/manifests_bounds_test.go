package httpapi

import (
	"fmt"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/manifest"
)

// A tenant's YAML body as dense as YAML allows, at the size limit: a node every two bytes. The
// library under the decoder would have built ≈ 150 MiB of tree before refusing it; the API
// answers 400 naming the limit, having allocated little more than the body.
func TestManifestsHostileDenseYAMLBody(t *testing.T) {
	head := "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\n  l: ["
	body := head + strings.Repeat("0,", (manifest.DefaultLimits.MaxBytes-len(head)-3)/2) + "0]\n"
	req := httptest.NewRequest("POST", "/api/v1/manifests?namespace=team-a", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/yaml")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, _, _, err := (&api{}).readManifestsRequest(httptest.NewRecorder(), req)
	runtime.ReadMemStats(&after)
	apiErr, ok := err.(*Error)
	if !ok || apiErr.Status() != 400 {
		t.Fatalf("a %d-byte dense YAML body = %v; want a 400", len(body), err)
	}
	want := []FieldProblem{{Field: "manifests[0]", Problem: fmt.Sprintf("more than %d values in all; split the manifests across requests", manifest.DefaultLimits.MaxNodes)}}
	if diff := cmp.Diff(want, apiErr.Fields); diff != "" {
		t.Errorf("a dense YAML body's fields (-want +got):\n%s", diff)
	}
	// The body read whole (its buffer grows by doubling to ≈ 2× its size), the rest a few KiB.
	if got, bound := after.TotalAlloc-before.TotalAlloc, uint64(4*len(body)); got > bound {
		t.Errorf("refusing a %d-byte dense YAML body allocated %d bytes; want at most %d", len(body), got, bound)
	}
}
