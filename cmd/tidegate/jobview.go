package main

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tidegate/tidegate/shared/apiclient"
)

// Why a queued job waits, as a person reads it; the keys are the API's pending_reason values.
var pendingWhy = map[string]string{
	"capacity":                        "waiting for room in %s",
	"flavor_full":                     "waiting for room in %s: no flavor it may run on has all it asks free",
	"larger_than_every_flavor":        "waiting in %s for ever: it asks more than any flavor it may run on has in all",
	"no_such_flavor":                  "waiting in %s for ever: its node selector agrees with none of the region's flavors",
	"spot_price_above_cap":            "held in %s: the spot price is above the job's cap",
	"spot_price_unknown":              "held in %s: the spot price is not known yet",
	"queued_behind_higher_priority":   "waiting in %s behind jobs of higher priority",
	"name_in_use_by_finishing_job":    "waiting in %s for an earlier job of the same name to be recorded as ended",
	"tenant_quota_exhausted":          "waiting in %s: your tenant's quota, or what others lend, has no room for it",
	"tenant_long_running_limit":       "waiting in %s: your tenant runs as many long-running jobs as it may",
	"retry_backoff":                   "waiting in %s for the retry's backoff to end",
	"waiting_for_preempted_jobs":      "waiting in %s: running jobs were evicted to make room for it; the next drain starts it",
	"no_allowed_region_open":          "held: the spot price is above the cap in every allowed region%.0s",
	"no_allowed_region_with_room":     "waiting for room in one of the allowed regions%.0s",
	"waiting_for_dependencies":        "blocked until the jobs it depends on end as it asks%.0s",
	"no_allowed_region_admitting":     "waiting: every allowed region is cordoned, draining or out of reach%.0s",
	"region_cordoned":                 "waiting: the operator cordoned %s",
	"region_draining":                 "waiting: the operator is draining %s",
	"region_unreachable":              "waiting for %s: its cluster is out of reach",
	"region_clearing_fenced_attempts": "waiting: %s is back and deletes what fenced attempts left first",
	"tenant_held":                     "waiting in %s: the operator holds your tenant's jobs",
}

// statusText is a job's status with why it waits and where it stands in line.
func statusText(j apiclient.Job) string {
	out := j.Status
	if why, ok := pendingWhy[j.PendingReason]; ok {
		out += ": " + fmt.Sprintf(why, j.Region)
	} else if j.PendingReason != "" {
		out += ": " + j.PendingReason
	}
	if j.PendingResource != "" && j.Status == "queued" {
		out += fmt.Sprintf(" (short of %s)", j.PendingResource)
	}
	if j.QueuePosition > 0 && j.Status == "queued" {
		out += fmt.Sprintf(", %s in line", ordinal(j.QueuePosition))
	}
	if len(j.WaitingOn) > 0 && j.Status == "blocked" {
		out += " (" + strings.Join(j.WaitingOn, ", ") + ")"
	}
	return out
}

// arrayText is an array's shape and its children by status, or a child's place in its array.
func arrayText(j apiclient.Job) string {
	switch {
	case j.Array != nil && j.ArrayStatus != nil:
		a, st := j.Array, j.ArrayStatus
		return fmt.Sprintf("%d children, %d at once: %d blocked, %d active, %d succeeded, %d failed, %d cancelled (tidegate jobs list --parent %s)",
			a.Size, cmp.Or(a.Parallelism, a.Size), st.Blocked, st.Active, st.Succeeded, st.Failed, st.Cancelled, j.ID)
	case j.Array != nil:
		return fmt.Sprintf("%d children, %d at once", j.Array.Size, cmp.Or(j.Array.Parallelism, j.Array.Size))
	case j.Parent != "" && j.ArrayIndex != nil:
		return fmt.Sprintf("child %d of %s", *j.ArrayIndex, j.Parent)
	}
	return ""
}

// dependsText is what a job waits for, each job with the end it waits for.
func dependsText(j apiclient.Job) string {
	parts := make([]string, len(j.DependsOn))
	for i, d := range j.DependsOn {
		parts[i] = d.Job + " " + cmp.Or(d.On, "succeeded")
	}
	return strings.Join(parts, ", ")
}

// describeJob writes one job for a person: what it is, why it waits, where it runs, its history.
func describeJob(p *printer, j apiclient.Job) {
	p.kv(
		[2]string{"ID", j.ID},
		[2]string{"Name", j.Name},
		[2]string{"Status", statusText(j)},
		[2]string{"Namespace", j.Namespace},
		[2]string{"Region", regionText(j)},
		[2]string{"Kind", kindText(j.Kind)},
		[2]string{"Attempt", attemptText(j)},
		[2]string{"Priority", strconv.Itoa(j.Priority)},
		[2]string{"Waits for", dependsText(j)},
		[2]string{"Array", arrayText(j)},
		[2]string{"Demand", labelsText(j.Demand)},
		[2]string{"Flavor", flavorText(j)},
		[2]string{"Labels", labelsText(j.Labels)},
		[2]string{"Template", j.Template},
		[2]string{"Retry of", j.RetryOf},
		[2]string{"Created", fmt.Sprintf("%s (%s ago)", when(j.CreatedAt), p.age(j.CreatedAt))},
		[2]string{"Spot gate", spotText(j)},
		[2]string{"Placement", placementText(j.Placement)},
		[2]string{"Objects", objectsText(j.Manifests)},
		[2]string{"Images", imagesText(j.Workloads)},
	)
	for _, u := range unscheduledText(j.Placement) {
		p.line("  unscheduled %s", u)
	}
	if len(j.Serving) > 0 || j.ServingError != "" {
		p.line("Serving:")
		for _, s := range j.Serving {
			p.line("  %s", servingText(s))
		}
		if j.ServingError != "" {
			p.line("  %s", j.ServingError)
		}
	}
	p.line("History:")
	for _, t := range j.StatusHistory {
		p.line("  %s", transitionText(t))
	}
	if len(j.LogTail) > 0 {
		p.line("Log tail:")
		for _, l := range j.LogTail {
			p.line("  %s", l)
		}
	}
}

// regionText is the job's region, and the regions it may run in when it names several.
func regionText(j apiclient.Job) string {
	if len(j.Regions) < 2 {
		return j.Region
	}
	allowed := "one of " + strings.Join(j.Regions, ", ")
	if j.Region == "" {
		return allowed
	}
	return j.Region + " (" + allowed + ")"
}

// kindText says what a long-running job is; a batch job needs no word.
func kindText(kind string) string {
	if kind == "long_running" {
		return "long-running: runs until cancelled"
	}
	return ""
}

// attemptText is which attempt runs and how the earlier ones ended; nothing for a first attempt.
func attemptText(j apiclient.Job) string {
	if j.Attempt < 2 && len(j.Attempts) == 0 {
		return ""
	}
	s := strconv.Itoa(j.Attempt)
	var ends []string
	for _, a := range j.Attempts {
		ends = append(ends, fmt.Sprintf("#%d %s at %s", a.Attempt, a.Reason, when(a.EndedAt)))
	}
	if len(ends) > 0 {
		s += "; earlier: " + strings.Join(ends, ", ")
	}
	if j.NotBefore != nil && j.Status == "queued" {
		s += "; starts after " + when(*j.NotBefore)
	}
	return s
}

// servingText is one Deployment or StatefulSet of a long-running job and its replicas.
func servingText(s apiclient.Serving) string {
	up := "not available"
	if s.Available {
		up = "available"
	}
	return fmt.Sprintf("%s/%s  %d/%d ready, %s", s.Kind, s.Name, s.Ready, s.Replicas, up)
}

func transitionText(t apiclient.Transition) string {
	s := fmt.Sprintf("%s  %-11s", t.At.Local().Format("15:04:05"), t.Status)
	if t.Reason != "" {
		s += "  " + t.Reason
	}
	return strings.TrimRight(s, " ")
}

func labelsText(labels map[string]string) string {
	kvs := make([]string, 0, len(labels))
	for k, v := range labels {
		kvs = append(kvs, k+"="+v)
	}
	sort.Strings(kvs)
	return strings.Join(kvs, ",")
}

// spotText is the cap and the price last seen for it.
func spotText(j apiclient.Job) string {
	g := j.SpotGate
	if g == nil {
		if j.Spot != nil {
			return fmt.Sprintf("%s at most $%s/h; no price seen yet", j.Spot.InstanceType, money(j.Spot.MaxPrice))
		}
		return ""
	}
	s := fmt.Sprintf("%s at most $%s/h", g.InstanceType, money(g.MaxPrice))
	if g.ObservedPrice != nil {
		s += fmt.Sprintf("; $%s/h seen at %s", money(*g.ObservedPrice), when(g.CheckedAt))
	} else {
		s += fmt.Sprintf("; no price at %s", when(g.CheckedAt))
	}
	return s
}

func money(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// placementText is where the job's pods run: the node, its type, capacity and zone, and the pods'
// phases.
func placementText(pl map[string]any) string {
	if len(pl) == 0 {
		return ""
	}
	var parts []string
	if n, _ := pl["node_name"].(string); n != "" {
		var about []string
		for _, k := range []string{"node_instance_type", "node_capacity_type"} {
			if v, _ := pl[k].(string); v != "" {
				about = append(about, v)
			}
		}
		if labels, ok := pl["node_labels"].(map[string]any); ok {
			if z, _ := labels["zone"].(string); z != "" {
				about = append(about, z)
			}
		}
		node := "node " + n
		if len(about) > 0 {
			node += " (" + strings.Join(about, ", ") + ")"
		}
		parts = append(parts, node)
	}
	if phases, ok := pl["pod_phases"].(map[string]any); ok && len(phases) > 0 {
		count := map[string]int{}
		for _, ph := range phases {
			s, _ := ph.(string)
			count[s]++
		}
		var cs []string
		for ph, n := range count {
			cs = append(cs, fmt.Sprintf("%s %d", ph, n))
		}
		sort.Strings(cs)
		parts = append(parts, "pods: "+strings.Join(cs, ", "))
	}
	if e, _ := pl["node_lookup_error"].(string); e != "" {
		parts = append(parts, "node lookup failed: "+e)
	}
	return strings.Join(parts, "; ")
}

// unscheduledText lists pods the scheduler could not place, with its reason.
func unscheduledText(pl map[string]any) []string {
	list, _ := pl["unscheduled"].([]any)
	var out []string
	for _, u := range list {
		m, _ := u.(map[string]any)
		out = append(out, fmt.Sprintf("%v: %v %v", m["pod"], m["reason"], m["message"]))
	}
	return out
}

// imagesText lists each workload's images, init containers' first, each once.
func imagesText(ws []apiclient.Workload) string {
	var out []string
	for _, w := range ws {
		for _, c := range append(slices.Clone(w.InitContainers), w.Containers...) {
			if c.Image != "" && !slices.Contains(out, c.Image) {
				out = append(out, c.Image)
			}
		}
	}
	return strings.Join(out, ", ")
}

// objectsText names the job's manifests as Kind/name.
func objectsText(ms []map[string]any) string {
	var out []string
	for _, m := range ms {
		kind, _ := m["kind"].(string)
		meta, _ := m["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		out = append(out, kind+"/"+name)
	}
	return strings.Join(out, ", ")
}

// outcome turns a finished job into the command's result: nil when it succeeded, else an error
// saying how it ended, after its last log lines.
func outcome(p *printer, j apiclient.Job) error {
	if j.Status == "succeeded" {
		return nil
	}
	reason := ""
	if n := len(j.StatusHistory); n > 0 && j.StatusHistory[n-1].Reason != "" {
		reason = ": " + j.StatusHistory[n-1].Reason
	}
	if len(j.LogTail) > 0 && !p.scripted() {
		p.line("last log lines:")
		for _, l := range j.LogTail {
			p.line("  %s", l)
		}
	}
	return fmt.Errorf("job %s %s%s", j.ID, j.Status, reason)
}

// flavorText is the flavor a job was admitted on, or the node labels that say which it may run on.
func flavorText(j apiclient.Job) string {
	switch {
	case j.Flavor != "":
		return j.Flavor
	case len(j.NodeSelector) > 0:
		return "one whose node labels agree with " + labelsText(j.NodeSelector)
	}
	return ""
}
