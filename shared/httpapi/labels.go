package httpapi

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Kubernetes label syntax: an optional DNS-subdomain prefix and '/', then a name of at most 63
// alphanumerics, '-', '_' or '.', starting and ending alphanumeric; values likewise or empty.
var (
	labelKey   = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)
	labelValue = regexp.MustCompile(`^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$`)
)

// maxLabels bounds a job's labels; they are stored on its record and copied to every object.
const maxLabels = 64

// checkLabels reports the labels that Kubernetes would refuse, naming each.
func checkLabels(field string, labels map[string]string) []FieldProblem {
	var bad []FieldProblem
	if len(labels) > maxLabels {
		bad = append(bad, FieldProblem{field, fmt.Sprintf("at most %d labels", maxLabels)})
	}
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		v := labels[k]
		if !labelKey.MatchString(k) || len(k) > 253+1+63 {
			bad = append(bad, FieldProblem{field + "." + k, "not a Kubernetes label key (name of ≤ 63 alphanumerics, '-', '_', '.', optional DNS prefix and '/')"})
		}
		if !labelValue.MatchString(v) {
			bad = append(bad, FieldProblem{field + "." + k, "not a Kubernetes label value (≤ 63 alphanumerics, '-', '_', '.', starting and ending alphanumeric)"})
		}
		if strings.HasPrefix(k, "tidegate.io/") {
			bad = append(bad, FieldProblem{field + "." + k, "the tidegate.io/ prefix is Tidegate's own"})
		}
	}
	return bad
}
