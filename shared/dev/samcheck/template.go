package samcheck

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/awslabs/goformation/v7"
	"github.com/awslabs/goformation/v7/cloudformation"
	"github.com/awslabs/goformation/v7/intrinsics"
)

// Template is a SAM template read for Check.
//
// References survive reading: !Ref X becomes "${X}", !GetAtt X.Arn becomes "${X.Arn}" and a !Sub
// string stays as written, so Check can tell what points at what. (goformation's own handlers
// resolve references to resources to nothing.) A Ref to a Number parameter becomes the
// parameter's default instead, because goformation's typed fields want a number there.
type Template struct {
	// CFN is goformation's typed view of the template. It does not merge Globals into functions.
	CFN *cloudformation.Template
	// doc is the same template untyped, for the SAM properties goformation v7.14.9 does not
	// model: an SQS event's FunctionResponseTypes (goformation then drops the event's properties
	// altogether), and an HttpApi's Auth.EnableIamAuthorizer and AccessLogSettings (goformation
	// rejects the template; it knows the last as AccessLogSetting, which SAM does not).
	doc map[string]any
	// conditions is the Conditions section as written, in long form: reading the template
	// evaluates each condition to a boolean in doc (against the parameters' defaults).
	conditions map[string]any
}

// ReadFile reads the SAM template at path.
func ReadFile(path string) (*Template, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading SAM template: %w", err)
	}
	return Parse(data)
}

// Parse reads a SAM template written in YAML (short-form tags allowed) or JSON.
func Parse(data []byte) (*Template, error) {
	longForm, err := toLongForm(data)
	if err != nil {
		return nil, fmt.Errorf("reading SAM template: %w", err)
	}
	kept, err := intrinsics.ProcessJSON(longForm, &intrinsics.ProcessorOptions{
		IntrinsicHandlerOverrides: map[string]intrinsics.IntrinsicHandler{
			"Ref":        keepRef,
			"Fn::GetAtt": keepGetAtt,
			"Fn::Sub":    keepSub,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("reading SAM template: %w", err)
	}
	t := &Template{}
	var written struct{ Conditions map[string]any }
	if err := json.Unmarshal(longForm, &written); err != nil {
		return nil, fmt.Errorf("reading SAM template: %w", err)
	}
	t.conditions = written.Conditions
	if err := json.Unmarshal(kept, &t.doc); err != nil {
		return nil, fmt.Errorf("reading SAM template: %w", err)
	}
	typed, err := withoutGoformationGaps(kept)
	if err != nil {
		return nil, fmt.Errorf("reading SAM template: %w", err)
	}
	if t.CFN, err = goformation.ParseJSONWithOptions(typed, &intrinsics.ProcessorOptions{NoProcess: true}); err != nil {
		return nil, fmt.Errorf("reading SAM template with goformation (a property it does not model? see Template.doc): %w", err)
	}
	return t, nil
}

// yamlMu serializes goformation's ProcessYAML, which registers its tag resolvers in a package-level
// map on every call and so may not run concurrently (the race detector and the runtime both say so).
var yamlMu sync.Mutex

// toLongForm converts a YAML or JSON template to JSON with every intrinsic in long form, e.g. !Ref X
// to {"Ref": "X"}, resolving nothing.
func toLongForm(data []byte) ([]byte, error) {
	yamlMu.Lock()
	defer yamlMu.Unlock()
	return intrinsics.ProcessYAML(data, &intrinsics.ProcessorOptions{NoProcess: true})
}

// withoutGoformationGaps drops the valid SAM properties goformation refuses, so it can type the rest.
func withoutGoformationGaps(kept []byte) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(kept, &doc); err != nil {
		return nil, err
	}
	resources, _ := doc["Resources"].(map[string]any)
	for _, r := range resources {
		res, _ := r.(map[string]any)
		if res["Type"] != typeHttpApi {
			continue
		}
		if auth, ok := dig(res, "Properties", "Auth").(map[string]any); ok {
			delete(auth, "EnableIamAuthorizer")
		}
		if props, ok := res["Properties"].(map[string]any); ok {
			delete(props, "AccessLogSettings")
		}
	}
	return json.Marshal(doc)
}

func keepRef(_ string, input, template any) any {
	name, ok := input.(string)
	if !ok {
		return nil
	}
	if name == "AWS::NoValue" {
		return nil
	}
	if p, ok := dig(template, "Parameters", name).(map[string]any); ok && p["Type"] == "Number" {
		return p["Default"]
	}
	return "${" + name + "}"
}

func keepGetAtt(_ string, input, _ any) any {
	switch v := input.(type) {
	case string:
		return "${" + v + "}"
	case []any:
		parts := make([]string, len(v))
		for i, p := range v {
			parts[i] = fmt.Sprint(p)
		}
		return "${" + strings.Join(parts, ".") + "}"
	}
	return nil
}

func keepSub(_ string, input, _ any) any {
	if v, ok := input.([]any); ok && len(v) > 0 {
		return v[0]
	}
	return input
}

// refPattern matches one reference as Parse keeps it: ${LogicalId} or ${LogicalId.Attribute}.
var refPattern = regexp.MustCompile(`\$\{([A-Za-z0-9:]+)(?:\.([A-Za-z0-9.]+))?\}`)

// ref is one reference to a resource or parameter.
type ref struct{ id, attr string }

// refsIn lists what s refers to, leaving out pseudo parameters such as AWS::Region.
func refsIn(s string) []ref {
	var out []ref
	for _, m := range refPattern.FindAllStringSubmatch(s, -1) {
		if strings.HasPrefix(m[1], "AWS::") {
			continue
		}
		out = append(out, ref{id: m[1], attr: m[2]})
	}
	return out
}

// wholeRef reports what s refers to when s is one reference and nothing else.
func wholeRef(s string) (ref, bool) {
	m := refPattern.FindStringSubmatch(s)
	if m == nil || m[0] != s {
		return ref{}, false
	}
	return ref{id: m[1], attr: m[2]}, true
}

// refString is how Parse keeps a reference to id, for messages and comparisons.
func refString(id string) string { return "${" + id + "}" }

// dig walks v through nested maps by key; nil when any step is missing.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// resource is the untyped resource id.
func (t *Template) resource(id string) map[string]any {
	r, _ := dig(t.doc, "Resources", id).(map[string]any)
	return r
}

// resourceType is id's Type, or "" when there is no such resource.
func (t *Template) resourceType(id string) string {
	s, _ := t.resource(id)["Type"].(string)
	return s
}

// stringList reads a string or a list of strings, as IAM's Action and Resource allow.
func stringList(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// number reads a JSON number or a numeric string, as CloudFormation accepts both.
func number(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			return f, true
		}
	}
	return 0, false
}
