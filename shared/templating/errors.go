package templating

import (
	"fmt"
	"strings"
)

// ParamError names every parameter a fill is missing and every one it was given but the
// template never uses. The HTTP layer answers it with 400 invalid_request.
type ParamError struct {
	Missing []string // used by the template, given no value and no default; sorted
	Unknown []string // given, but no placeholder in the template names them; sorted
	// Reserved are given but filled by Tidegate itself: name, which the job's name fills.
	Reserved []string
}

func (e *ParamError) Error() string {
	var msgs []string
	if len(e.Missing) > 0 {
		msgs = append(msgs, fmt.Sprintf(missingParams, strings.Join(e.Missing, ", ")))
	}
	if len(e.Unknown) > 0 {
		msgs = append(msgs, fmt.Sprintf(unknownParams, strings.Join(e.Unknown, ", ")))
	}
	if len(e.Reserved) > 0 {
		msgs = append(msgs, fmt.Sprintf(reservedParams, strings.Join(e.Reserved, ", ")))
	}
	return strings.Join(msgs, "; ")
}

// FieldError is a value that cannot go where a placeholder puts it: an object inside a
// longer string, say. The HTTP layer answers it with 400 invalid_request.
type FieldError struct {
	Document int    // the manifest's 0-based index in the template
	Path     string // where in it, as in spec.template.spec.containers[0].image
	Param    string // the parameter whose value it is; "" for a value of the template itself
	Problem  string // what is wrong and what to do about it
}

func (e *FieldError) Error() string {
	where := fmt.Sprintf("manifest %d", e.Document)
	if e.Path != "" {
		where += " at " + e.Path
	}
	if e.Param != "" {
		where += fmt.Sprintf(", parameter %q", e.Param)
	}
	return where + ": " + e.Problem
}

// What a user reads when a fill is refused, kept together so they read alike.
const (
	missingParams = "missing parameters %s: give them values (the template has no defaults for them)"
	unknownParams = "unknown parameters %s: the template has no placeholder for them, so remove them " +
		"(a placeholder is {{ key }}, the key letters, digits and _)"
	reservedParams = "parameter %s is the job's own name, which fills {{ name }}; give the job's name instead of a value for it"
	notText        = "the value is %s, which can fill a whole field (\"{{ key }}\") but not text inside a string; pass a string"
	badNumber      = "the value %v is not a number JSON can hold"
	badType        = "the value's type %T is not a JSON value"
	tooLarge       = "the values filled in come to more than %d bytes, more than the cluster stores; use shorter values or fewer placeholders"
)
