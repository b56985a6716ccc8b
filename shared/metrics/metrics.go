// Package metrics provides the metrics Tidegate publishes, each named once here with its unit and
// dimensions, written as CloudWatch embedded metric format (EMF) lines in a function's own log:
// CloudWatch Logs turns each line into metric data points, with no API call and no agent.
package metrics

// Namespace is the CloudWatch namespace every metric is published in.
const Namespace = "Tidegate"

// Unit is a CloudWatch unit.
type Unit string

// The units Tidegate's metrics use.
const (
	Count        Unit = "Count"
	Milliseconds Unit = "Milliseconds"
	Seconds      Unit = "Seconds"
)

// Dimension names, each a key of the line beside the values.
const (
	DimRegion      = "Region"
	DimOutcome     = "Outcome"
	DimReason      = "Reason"
	DimStep        = "Step"
	DimRoute       = "Route"
	DimStatusClass = "StatusClass"
)

// Metric is one metric: its name, unit, the dimensions it is published under (in order: Put takes
// their values so) and what it measures, for README.
type Metric struct {
	Name       string
	Unit       Unit
	Dimensions []string
	About      string
	// Source is the function that publishes it.
	Source string
}

// The metrics. README's "Metrics" table lists the same, and a test holds the two together.
var (
	QueuedJobs = Metric{"QueuedJobs", Count, []string{DimRegion},
		"jobs waiting in the region's queue, gated ones included", "dispatch"}
	GatedJobs = Metric{"GatedJobs", Count, []string{DimRegion},
		"waiting jobs held by their spot price cap", "dispatch"}
	ActiveJobs = Metric{"ActiveJobs", Count, []string{DimRegion},
		"jobs holding the region's room: dispatching, pending or running", "dispatch"}
	OldestQueuedAge = Metric{"OldestQueuedAge", Seconds, []string{DimRegion},
		"age of the region's oldest waiting job (0 with none)", "dispatch"}
	SubmitToDispatched = Metric{"SubmitToDispatched", Milliseconds, []string{DimRegion},
		"from a job's submission to its objects applied", "dispatch"}
	SubmitToRunning = Metric{"SubmitToRunning", Milliseconds, []string{DimRegion},
		"from a job's submission to the beat seeing it running", "reconcile"}
	DispatchOutcomes = Metric{"DispatchOutcomes", Count, []string{DimRegion, DimOutcome},
		"dispatch attempts by outcome: dispatched, rejected_by_cluster, dispatch_failed, retried, name_in_use", "dispatch"}
	BeatDuration = Metric{"BeatDuration", Milliseconds, nil,
		"one beat, start to end", "reconcile"}
	BeatLateness = Metric{"BeatLateness", Milliseconds, nil,
		"how long after its scheduled time a beat started", "reconcile"}
	WebhookAttempts = Metric{"WebhookAttempts", Count, []string{DimOutcome},
		"delivery attempts by outcome: delivered, failed, gave_up", "webhook"}
	OldestUndeliveredAge = Metric{"OldestUndeliveredAge", Seconds, nil,
		"age of the oldest event not yet fanned out to its webhooks (0 with none)", "reconcile"}
	HostPlanSteps = Metric{"HostPlanSteps", Count, []string{DimStep},
		"host plan steps carried out, by kind: start, revive, stop, went_live, failed", "reconcile"}
	FailedReleases = Metric{"FailedReleases", Count, []string{DimReason},
		"releases that failed, by reason", "reconcile"}
	APIRequests = Metric{"APIRequests", Count, []string{DimRoute, DimStatusClass},
		"API requests by route pattern and status class (2xx, 4xx, 5xx)", "api"}
)

// All is every metric, in README's order.
var All = []Metric{
	QueuedJobs, GatedJobs, ActiveJobs, OldestQueuedAge, SubmitToDispatched, SubmitToRunning,
	DispatchOutcomes, BeatDuration, BeatLateness, WebhookAttempts, OldestUndeliveredAge,
	HostPlanSteps, FailedReleases, APIRequests,
}

// Named answers the metric called name; ok is false for a name Tidegate does not publish.
func Named(name string) (Metric, bool) {
	for _, m := range All {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}
