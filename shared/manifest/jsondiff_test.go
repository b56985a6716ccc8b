package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// tightLimits make the limit rules bite on the small inputs a fuzzer makes.
var tightLimits = Limits{MaxDocuments: 3, MaxDepth: 6, MaxNodes: 40}

// FuzzDecodeJSONAgainstEncodingJSON holds DecodeJSON to encoding/json: it accepts an input iff
// encoding/json does and no rule of its own (duplicate keys, limits, a manifest's shape)
// refuses it, builds the values encoding/json's UseNumber decoding does, and refuses what it
// refuses as decodeJSONTokens, encoding/json's tokens plus the rules, does: same manifest, path
// and line, same problem (any wording for invalid JSON).
func FuzzDecodeJSONAgainstEncodingJSON(f *testing.F) {
	doc := func(extra string) string { return strings.Replace(job, "%s", extra, 1) }
	for _, seed := range []string{
		doc(""),
		"[" + doc(`,"n":[1,1.5,1e3,-0,12345678901234567890]`) + ",\n" + doc("") + "]",
		doc(`,"labels":{"a":"\u00e9\t\"","b":null,"c":true,"d":{}}`),
		doc(`,"a":1,"a":2`),
		doc(`,"a":1,"a":{"b":[1,{"c":x}]}`), doc(`,"a":1,"a"` + "\n:\n" + `{"b":[1,{"c":1e400}]}`),
		doc(`,"a":1,"a" x`), doc(`,"a":{"b":1,"b":2},"a":3`), doc(`,"a":{},"a":`),
		doc(`,"n":1e400`),
		strings.Repeat("[", 200),
		`[]`, `{} {}`, ``, ` `, `"hi"`, `["hi"]`, `1`, `-`, `nul`, `[{}`, `[{},]`, `[{} {}]`, `[{}}`, `[}`,
		doc(`,"s":"\"\\\/\b\f\n\r\t\u0041\u00e9\u20ac"`),
		doc(`,"s":"\ud83d\ude00 \ud83d \ude00 \ud83d\u0041 \udc00\ud800 \ud800\ud800\udc00 \ud83d\\u0041"`),
		doc(`,"s":"\u12"`), doc(`,"s":"\u12x4"`), doc(`,"s":"\x"`), doc("\n,\"s\":\"a\tb\""), doc(`,"s":"\`),
		doc(`,"n":[-0,0,-0.0e-0,1E+2,1e-400,1e400,-1e400,0.1e308,1.7976931348623157e308,1.8e308]`),
		doc(`,"n":01`), doc(`,"n":1.`), doc(`,"n":.5`), doc(`,"n":-`), doc(`,"n":+1`), doc(`,"n":1e`), doc(`,"n":1e+`),
		doc(`,"n":` + strings.Repeat("9", 309)), doc(`,"n":1` + strings.Repeat("0", 299) + `.5`),
		doc(`,"b":[true,false,null,tru,nulll]`),
		doc(`,"d":` + strings.Repeat(`{"a":`, 62) + "1" + strings.Repeat("}", 62)),
		doc(`,"d":` + strings.Repeat(`{"a":`, 63) + "1" + strings.Repeat("}", 63)),
		doc(`,"d":` + strings.Repeat("[", 62) + strings.Repeat("]", 62)),
		doc(`,"d":` + strings.Repeat("[", 63) + strings.Repeat("]", 63)),
		"[\n" + doc("") + "\n,\n" + doc(`,"k":{"x":1,"x":2}`) + "\n]\n",
		doc("") + "\n\n{",
		"{\"apiVersion\" \n:\"v1\"\n\n",
		"\t\r\n[\r\n" + doc("") + "\r\n]\r\n",
		"[" + strings.Repeat(doc("")+",", 3) + doc("") + "]",
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"},"":1,"\u0000":2}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, limits := range []Limits{DefaultLimits, tightLimits} {
			checkAgainstEncodingJSON(t, b, limits)
		}
	})
}

// checkAgainstEncodingJSON fails t if DecodeJSON(b, limits) differs from encoding/json and
// from decodeJSONTokens as FuzzDecodeJSONAgainstEncodingJSON says.
func checkAgainstEncodingJSON(t *testing.T, b []byte, limits Limits) {
	t.Helper()
	docs, err := DecodeJSON(b, limits)
	refDocs, refErr := decodeJSONTokens(b, limits)
	valid := utf8.Valid(b) && json.Valid(b)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) || docs != nil {
			t.Fatalf("DecodeJSON(%q) = %v, %v (%T); want nil and an *Error", b, docs, err, err)
		}
		if valid && strings.HasPrefix(e.Problem, "invalid JSON") {
			t.Fatalf("DecodeJSON(%q) refuses what encoding/json accepts: %v", b, err)
		}
		var ref *Error
		if !errors.As(refErr, &ref) {
			t.Fatalf("DecodeJSON(%q) refuses (%v); decodeJSONTokens accepts", b, err)
		}
		if !sameRefusal(*e, *ref) {
			t.Fatalf("DecodeJSON(%q) = %#v; decodeJSONTokens = %#v", b, *e, *ref)
		}
		return
	}
	if !valid {
		t.Fatalf("DecodeJSON(%q) accepts what encoding/json refuses", b)
	}
	if refErr != nil {
		t.Fatalf("DecodeJSON(%q) accepts; decodeJSONTokens refuses: %v", b, refErr)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("encoding/json refuses %q after json.Valid accepted it: %v", b, err)
	}
	want, ok := v.([]any)
	if !ok {
		want = []any{v}
	}
	if got := asAnys(docs); !reflect.DeepEqual(got, want) {
		t.Fatalf("DecodeJSON(%q) = %#v; encoding/json gives %#v", b, got, want)
	}
	if !reflect.DeepEqual(docs, refDocs) {
		t.Fatalf("DecodeJSON(%q) = %#v; decodeJSONTokens gives %#v", b, docs, refDocs)
	}
}

// sameRefusal says whether a and b refuse alike: the same manifest, path and line, and the
// same problem, or both invalid JSON in whatever words.
func sameRefusal(a, b Error) bool {
	const syntax = "invalid JSON"
	if strings.HasPrefix(a.Problem, syntax) && strings.HasPrefix(b.Problem, syntax) {
		a.Problem, b.Problem = syntax, syntax
	}
	return a == b
}

func asAnys(docs []map[string]any) []any {
	out := make([]any, len(docs))
	for i, d := range docs {
		out[i] = d
	}
	return out
}
