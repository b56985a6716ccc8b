package jobs

// Kind is what a job's manifests run: to an end (batch) or until cancelled (long-running). A
// long-running job holds no job slot of its region unless the deployment says so
// (TIDEGATE_LONG_RUNNING_HOLDS_SLOT); its GPUs count against the region's budget and its
// tenant's share all the same.
type Kind string

const (
	// KindBatch runs to an end: its pods complete or fail. A record stored before kinds were
	// recorded has none, and is batch.
	KindBatch Kind = "batch"
	// KindLongRunning never succeeds: it is running while its Deployments and StatefulSets are
	// available, and ends only when it is cancelled.
	KindLongRunning Kind = "long_running"
)

// longRunningKinds are the workload kinds that run until deleted and report when they serve.
var longRunningKinds = map[string]bool{"Deployment": true, "StatefulSet": true}

// KindOf is the kind of a job with manifests: long-running when every object that runs pods is a
// Deployment or a StatefulSet (and there is one), batch otherwise. A Deployment beside a batch
// Job, a CronJob or a bare Pod makes a batch job: that one has an end, and holds a slot like any
// other until it comes.
func KindOf(manifests []map[string]any) Kind {
	long := false
	for _, m := range manifests {
		kind, _ := m["kind"].(string)
		switch {
		case longRunningKinds[kind]:
			long = true
		case runsPods(kind):
			return KindBatch
		}
	}
	if long {
		return KindLongRunning
	}
	return KindBatch
}

// LongRunning reports whether j is of KindLongRunning.
func (j Job) LongRunning() bool { return j.Kind == KindLongRunning }

func runsPods(kind string) bool {
	for _, w := range workloadKinds {
		if w.kind == kind {
			return true
		}
	}
	return false
}
