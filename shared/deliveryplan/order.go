package deliveryplan

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/tidegate/tidegate/shared/outbox"
)

// Order sorts events into the order they happened: by time, then by id, whose leading
// milliseconds are the same time. The outbox's index is close to this order already; sorting
// again settles events of one instant and any index key that sorts a moment out of place.
func Order(evs []outbox.Event) {
	slices.SortStableFunc(evs, func(a, b outbox.Event) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}

// Lines splits deliveries, made in the order of their events, into one line per webhook, each in
// that order; lines come in the order of their first delivery. A line is sent one attempt at a
// time, so its endpoint receives events in the order they happened.
func Lines(ds []Delivery) [][]Delivery {
	at := map[string]int{}
	var lines [][]Delivery
	for _, d := range ds {
		i, ok := at[d.WebhookID]
		if !ok {
			i = len(lines)
			at[d.WebhookID] = i
			lines = append(lines, nil)
		}
		lines[i] = append(lines[i], d)
	}
	return lines
}

// Behind says what becomes of d, a delivery not yet tried that waits in the same line behind the
// attempt v judged at `at`. It answers d and true when d may be sent now. Otherwise it answers d
// as it is to be kept: ended if v disabled the webhook; else, when the endpoint failed, due with
// v's retry, so an endpoint that is down is not sent the rest of the line meanwhile (from then on
// the retries, and the events behind them, are sent as they come due, not in line).
func (v Verdict) Behind(d Delivery, at time.Time) (Delivery, bool) {
	switch {
	case v.Disable != "":
		return d.Abandon(fmt.Sprintf(reasonDisabled, v.Disable), at), false
	case v.Failing:
		next := at.Add(Delay(1, 0.5)).UTC()
		if v.Delivery.NextAttemptAt != nil {
			next = *v.Delivery.NextAttemptAt
		}
		d.NextAttemptAt, d.UpdatedAt = &next, at.UTC()
		return d, false
	}
	return d, true
}
