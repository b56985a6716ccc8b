package tenancy

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPriorityLimit(t *testing.T) {
	sixty := 60
	if got := (Tenant{}).PriorityLimit(); got != TopPriority {
		t.Errorf("PriorityLimit of a record without one = %d, want %d", got, TopPriority)
	}
	if got := (Tenant{MaxPriority: &sixty}).PriorityLimit(); got != 60 {
		t.Errorf("PriorityLimit with max priority 60 = %d", got)
	}
	for _, bad := range []int{-1, 101} {
		tn := Tenant{Name: "a", Org: "o", Namespaces: []string{"ns"}, Role: RoleMember, MaxPriority: &bad}
		if err := tn.Validate(); err == nil || !strings.Contains(err.Error(), "from 0 to 100") {
			t.Errorf("Validate with max priority %d = %v, want it to say from 0 to 100", bad, err)
		}
	}
}

func TestQueuedLimit(t *testing.T) {
	zero, five := 0, 5
	for _, tt := range []struct {
		record *int
		want   int
	}{{nil, 10000}, {&five, 5}, {&zero, 0}} {
		if got := (Tenant{MaxQueued: tt.record}).QueuedLimit(10000); got != tt.want {
			t.Errorf("QueuedLimit(10000) of a record with max queued %v = %d, want %d", tt.record, got, tt.want)
		}
	}
	bad := -1
	tn := Tenant{Name: "a", Org: "o", Namespaces: []string{"ns"}, Role: RoleMember, MaxQueued: &bad}
	if err := tn.Validate(); err == nil || !strings.Contains(err.Error(), "max queued -1") {
		t.Errorf("Validate with max queued -1 = %v, want it to name max queued -1", err)
	}
}

func TestParseRegionQuotas(t *testing.T) {
	got, err := ParseRegionQuotas([]string{"us-east-1=4:8", "us-west-2=2"})
	want := map[string]Quota{"us-east-1": {Jobs: 4, GPUs: 8}, "us-west-2": {Jobs: 2}}
	if err != nil || !cmp.Equal(want, got) {
		t.Errorf("ParseRegionQuotas = %v, %v; want %v", got, err, want)
	}
	for in, say := range map[string]string{
		"us-east-1":      "REGION=JOBS[:GPUS]",
		"=4":             "REGION=JOBS[:GPUS]",
		"us-east-1=x":    "JOBS a whole number",
		"us-east-1=-1":   "JOBS a whole number",
		"us-east-1=4:-2": "GPUS a whole number",
		"us-east-1=4:":   "GPUS a whole number",
	} {
		if _, err := ParseRegionQuotas([]string{in}); err == nil || !strings.Contains(err.Error(), say) {
			t.Errorf("ParseRegionQuotas(%q) = %v, want an error saying %q", in, err, say)
		}
	}
	if _, err := ParseRegionQuotas([]string{"us-east-1=1", "us-east-1=2"}); err == nil || !strings.Contains(err.Error(), "two quotas") {
		t.Errorf("ParseRegionQuotas of one region twice = %v, want an error", err)
	}
	tn := Tenant{Quotas: want}
	if q := tn.QuotaIn("us-west-2", Quota{Jobs: 9}); !cmp.Equal(q, Quota{Jobs: 2}) {
		t.Errorf("QuotaIn(us-west-2) = %v, want the record's 2", q)
	}
	if q := tn.QuotaIn("eu-west-1", Quota{Jobs: 9}); !cmp.Equal(q, Quota{Jobs: 9}) {
		t.Errorf("QuotaIn(eu-west-1) = %v, want the default 9", q)
	}
}
