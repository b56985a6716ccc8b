// Package flavors reads each region's capacity as the operator writes it: a list of flavors
// (spot or on-demand, an instance family, a GPU model), each the node labels that select its nodes
// and a quantity of each resource; and turns it, with a job's demand and node selector, into the
// numbers admission.DecideFlavors takes.
//
// The setting (config.EnvFlavors, a template parameter) is JSON, by region, "*" for every region
// not named:
//
//	{"us-east-1": [
//	   {"name": "spot", "node_labels": {"karpenter.sh/capacity-type": "spot"},
//	    "resources": {"cpu": "64", "memory": "256Gi", "pods": "110"}},
//	   {"name": "on-demand", "node_labels": {"karpenter.sh/capacity-type": "on-demand"},
//	    "resources": {"cpu": "32", "memory": "128Gi", "pods": "110", "nvidia.com/gpu": "4"}}]}
//
// A region the setting does not give flavors has one, "default", of the older settings' room:
// TIDEGATE_REGION_CAPACITY's jobs read as that many pods, and TIDEGATE_REGION_GPUS' GPUs.
package flavors

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/tidegate/tidegate/shared/admission"
	"github.com/tidegate/tidegate/shared/demand"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/manifest"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// Flavor is one kind of node of a region, as the operator writes it.
type Flavor struct {
	Name string `json:"name"`
	// NodeLabels select its nodes; Tidegate sets them as the node selector of the pods of a job
	// it admits there, and a job whose own node selector disagrees with one may not run there.
	NodeLabels map[string]string `json:"node_labels,omitempty"`
	// Resources are its quantities, by resource name, in Kubernetes' notation ("64", "256Gi").
	Resources map[string]string `json:"resources"`
}

// Fallback is the name of the one flavor of a region the setting gives none.
const Fallback = "default"

// Every is the key of the flavors of every region the setting does not name.
const Every = "*"

// Set is the flavors of each region, as the setting gives them.
type Set map[string][]Flavor

// Parse reads the setting; "" is no flavors anywhere (every region has the fallback). Each error
// names the region and flavor, and says what to write.
func Parse(s string) (Set, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var set Set
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&set); err != nil {
		return nil, fmt.Errorf(`flavors are JSON by region, e.g. {"us-east-1": [{"name": "spot", "node_labels": {"karpenter.sh/capacity-type": "spot"}, "resources": {"cpu": "64", "memory": "256Gi"}}]}: %w`, err)
	}
	for _, region := range slices.Sorted(maps.Keys(set)) {
		if _, err := Compile(set[region], false); err != nil {
			return nil, fmt.Errorf("region %s: %w", region, err)
		}
	}
	return set, nil
}

// In is region's flavors: the setting's for it (or for Every), else the fallback of pods jobs'
// worth and, when gpus > 0, that many GPUs.
func (s Set) In(region string, pods int, gpus int64) []Flavor {
	if fs, ok := s[region]; ok {
		return fs
	}
	if fs, ok := s[Every]; ok {
		return fs
	}
	f := Flavor{Name: Fallback, Resources: map[string]string{string(corev1.ResourcePods): strconv.Itoa(max(pods, 0))}}
	if gpus > 0 {
		f.Resources[GPU] = strconv.FormatInt(gpus, 10)
	}
	return []Flavor{f}
}

// Configured says whether region has flavors of the setting's, rather than the fallback.
func (s Set) Configured(region string) bool {
	_, named := s[region]
	_, every := s[Every]
	return named || every
}

// Labels are every node label key the set's flavors select by: what a pod may select nodes by
// besides the operator's allow-list.
func (s Set) Labels() []string {
	var out []string
	for _, fs := range s {
		for _, f := range fs {
			for k := range f.NodeLabels {
				if !slices.Contains(out, k) {
					out = append(out, k)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// GPU is the resource the older settings' GPUs count, and a job's jobs.Job.GPUs.
const GPU = "nvidia.com/gpu"

// Region is one region's flavors as admission counts them.
type Region struct {
	// Resources are what admission counts, in its Vecs' order: every resource a flavor lists.
	Resources []string
	Flavors   []admission.Flavor
	// Labels are each flavor's node labels, in Flavors' order.
	Labels []map[string]string
	// strict: the operator listed these flavors, so an extended resource none of them lists has
	// none (a GPU job does not run where no flavor has GPUs). The fallback counts only pods and
	// GPUs, and leaves every other resource uncounted, as the older settings did.
	strict bool
	index  map[string]int // resource name → place in Resources
}

// Compile checks fs and turns them into a Region; strict as Region says (true for flavors the
// operator listed).
func Compile(fs []Flavor, fallback bool) (Region, error) {
	r := Region{strict: !fallback, index: map[string]int{}}
	switch {
	case len(fs) == 0:
		return r, fmt.Errorf("no flavors: list at least one, or leave the region out for the default of TIDEGATE_REGION_CAPACITY pods")
	case len(fs) > admission.MaxFlavors:
		return r, fmt.Errorf("%d flavors: at most %d a region", len(fs), admission.MaxFlavors)
	}
	seen := map[string]bool{}
	for _, f := range fs {
		if errs := validation.IsDNS1123Label(f.Name); len(errs) > 0 {
			return r, fmt.Errorf("flavor name %q: %s", f.Name, strings.Join(errs, "; "))
		}
		if seen[f.Name] {
			return r, fmt.Errorf("flavor %s is listed twice", f.Name)
		}
		seen[f.Name] = true
		for k, v := range f.NodeLabels {
			if errs := validation.IsQualifiedName(k); len(errs) > 0 {
				return r, fmt.Errorf("flavor %s: node label key %q: %s", f.Name, k, strings.Join(errs, "; "))
			}
			if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
				return r, fmt.Errorf("flavor %s: node label %s=%q: %s", f.Name, k, v, strings.Join(errs, "; "))
			}
		}
		if len(f.Resources) == 0 {
			return r, fmt.Errorf(`flavor %s lists no resources: give it quantities, e.g. "resources": {"cpu": "64", "memory": "256Gi", "pods": "110"}`, f.Name)
		}
		for _, name := range slices.Sorted(maps.Keys(f.Resources)) {
			if _, ok := r.index[name]; !ok {
				r.index[name] = len(r.Resources)
				r.Resources = append(r.Resources, name)
			}
		}
	}
	for _, f := range fs {
		if len(fs) > 1 && len(f.NodeLabels) == 0 {
			return r, fmt.Errorf("flavor %s has no node labels: a flavor without them takes any node, so it can only be a region's one flavor", f.Name)
		}
		capacity := make(admission.Vec, len(r.Resources))
		for name, v := range f.Resources {
			n, err := Units(name, v)
			if err != nil {
				return r, fmt.Errorf("flavor %s: %w", f.Name, err)
			}
			capacity[r.index[name]] = n
		}
		r.Flavors = append(r.Flavors, admission.Flavor{Name: f.Name, Capacity: capacity})
		r.Labels = append(r.Labels, f.NodeLabels)
	}
	return r, nil
}

// Units reads quantity v of resource name in the units admission counts it in (thousandths of a
// CPU, whole units of everything else), refusing a negative or unreadable one.
func Units(name, v string) (int64, error) {
	q, err := resource.ParseQuantity(strings.TrimSpace(v))
	if err != nil {
		return 0, fmt.Errorf("%s %q is not a quantity like 64, 500m or 256Gi", name, v)
	}
	if q.Sign() < 0 {
		return 0, fmt.Errorf("%s %q is negative", name, v)
	}
	n, ok := demand.Units(corev1.ResourceName(name), q)
	if !ok {
		return 0, fmt.Errorf("%s %q is too large to count", name, v)
	}
	return n, nil
}

// Need is what job j asks of r: its demand as a Vec, and the flavors its node selector agrees
// with. A job without a recorded demand (one submitted before demand was kept) asks one pod and
// its GPUs; a podless one nothing. Its memory counts raised by its MemoryFactor. A resource the job asks that no flavor lists is counted
// where the flavors are strict (none has it, so the job is larger than every flavor) and left
// out where they are not.
func (r Region) Need(j jobs.Job) admission.Need {
	d := j.Demand
	if len(d) == 0 && !j.Podless {
		d = map[string]string{string(corev1.ResourcePods): "1"}
		if j.GPUs > 0 {
			d[GPU] = strconv.FormatInt(j.GPUs, 10)
		}
	}
	n := admission.Need{Demand: make(admission.Vec, len(r.Resources))}
	for name, v := range d {
		u, err := Units(name, v)
		if err != nil {
			u = 0 // the policy counted it at submission; a record is not refused here
		}
		if name == string(corev1.ResourceMemory) && j.MemoryFactor > 1 {
			u = int64(float64(u) * j.MemoryFactor) // its retry rules raised it (jobs.RetryRule)
		}
		i, ok := r.index[name]
		switch {
		case ok:
			n.Demand[i] = u
		case r.strict && u > 0 && strings.Contains(name, "/"):
			n.Demand = append(n.Demand, u) // past every flavor's capacity: none has it
		}
	}
	n.Within = r.Within(j.NodeSelector)
	return n
}

// Within is the flavors a node selector agrees with, as admission.Need.Within says: those whose
// node labels have each key of it that some flavor selects by, with its value (as a node of the
// flavor would be labelled). Zero (any) when it names none of the flavors' keys.
func (r Region) Within(selector map[string]string) uint64 {
	var within uint64
	restricts := false
	for k := range selector {
		restricts = restricts || r.keyed(k)
	}
	if !restricts {
		return 0
	}
	for f, labels := range r.Labels {
		agrees := true
		for k, v := range selector {
			if have, ok := labels[k]; ok && have != v || !ok && r.keyed(k) {
				agrees = false
			}
		}
		if agrees {
			within |= 1 << f
		}
	}
	return within | admission.Restricted
}

// keyed says whether some flavor of r selects its nodes by label key k.
func (r Region) keyed(k string) bool {
	return slices.ContainsFunc(r.Labels, func(l map[string]string) bool { _, ok := l[k]; return ok })
}

// Use adds job j's demand to use, on the flavor it was admitted on (its record's Flavor); a job
// admitted before flavors were kept counts on the first flavor its node selector agrees with.
// use is by flavor, in r.Flavors' order.
func (r Region) Use(use []admission.Vec, j jobs.Job) []admission.Vec {
	if len(use) < len(r.Flavors) {
		use = append(use, make([]admission.Vec, len(r.Flavors)-len(use))...)
	}
	f := r.FlavorOf(j)
	need := r.Need(j)
	if use[f] == nil {
		use[f] = make(admission.Vec, len(r.Resources))
	}
	for i := range r.Resources {
		use[f][i] += need.Demand[i]
	}
	return use
}

// FlavorOf is the place in r.Flavors of the flavor active job j runs on.
func (r Region) FlavorOf(j jobs.Job) int {
	for f, fl := range r.Flavors {
		if fl.Name == j.Flavor {
			return f
		}
	}
	allowed := admission.Need{Within: r.Within(j.NodeSelector)}
	for f := range r.Flavors {
		if allowed.May(f) {
			return f
		}
	}
	return 0
}

// Index is the place of flavor name in r.Flavors, or -1.
func (r Region) Index(name string) int {
	return slices.IndexFunc(r.Flavors, func(f admission.Flavor) bool { return f.Name == name })
}

// Quantity is v units of resource i of r, as Kubernetes writes it.
func (r Region) Quantity(i int, v int64) string {
	if r.Resources[i] == string(corev1.ResourceCPU) {
		return resource.NewMilliQuantity(v, resource.DecimalSI).String()
	}
	if r.Resources[i] == string(corev1.ResourceMemory) || r.Resources[i] == string(corev1.ResourceEphemeralStorage) {
		return resource.NewQuantity(v, resource.BinarySI).String()
	}
	return strconv.FormatInt(v, 10)
}

// Quota is tenant quota q of r as admission counts it, per flavor in r.Flavors' order. The
// older form (q.Flavors unset) is q.Jobs pods and q.GPUs GPUs nominal on every flavor; a zero
// quota of that form is none at all (nil). A resource or flavor the quota leaves out has no
// nominal share, no borrowing limit and lends all; a quantity that cannot be read counts as none
// (the admin command refuses one).
func (r Region) Quota(q tenancy.Quota) admission.Quota {
	if q.Flavors == nil && q.Jobs == 0 && q.GPUs == 0 {
		return nil
	}
	out := make(admission.Quota, len(r.Flavors))
	for f, fl := range r.Flavors {
		fq := admission.FlavorQuota{
			Nominal: make(admission.Vec, len(r.Resources)), BorrowingLimit: r.filled(math.MaxInt64),
			LendingLimit: r.filled(math.MaxInt64),
		}
		if q.Flavors == nil {
			r.set(fq.Nominal, string(corev1.ResourcePods), int64(q.Jobs))
			r.set(fq.Nominal, GPU, q.GPUs)
			out[f] = fq
			continue
		}
		given := q.Flavors[fl.Name]
		r.read(fq.Nominal, given.Nominal)
		r.read(fq.BorrowingLimit, given.BorrowingLimit)
		r.read(fq.LendingLimit, given.LendingLimit)
		out[f] = fq
	}
	return out
}

// filled is a Vec of r's resources, each v.
func (r Region) filled(v int64) admission.Vec {
	out := make(admission.Vec, len(r.Resources))
	for i := range out {
		out[i] = v
	}
	return out
}

// set sets resource name of v to n, where r counts it.
func (r Region) set(v admission.Vec, name string, n int64) {
	if i, ok := r.index[name]; ok {
		v[i] = n
	}
}

// read sets v's resources from quantities by name.
func (r Region) read(v admission.Vec, quantities map[string]string) {
	for name, s := range quantities {
		if n, err := Units(name, s); err == nil {
			r.set(v, name, n)
		}
	}
}

// Select is a copy of manifests whose pods select labels (a flavor's node labels) in their
// node selectors, besides what they select already. The manifests given are not changed.
func Select(manifests []map[string]any, labels map[string]string) []map[string]any {
	if len(labels) == 0 {
		return manifests
	}
	out := make([]map[string]any, len(manifests))
	for i, m := range manifests {
		out[i] = manifest.Copy(m).(map[string]any)
		for _, spec := range manifest.PodSpecs(out[i]) {
			sel, _ := spec["nodeSelector"].(map[string]any)
			if sel == nil {
				sel = map[string]any{}
				spec["nodeSelector"] = sel
			}
			for k, v := range labels {
				sel[k] = v
			}
		}
	}
	return out
}

// Free is each flavor's room, in r.Flavors' order, less what active jobs hold of it.
func (r Region) Free(active []jobs.Job) []admission.Vec {
	var use []admission.Vec
	for _, j := range active {
		use = r.Use(use, j)
	}
	out := make([]admission.Vec, len(r.Flavors))
	for f, fl := range r.Flavors {
		out[f] = slices.Clone(fl.Capacity)
		for i := range out[f] {
			if f < len(use) && use[f] != nil {
				out[f][i] -= use[f][i]
			}
		}
	}
	return out
}

// Fits says whether need fits the room free leaves on a flavor it may run on.
func (r Region) Fits(free []admission.Vec, need admission.Need) bool {
	for f := range r.Flavors {
		if !need.May(f) {
			continue
		}
		fits := true
		for i, d := range need.Demand {
			fits = fits && i < len(free[f]) && d <= free[f][i]
		}
		if fits {
			return true
		}
	}
	return false
}

// Pods is how many pods need asks, or 1 where r counts no pods: what a drain's room is counted in.
func (r Region) Pods(need admission.Need) int {
	if i, ok := r.index[string(corev1.ResourcePods)]; ok && i < len(need.Demand) {
		return int(need.Demand[i])
	}
	return 1
}

// Room is how many more pods free has room for in all, or, where r counts no pods, how many
// jobs of one pod per resource unit are likely: perFlavor for each flavor with some of every
// resource left.
func (r Region) Room(free []admission.Vec, perFlavor int) int {
	n := 0
	i, counted := r.index[string(corev1.ResourcePods)]
	for _, v := range free {
		switch {
		case counted:
			n += int(max(v[i], 0))
		case !slices.ContainsFunc(v, func(x int64) bool { return x <= 0 }):
			n += perFlavor
		}
	}
	return n
}

// Of is region's flavors compiled: the set's, else the fallback of pods and gpus (see In). The
// set is Parse's, whose every region compiles, and a fallback always does; Of panics otherwise.
func (s Set) Of(region string, pods int, gpus int64) Region {
	r, err := Compile(s.In(region, pods, gpus), !s.Configured(region))
	if err != nil {
		panic(fmt.Sprintf("flavors: region %s: %v", region, err))
	}
	return r
}

// Impossible says why need can never run in r, however much room frees: nil when some flavor it
// may run on has, in all, each resource it asks. The error names the region's flavors and what
// the job asks, and says what to change.
func (r Region) Impossible(region string, need admission.Need) error {
	if len(r.Flavors) == 0 {
		return fmt.Errorf("region %s has no flavors", region)
	}
	whole := make([]admission.Vec, len(r.Flavors))
	for f, fl := range r.Flavors {
		whole[f] = fl.Capacity
	}
	if r.Fits(whole, need) {
		return nil
	}
	var names []string
	for f, fl := range r.Flavors {
		if need.May(f) {
			names = append(names, fl.Name)
		}
	}
	if len(names) == 0 {
		var all []string
		for f, fl := range r.Flavors {
			all = append(all, fmt.Sprintf("%s (%s)", fl.Name, labelList(r.Labels[f])))
		}
		return fmt.Errorf("its pods' node selector agrees with none of region %s's flavors, %s: select one of their labels, or none", region, strings.Join(all, ", "))
	}
	// The first resource it asks more of than the largest flavor it may run on has.
	for i, name := range r.Resources {
		want := int64(0)
		if i < len(need.Demand) {
			want = need.Demand[i]
		}
		most := int64(0)
		for f, fl := range r.Flavors {
			if need.May(f) {
				most = max(most, fl.Capacity[i])
			}
		}
		if want > most {
			return fmt.Errorf("its pods that run at once ask for %s %s, more than any flavor of region %s it may run on has (%s, at most %s): lower their requests or how many run at once",
				name, r.Quantity(i, want), region, strings.Join(names, ", "), r.Quantity(i, most))
		}
	}
	return fmt.Errorf("its pods ask for a resource no flavor of region %s it may run on (%s) has", region, strings.Join(names, ", "))
}

func labelList(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}
