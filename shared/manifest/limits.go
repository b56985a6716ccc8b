// Package manifest decodes Kubernetes manifests from JSON or YAML, strictly and within bounds.
//
// Both decoders return the same shapes encoding/json with UseNumber would: map[string]any,
// []any, string, bool, nil and json.Number, the number's literal kept so that re-encoding
// gives the same digits and a template substitution keeps a number a number. Nothing here
// reads a file, opens a connection or knows about HTTP: bytes in, documents or an *Error out.
package manifest

// Limits bounds what one decode may cost. A zero field takes its DefaultLimits value, so a
// caller may tighten one bound without restating the others.
type Limits struct {
	// MaxBytes is the most input accepted, checked before any parsing.
	MaxBytes int
	// MaxDocuments is the most manifests one input may hold (empty YAML documents aside).
	MaxDocuments int
	// MaxDepth is the deepest nesting of objects and arrays inside one manifest; the
	// manifest itself is depth 1.
	MaxDepth int
	// MaxNodes is the most values (objects, arrays and scalars) across all manifests.
	MaxNodes int
}

// DefaultLimits are the bounds the API applies to a submission.
var DefaultLimits = Limits{
	// etcd refuses a request over --max-request-bytes, 1.5 MiB by default, so no object the
	// cluster could store is larger; a whole submission is held to the same size.
	MaxBytes: 3 << 19, // 1.5 MiB = 1,572,864 bytes
	// A batch job is a handful of objects (a Job, its ConfigMaps and Services); 100 leaves
	// room for generated bundles while keeping one request's admission work bounded.
	MaxDocuments: 100,
	// The deepest path in a built-in workload, a CronJob pod template's
	// affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[]
	// .podAffinityTerm.labelSelector.matchExpressions[].values[], is 16 levels; 64 is four
	// times that, room for CRD-shaped values and far short of encoding/json's 10,000.
	MaxDepth: 64,
	// A Deployment is 100–300 values; 500 values a manifest at MaxDocuments manifests. It
	// also bounds memory: the YAML library builds a document's tree (≈ 170 bytes a node, keys
	// included, so up to twice as many nodes as values) before DecodeYAML converts it, and at
	// 50,000 values the worst 1 MiB body holds ≈ 20 MiB at its peak (BENCHMARKS.md, "Decoding
	// memory"); at 100,000 it held ≈ 40.
	MaxNodes: 50_000,
}

// withDefaults fills l's zero (or negative) fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultLimits.MaxBytes
	}
	if l.MaxDocuments <= 0 {
		l.MaxDocuments = DefaultLimits.MaxDocuments
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultLimits.MaxDepth
	}
	if l.MaxNodes <= 0 {
		l.MaxNodes = DefaultLimits.MaxNodes
	}
	return l
}

// budget counts what a decode has spent against its Limits.
type budget struct {
	limits Limits
	nodes  int
}

// spend records one value at depth (the manifest itself is depth 1) and says what to fix when
// the value is one too many or one too deep.
func (b *budget) spend(depth int) string {
	if depth > b.limits.MaxDepth {
		return problemf(tooDeep, b.limits.MaxDepth)
	}
	b.nodes++
	if b.nodes > b.limits.MaxNodes {
		return problemf(tooManyNodes, b.limits.MaxNodes)
	}
	return ""
}
