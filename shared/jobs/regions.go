package jobs

import "time"

// RegionChoice is API.md's region_choice: for a job submitted with regions, the region a drain
// chose for it and why, or, while it waits, why no region took it; with what each allowed region
// looked like to that drain.
type RegionChoice struct {
	// Region is the region chosen; "" while the job waits.
	Region string `json:"region,omitempty" dynamodbav:"region,omitempty"`
	// Reason says why: one of the RegionReason values.
	Reason string         `json:"reason" dynamodbav:"reason"`
	Views  []RegionOption `json:"regions" dynamodbav:"regions"`
	At     time.Time      `json:"at" dynamodbav:"at"`
}

// RegionOption is one allowed region as a drain saw it when choosing: its spot price for the
// job's instance type (nil for a job without a cap, or no price known), whether the gate is open,
// whether it has room for another job, its queue's length, and why it was not chosen ("" for the
// chosen one).
type RegionOption struct {
	Region string   `json:"region" dynamodbav:"region"`
	Price  *float64 `json:"price" dynamodbav:"price"`
	Open   bool     `json:"open" dynamodbav:"open"`
	Room   bool     `json:"room" dynamodbav:"room"`
	Queue  int      `json:"queue" dynamodbav:"queue"`
	Wait   string   `json:"wait,omitempty" dynamodbav:"wait,omitempty"`
	// Unseen: the region's room and queue were not known (its drain had said nothing lately), and
	// it was taken to have room.
	Unseen bool `json:"unseen,omitempty" dynamodbav:"unseen,omitempty"`
}

// Roaming reports whether j is a queued job that waits for a region to be chosen among its
// Regions: it has none of its own yet.
func (j Job) Roaming() bool { return j.Region == "" && len(j.Regions) > 0 }

// RegionSummary is what a region's last drain saw of it, for the drains of other regions to
// choose among a roaming job's regions: whether it had room for another job after its own
// admissions, how many jobs its own queue held, and which tenants had none there though others
// might. It holds no job; it is never shown to a tenant.
type RegionSummary struct {
	Region string    `json:"region" dynamodbav:"region"`
	Room   bool      `json:"room" dynamodbav:"room"`
	Queue  int       `json:"queue" dynamodbav:"queue"`
	At     time.Time `json:"at" dynamodbav:"at"`
	// TenantsFull are the tenants whose roaming jobs the drain held in the region for their
	// share or their long-running limit there (admission.TenantReason).
	TenantsFull []string `json:"tenants_full,omitempty" dynamodbav:"tenants_full,omitempty"`
}
