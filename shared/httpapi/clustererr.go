package httpapi

import (
	"context"
	"errors"
)

// detailCluster is all a client learns when a cluster read or write fails: the cluster's own text
// names the functions' IAM roles, the API server's host and the cluster's ARN, none of which is a
// tenant's to see. The log keeps the cause under the request id.
const detailCluster = "the cluster did not answer (%s); retry, and quote request id %s if it persists"

// clusterError logs a failed cluster call's cause with the request id and returns the fixed 503
// a client sees instead. An *Error (already meant for the client) passes through unchanged.
func (a *api) clusterError(ctx context.Context, what string, err error) error {
	if apiErr := (*Error)(nil); errors.As(err, &apiErr) {
		return err
	}
	id := requestID(ctx)
	a.log.WarnContext(ctx, "cluster call failed", "request_id", id, "what", what, "err", err)
	return Errorf(CodeUnavailable, detailCluster, what, id)
}

// clusterProblem is clusterError's text, for answers that carry a failure beside what they could
// read (a placement's node_lookup_error, a bulk cancel's failed list).
func (a *api) clusterProblem(ctx context.Context, what string, err error) string {
	var apiErr *Error
	if errors.As(a.clusterError(ctx, what, err), &apiErr) {
		return apiErr.Detail
	}
	return err.Error()
}
