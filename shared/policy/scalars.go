package policy

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// custom decodes a type that decodes itself (Quantity, Time, IntOrString) the way the API
// server does: through its UnmarshalJSON. The common forms of a quantity and of an int-or-string
// skip the round trip through JSON.
func (d *decoder) custom(v any, dst reflect.Value) {
	if v == nil {
		return
	}
	// Both common types are set through a typed pointer: reflect.ValueOf would box the value.
	switch dst.Type() {
	case quantityType:
		*dst.Addr().Interface().(*resource.Quantity) = d.quantity(v)
		return
	case intOrStringType:
		if s, ok := v.(string); ok {
			*dst.Addr().Interface().(*intstr.IntOrString) = intstr.FromString(s)
			return
		}
		if n, ok := integer(v); ok && n == int64(int32(n)) {
			*dst.Addr().Interface().(*intstr.IntOrString) = intstr.FromInt32(int32(n))
			return
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		d.fail("cannot be read: %v", err)
		return
	}
	if err := json.Unmarshal(b, dst.Addr().Interface()); err != nil {
		d.fail("cannot be read as %s: %v", dst.Type(), err)
	}
}

// quantity reads v as Quantity.UnmarshalJSON does: a string, or a number by its JSON text. It
// reports what it cannot read and answers zero for it, as for a null.
func (d *decoder) quantity(v any) resource.Quantity {
	if v == nil {
		return resource.Quantity{}
	}
	text, ok := v.(string)
	if !ok {
		b, err := json.Marshal(v)
		if err != nil {
			d.fail(msgWrongType, "a quantity", describe(v))
			return resource.Quantity{}
		}
		text = string(b)
	}
	q, ok := parseQuantity(text)
	if !ok {
		d.fail(msgQuantity, clip(text))
	}
	return q
}

// Bounds on a quantity, checked before and after parsing it. ParseQuantity takes 50ms on
// "1e-999999" and longer the more nines; comparing "1e999999999" with anything builds a
// billion-digit number. No real resource needs an exponent of three digits, a string of 64
// characters, or more than 2^63 of anything.
const (
	maxQuantityText     = 64
	maxQuantityExponent = 2 // digits
)

// parseQuantity parses a quantity within those bounds.
func parseQuantity(s string) (resource.Quantity, bool) {
	if len(s) > maxQuantityText {
		return resource.Quantity{}, false
	}
	if i := strings.LastIndexAny(s, "eE"); i >= 0 && len(strings.TrimLeft(s[i+1:], "+-")) > maxQuantityExponent {
		return resource.Quantity{}, false
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return resource.Quantity{}, false
	}
	if f := q.AsApproximateFloat64(); math.IsNaN(f) || math.Abs(f) > math.MaxInt64 {
		return resource.Quantity{}, false
	}
	return q, true
}

// integer reads a whole number from what a JSON or YAML decoder gives.
func integer(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		// 2^63 is exactly representable; anything at or past it overflows int64.
		if n != math.Trunc(n) || n >= 1<<63 || n < -(1<<63) {
			return 0, false
		}
		return int64(n), true
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// describe names a decoded value's JSON type for a message.
func describe(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, int64, int, int32, json.Number:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}

// clip shortens what a client sent for quoting back in a message.
func clip(s string) string {
	const most = 64
	if len(s) <= most {
		return s
	}
	return s[:most] + "..."
}
