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
	DimKind        = "Kind"
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
	// Summed says each value counts events (a request, a dispatch attempt), so what a dashboard
	// shows of it is its Sum over a period, not its latest value.
	Summed bool
	// Rollup also publishes it without dimensions, one series over all their values, for an
	// alarm that must not list them (the regions are a deployment's parameter).
	Rollup bool
}

// The metrics. README's "Metrics" table lists the same, and a test holds the two together.
var (
	QueuedJobs = Metric{Name: "QueuedJobs", Unit: Count, Dimensions: []string{DimRegion},
		About: "jobs waiting in the region's queue, gated ones included (counted whole at most once a minute, less what drains admit between counts)", Source: "dispatch"}
	GatedJobs = Metric{Name: "GatedJobs", Unit: Count, Dimensions: []string{DimRegion},
		About: "waiting jobs held by their spot price cap, among those the drain read", Source: "dispatch"}
	ActiveJobs = Metric{Name: "ActiveJobs", Unit: Count, Dimensions: []string{DimRegion},
		About: "jobs holding the region's room: dispatching, pending or running", Source: "dispatch"}
	OldestQueuedAge = Metric{Name: "OldestQueuedAge", Unit: Seconds, Dimensions: []string{DimRegion},
		About: "age of the region's oldest waiting job (0 with none); also over all regions", Source: "dispatch", Rollup: true}
	SubmitToDispatched = Metric{Name: "SubmitToDispatched", Unit: Milliseconds, Dimensions: []string{DimRegion},
		About: "from a job's submission to its objects applied", Source: "dispatch"}
	SubmitToRunning = Metric{Name: "SubmitToRunning", Unit: Milliseconds, Dimensions: []string{DimRegion},
		About: "from a job's submission to the beat seeing it running", Source: "reconcile"}
	DispatchOutcomes = Metric{Name: "DispatchOutcomes", Unit: Count, Dimensions: []string{DimRegion, DimOutcome},
		About: "dispatch attempts by outcome: dispatched, rejected_by_cluster, dispatch_failed, retried, name_in_use", Source: "dispatch", Summed: true}
	BeatDuration = Metric{Name: "BeatDuration", Unit: Milliseconds,
		About: "one beat's pass, start to end (not the watch after it)", Source: "reconcile"}
	BeatLateness = Metric{Name: "BeatLateness", Unit: Milliseconds,
		About: "how long after its scheduled time a beat started", Source: "reconcile"}
	WebhookAttempts = Metric{Name: "WebhookAttempts", Unit: Count, Dimensions: []string{DimOutcome},
		About: "delivery attempts by outcome: delivered, failed, gave_up", Source: "webhook", Summed: true}
	OldestUndeliveredAge = Metric{Name: "OldestUndeliveredAge", Unit: Seconds,
		About: "age of the oldest event not yet fanned out to its webhooks (0 with none)", Source: "reconcile"}
	HostPlanSteps = Metric{Name: "HostPlanSteps", Unit: Count, Dimensions: []string{DimStep},
		About: "host plan steps carried out, by kind: start, revive, stop, went_live, failed", Source: "reconcile", Summed: true}
	FailedReleases = Metric{Name: "FailedReleases", Unit: Count, Dimensions: []string{DimReason},
		About: "releases that failed, by reason", Source: "reconcile", Summed: true}
	SweptObjects = Metric{Name: "SweptObjects", Unit: Count, Dimensions: []string{DimRegion, DimKind},
		About: "objects the beat's sweep deleted, by region and kind: labelled with the id of a job that ended or has no record, left by an end whose delete failed or by nothing that deletes", Source: "reconcile", Summed: true}
	RegionUnreachable = Metric{Name: "RegionUnreachable", Unit: Seconds, Dimensions: []string{DimRegion},
		About: "how long the beat has failed to reach the region's cluster: since the first failure of the current run, 0 while it reaches it", Source: "reconcile"}
	APIRequests = Metric{Name: "APIRequests", Unit: Count, Dimensions: []string{DimRoute, DimStatusClass},
		About: "API requests by route pattern and status class (2xx, 4xx, 5xx)", Source: "api", Summed: true}
)

// All is every metric, in README's order.
var All = []Metric{
	QueuedJobs, GatedJobs, ActiveJobs, OldestQueuedAge, SubmitToDispatched, SubmitToRunning,
	DispatchOutcomes, BeatDuration, BeatLateness, WebhookAttempts, OldestUndeliveredAge,
	HostPlanSteps, FailedReleases, SweptObjects, RegionUnreachable, APIRequests,
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
