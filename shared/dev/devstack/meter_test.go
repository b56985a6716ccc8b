package devstack

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/dev/awscalls"
)

type sqsFunc func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)

func (f sqsFunc) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	return f(ctx, ev)
}

// TestMeteredHandlersAreInvocations: with a meter, each API request, SQS batch and beat is one
// invocation of its function; without one, the handlers are called as they are.
func TestMeteredHandlersAreInvocations(t *testing.T) {
	c := &awscalls.Counter{}
	called := 0
	api := meteredAPI(c, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called++ }))
	for range 2 {
		api.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/healthz", nil))
	}
	sqs := meteredSQS(c, "dispatch", sqsFunc(func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
		called++
		return events.SQSEventResponse{}, nil
	}))
	if _, err := sqs.HandleSQS(context.Background(), events.SQSEvent{}); err != nil {
		t.Fatal(err)
	}
	beat := meteredBeat(c, func(context.Context, events.EventBridgeEvent) error { called++; return nil })
	if err := beat(context.Background(), events.EventBridgeEvent{}); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for f, inv := range c.Invocations() {
		counts[f] = inv.Count
	}
	if diff := cmp.Diff(map[string]int{"api": 2, "dispatch": 1, "reconcile": 1}, counts); diff != "" || called != 4 {
		t.Errorf("invocations after 2 requests, a batch and a beat (-want +got):\n%s; handlers called %d times, want 4", diff, called)
	}

	plain := &plainHandler{}
	if got := meteredAPI(nil, plain); got != http.Handler(plain) {
		t.Errorf("meteredAPI(nil, h) = %T, want h itself", got)
	}
}

type plainHandler struct{}

func (*plainHandler) ServeHTTP(http.ResponseWriter, *http.Request) {}
