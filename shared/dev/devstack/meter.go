package devstack

import (
	"context"
	"net/http"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/tidegate/tidegate/shared/dev/awscalls"
)

// Meter watches the functions for a benchmark that counts what they call (awscalls.Counter is
// one): Instrument is given the SDK config every client is made from, and each invocation (an API
// request, an SQS batch, a beat) runs under the context Invoke answers, which it ends with done.
type Meter interface {
	Instrument(cfg *aws.Config)
	Invoke(ctx context.Context, function string) (context.Context, func())
}

var _ Meter = (*awscalls.Counter)(nil)

// meteredAPI is h with each request an invocation of the api function; h itself without a meter.
func meteredAPI(m Meter, h http.Handler) http.Handler {
	if m == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, done := m.Invoke(r.Context(), "api")
		defer done()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// meteredSQS is h with each batch an invocation of function; h itself without a meter.
func meteredSQS(m Meter, function string, h sqsHandler) sqsHandler {
	if m == nil {
		return h
	}
	return sqsInvocations{m: m, function: function, h: h}
}

type sqsInvocations struct {
	m        Meter
	function string
	h        sqsHandler
}

func (s sqsInvocations) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	ctx, done := s.m.Invoke(ctx, s.function)
	defer done()
	return s.h.HandleSQS(ctx, ev)
}

// meteredBeat is h with each beat an invocation of the reconcile function; h itself without a meter.
func meteredBeat(m Meter, h func(context.Context, events.EventBridgeEvent) error) func(context.Context, events.EventBridgeEvent) error {
	if m == nil {
		return h
	}
	return func(ctx context.Context, ev events.EventBridgeEvent) error {
		ctx, done := m.Invoke(ctx, "reconcile")
		defer done()
		return h(ctx, ev)
	}
}
