package delivery

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/deliveryplan"
	"github.com/tidegate/tidegate/shared/dynamo"
)

func TestTransactions(t *testing.T) {
	event := func(id string, deliveries, payload int) dynamo.EventDeliveries {
		e := dynamo.EventDeliveries{EventID: id}
		for range deliveries {
			e.Deliveries = append(e.Deliveries, deliveryplan.Delivery{Payload: bytes.Repeat([]byte("x"), payload)})
		}
		return e
	}
	ids := func(runs [][]dynamo.EventDeliveries) [][]string {
		var out [][]string
		for _, run := range runs {
			var r []string
			for _, e := range run {
				r = append(r, e.EventID)
			}
			out = append(out, r)
		}
		return out
	}
	var fiftyOne []dynamo.EventDeliveries
	var first50 []string
	for i := range 51 {
		id := fmt.Sprintf("e%02d", i)
		fiftyOne = append(fiftyOne, event(id, 1, 10))
		if i < 50 {
			first50 = append(first50, id)
		}
	}
	tests := []struct {
		name  string
		batch []dynamo.EventDeliveries
		want  [][]string
	}{
		{"none", nil, nil},
		{"events of one delivery: 50 to a transaction of 100 items", fiftyOne, [][]string{first50, {"e50"}}},
		{"an event of 99 deliveries fills one", []dynamo.EventDeliveries{event("a", 1, 10), event("b", 99, 10), event("c", 0, 0)}, [][]string{{"a"}, {"b"}, {"c"}}},
		{"an event too big is a run of its own", []dynamo.EventDeliveries{event("a", 1, 10), event("b", 150, 10), event("c", 1, 10)}, [][]string{{"a"}, {"b"}, {"c"}}},
		{"payloads bound a run by bytes", []dynamo.EventDeliveries{event("a", 2, 1<<20), event("b", 1, 1<<20), event("c", 1, 10)}, [][]string{{"a"}, {"b", "c"}}},
	}
	for _, tt := range tests {
		got := transactions(tt.batch)
		if diff := cmp.Diff(tt.want, ids(got)); diff != "" {
			t.Errorf("%s: runs (-want +got):\n%s", tt.name, diff)
		}
		for _, run := range got {
			if len(run) > 1 && !fits(run) {
				t.Errorf("%s: run %v does not fit a transaction", tt.name, ids([][]dynamo.EventDeliveries{run}))
			}
		}
	}
}
