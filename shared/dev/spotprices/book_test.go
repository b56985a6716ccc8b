package spotprices_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/dev/spotprices"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func TestSetRejects(t *testing.T) {
	tests := []struct {
		name         string
		region, typ  string
		price        float64
		at           time.Time
		wantField    string
		wantInReason string
	}{
		{"no region", "", "g5.xlarge", 0.42, t0, "region", "required"},
		{"region with a slash", "us-east-1/x", "g5.xlarge", 0.42, t0, "region", "not a region name"},
		{"upper-case region", "US-EAST-1", "g5.xlarge", 0.42, t0, "region", "not a region name"},
		{"no instance type", "us-east-1", "", 0.42, t0, "instance_type", "required"},
		{"instance type with a space", "us-east-1", "g5 xlarge", 0.42, t0, "instance_type", "spaces"},
		{"negative price", "us-east-1", "g5.xlarge", -0.42, t0, "price", "at least"},
		{"zero price", "us-east-1", "g5.xlarge", 0, t0, "price", "at least"},
		{"price below EC2's precision", "us-east-1", "g5.xlarge", 1e-9, t0, "price", "six decimals"},
		{"NaN price", "us-east-1", "g5.xlarge", math.NaN(), t0, "price", "finite"},
		{"infinite price", "us-east-1", "g5.xlarge", math.Inf(1), t0, "price", "finite"},
		{"negative infinite price", "us-east-1", "g5.xlarge", math.Inf(-1), t0, "price", "finite"},
		{"no time", "us-east-1", "g5.xlarge", 0.42, time.Time{}, "set_at", "required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b spotprices.Book
			err := b.Set(tt.region, tt.typ, tt.price, tt.at)
			var fe *spotprices.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Set(%q, %q, %v) = %v, want a *FieldError", tt.region, tt.typ, tt.price, err)
			}
			if fe.Field != tt.wantField || !strings.Contains(fe.Reason, tt.wantInReason) {
				t.Errorf("Set(%q, %q, %v) = %q, want field %s and a reason with %q",
					tt.region, tt.typ, tt.price, err, tt.wantField, tt.wantInReason)
			}
			if got := b.Prices(); len(got) != 0 {
				t.Errorf("after a rejected Set, Prices() = %v, want none", got)
			}
		})
	}
}

func TestSetReplacesAndOrders(t *testing.T) {
	var b spotprices.Book
	mustSet(t, &b, "us-west-2", "g5.xlarge", 0.55, t0)
	mustSet(t, &b, "us-east-1", "m5.large", 0.031, t0)
	mustSet(t, &b, "us-east-1", "g5.xlarge", 0.42, t0)
	mustSet(t, &b, "us-east-1", "g5.xlarge", 0.40, t0.Add(time.Minute))

	want := []spotprices.Price{
		{Region: "us-east-1", InstanceType: "g5.xlarge", Price: 0.40, SetAt: t0.Add(time.Minute)},
		{Region: "us-east-1", InstanceType: "m5.large", Price: 0.031, SetAt: t0},
		{Region: "us-west-2", InstanceType: "g5.xlarge", Price: 0.55, SetAt: t0},
	}
	if diff := cmp.Diff(want, b.Prices()); diff != "" {
		t.Errorf("Prices() after four Sets (-want +got):\n%s", diff)
	}
}

func TestOpenFileKeepsPricesAcrossRestarts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "spot-prices.json")
	b, err := spotprices.OpenFile(path)
	if err != nil {
		t.Fatalf("OpenFile(%s) of a missing file: %v", path, err)
	}
	if got := b.Prices(); len(got) != 0 {
		t.Fatalf("OpenFile(%s) of a missing file has prices %v, want none", path, got)
	}
	mustSet(t, b, "us-east-1", "g5.xlarge", 0.42, t0)
	mustSet(t, b, "us-west-2", "m5.large", 0.031, t0)

	reopened, err := spotprices.OpenFile(path)
	if err != nil {
		t.Fatalf("OpenFile(%s) again: %v", path, err)
	}
	if diff := cmp.Diff(b.Prices(), reopened.Prices()); diff != "" {
		t.Errorf("OpenFile(%s) after two Sets (-set +reopened):\n%s", path, diff)
	}
}

func TestOpenFileRejects(t *testing.T) {
	tests := []struct {
		name, content, wantInErr string
	}{
		{"not JSON", "prices: []", "invalid character"},
		{"unknown field", `{"prices":[],"zones":[]}`, "unknown field"},
		{"invalid price", `{"prices":[{"region":"us-east-1","instance_type":"g5.xlarge","price":-1,"set_at":"2026-01-01T00:00:00Z"}]}`, "prices[0]: price"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "spot-prices.json")
			if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := spotprices.OpenFile(path)
			if err == nil || !strings.Contains(err.Error(), tt.wantInErr) {
				t.Errorf("OpenFile of %s = %v, want an error with %q", tt.content, err, tt.wantInErr)
			}
		})
	}
}

func TestSetKeepsNothingItCouldNotSave(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	b, err := spotprices.OpenFile(filepath.Join(dir, "spot-prices.json"))
	if err != nil {
		t.Fatal(err)
	}
	// A file where the book's directory should be makes every save fail.
	if err := os.WriteFile(dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := b.Set("us-east-1", "g5.xlarge", 0.42, t0); err == nil {
		t.Fatalf("Set with an unwritable file = nil, want an error")
	}
	if got := b.Prices(); len(got) != 0 {
		t.Errorf("Prices() after a Set that could not save = %v, want none", got)
	}
}

func TestSetConcurrently(t *testing.T) {
	var b spotprices.Book
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				if err := b.Set("us-east-1", "g5.xlarge", 0.1+float64(i*50+j)/1000, t0); err != nil {
					t.Error(err)
				}
				_ = b.Prices()
			}
		})
	}
	wg.Wait()
	if got := len(b.Prices()); got != 1 {
		t.Errorf("after concurrent Sets of one pair, len(Prices()) = %d, want 1", got)
	}
}

func mustSet(t *testing.T, b *spotprices.Book, region, instanceType string, price float64, at time.Time) {
	t.Helper()
	if err := b.Set(region, instanceType, price, at); err != nil {
		t.Fatalf("Set(%s, %s, %v): %v", region, instanceType, price, err)
	}
}
