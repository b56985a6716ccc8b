package policy

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The formats the API server holds names, keys and values to. Each has two sides: a scan of the
// bytes here, which admits what is certainly valid without the regular expressions that
// apimachinery matches (they would cost more than the Pod Security evaluation a check is measured
// against), and apimachinery's own function, which decides everything the scan does not admit
// and says why. So a value is only ever refused by the API server's own rule, in its words;
// FuzzFormatsAgreeWithUpstream holds each scan to its function.

// format is one of those rules.
type format struct {
	valid    func(string) bool
	upstream func(string) []string
}

var (
	dnsSubdomainName = format{dnsSubdomain, func(s string) []string { return apivalidation.NameIsDNSSubdomain(s, false) }}
	dnsLabelName     = format{dnsLabel, func(s string) []string { return apivalidation.NameIsDNSLabel(s, false) }}
	labelKey         = format{qualifiedName, content.IsLabelKey}
	labelValue       = format{func(s string) bool { return s == "" || qualifiedPart(s) }, content.IsLabelValue}
	portName         = format{ianaServiceName, validation.IsValidPortName}
	// envName is the rule of the API servers that k8s.io/api v0.37 describes (Kubernetes 1.37):
	// any printable ASCII but '=' (RelaxedEnvironmentVariableValidation, beta and on by default
	// since 1.32, GA since 1.34). An older server holds names to the C-identifier-like rule,
	// which this would let through: refusing those here would refuse what 1.37 accepts.
	envName = format{relaxedEnvName, validation.IsRelaxedEnvVarName}
	// dnsLabelValue is a container's or a Service port's name.
	dnsLabelValue = format{dnsLabel, validation.IsDNS1123Label}
	// configKey is a key of a ConfigMap's or a Secret's data.
	configKey = format{configMapKey, validation.IsConfigMapKey}
)

// refused answers why the API server refuses s under f, or "" if it accepts it.
func (f format) refused(s string) string {
	if f.valid(s) {
		return ""
	}
	return strings.Join(f.upstream(s), "; ")
}

// prefix is f for a generateName: the API server appends five characters to it, so a trailing
// '-' is allowed (apivalidation's prefix argument).
func (f format) prefix(s string) string {
	if len(s) > 1 && s[len(s)-1] == '-' {
		s = s[:len(s)-2] + "a" // what apivalidation's maskTrailingDash does
	}
	return f.refused(s)
}

func lowerAlnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

func alnum(c byte) bool { return lowerAlnum(c) || 'A' <= c && c <= 'Z' }

// dnsSubdomain is RFC 1123's subdomain as apimachinery has it: at most 253 characters,
// dot-separated labels of lower-case letters, digits and '-', each starting and ending with a
// letter or digit (no length per label).
func dnsSubdomain(s string) bool {
	if len(s) == 0 || len(s) > validation.DNS1123SubdomainMaxLength {
		return false
	}
	prev := byte('.') // the start is like the start of a label
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case lowerAlnum(c):
		case c == '-' && prev != '.':
		case c == '.' && lowerAlnum(prev):
		default:
			return false
		}
		prev = c
	}
	return lowerAlnum(prev)
}

// dnsLabel is one RFC 1123 label: at most 63 characters, no dots.
func dnsLabel(s string) bool {
	return len(s) <= validation.DNS1123LabelMaxLength && strings.IndexByte(s, '.') < 0 && dnsSubdomain(s)
}

// qualifiedPart is a label value that is not empty, or a label key's name: at most 63
// letters, digits, '-', '_' and '.', starting and ending with a letter or digit.
func qualifiedPart(s string) bool {
	if len(s) == 0 || len(s) > validation.LabelValueMaxLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		inner := i > 0 && i < len(s)-1
		if !alnum(c) && !(inner && (c == '-' || c == '_' || c == '.')) {
			return false
		}
	}
	return true
}

// qualifiedName is a label key: a name, with an optional DNS subdomain and '/' before it.
func qualifiedName(s string) bool {
	prefix, name, found := strings.Cut(s, "/")
	if !found {
		return qualifiedPart(s)
	}
	return dnsSubdomain(prefix) && qualifiedPart(name)
}

// ianaServiceName is a port name (RFC 6335's IANA_SVC_NAME, lower case only): 1 to 15
// lower-case letters, digits and '-', at least one letter, no '-' at either end or twice in a row.
func ianaServiceName(s string) bool {
	if len(s) == 0 || len(s) > 15 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	letter := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z':
			letter = true
		case '0' <= c && c <= '9':
		case c == '-' && s[i-1] != '-':
		default:
			return false
		}
	}
	return letter
}

// relaxedEnvName is any non-empty run of printable ASCII other than '='.
func relaxedEnvName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || c == '=' {
			return false
		}
	}
	return len(s) > 0
}

// configMapKey is at most 253 letters, digits, '-', '_' and '.', not "." and not starting with
// "..", which would name the directory above where the key is mounted.
func configMapKey(s string) bool {
	if len(s) == 0 || len(s) > validation.DNS1123SubdomainMaxLength || s == "." || strings.HasPrefix(s, "..") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !alnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}
