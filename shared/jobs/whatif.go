package jobs

// WhatIf is what a region's drain would decide now for a job not stored: admitted, on which
// flavor, or why it would wait and where it would stand among the jobs the drain judged; its
// tenant's standing on each flavor of the region per resource; the spot price the drains last
// observed against its cap; and, for a job of several regions, the region choice this region's
// drain would make. Nothing of another tenant is named.
// WhatIfElsewhere is a what-if's reason in a region whose drain would send the job, one of several
// regions, to another (its region_choice names it).
const WhatIfElsewhere = "another_region_chosen"

type WhatIf struct {
	Region   string `json:"region"`
	Admitted bool   `json:"admitted"`
	Flavor   string `json:"flavor,omitempty"`
	// Reason is why it would wait: a pending reason (flavor_full, tenant_quota_exhausted,
	// region_cordoned, …), or for a job of several regions sent elsewhere, the choice's reason.
	Reason   string `json:"reason,omitempty"`
	Resource string `json:"resource,omitempty"`
	// Position is its place, from 1, among the waiting jobs this drain judged (those ahead of it
	// in dispatch order, and the ones judged with it).
	Position int                                 `json:"position,omitempty"`
	Quota    map[string]map[string]QuotaStanding `json:"quota,omitempty"`
	Spot     *SpotGate                           `json:"spot,omitempty"`
	Choice   *RegionChoice                       `json:"region_choice,omitempty"`
}
