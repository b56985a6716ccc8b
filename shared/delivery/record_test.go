package delivery

import (
	"bytes"
	"slices"
	"testing"

	"github.com/tidegate/tidegate/shared/deliveryplan"
	"github.com/tidegate/tidegate/shared/dynamo"
)

// TestOneTransaction: a recorder's transaction takes items in order up to a hundred or the byte
// bound, and always at least one.
func TestOneTransaction(t *testing.T) {
	delivery := func(payload int) entry {
		return entry{d: deliveryplan.Delivery{Payload: bytes.Repeat([]byte("x"), payload)}}
	}
	mark := entry{event: "evt_1"}
	repeat := func(e entry, n int) []entry {
		out := make([]entry, n)
		for i := range out {
			out[i] = e
		}
		return out
	}
	tests := []struct {
		name string
		es   []entry
		want int
	}{
		{"none", nil, 0},
		{"a hundred items of 150", repeat(delivery(10), 150), dynamo.MaxTransactItems},
		{"deliveries and marks alike", append(repeat(delivery(10), 60), repeat(mark, 60)...), dynamo.MaxTransactItems},
		{"fewer than a hundred: all", append(repeat(delivery(10), 3), mark), 4},
		{"payloads bound it by bytes", []entry{delivery(1 << 20), delivery(1 << 20), delivery(1 << 20), delivery(10)}, 2},
		{"one too big for the bound is taken alone", []entry{delivery(4 << 20), delivery(10)}, 1},
	}
	for _, tt := range tests {
		if got := oneTransaction(tt.es); got != tt.want {
			t.Errorf("%s: oneTransaction = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestCompletes: an event's mark joins a transaction only when that transaction holds every one
// of its deliveries not yet stored, none of its deliveries failed, and there is room.
func TestCompletes(t *testing.T) {
	d := func(event string) deliveryplan.Delivery { return deliveryplan.Delivery{EventID: event} }
	r := &recorder{
		left:   map[string]int{"one": 1, "two": 2, "split": 2, "broken": 1, "late": 1},
		broken: map[string]bool{"broken": true},
	}
	ds := []deliveryplan.Delivery{d("one"), d("two"), d("two"), d("split"), d("broken"), d("late")}
	if got, want := r.completes(ds, 10), []string{"one", "two", "late"}; !slices.Equal(got, want) {
		t.Errorf("completes = %v, want %v (split has a delivery elsewhere, broken failed one)", got, want)
	}
	if got, want := r.completes(ds, 2), []string{"one", "two"}; !slices.Equal(got, want) {
		t.Errorf("completes with room for 2 = %v, want %v", got, want)
	}
}
