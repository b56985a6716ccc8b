package policy

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/manifest"
)

// withPod is workload w around a good pod spec, then edited: m is the manifest, spec its pod spec.
func withPod(t testing.TB, w workload, edit func(m, spec map[string]any)) map[string]any {
	t.Helper()
	spec := fromYAML(t, goodPodSpec)
	m := w.wrap(spec)
	if edit != nil {
		edit(m, spec)
	}
	return m
}

var (
	pod         = workloads[0]
	job         = workloads[1]
	cronJob     = workloads[2]
	deployment  = workloads[3]
	statefulSet = workloads[4]
)

// named sets metadata.name (and generateName, if given, without a name when name is "").
func named(name string, generate ...string) func(m, spec map[string]any) {
	return func(m, _ map[string]any) {
		md := at(m, "metadata")
		delete(md, "name")
		if name != "" {
			md["name"] = name
		}
		if len(generate) > 0 {
			md["generateName"] = generate[0]
		}
	}
}

func object(kind, name string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": kind, "metadata": meta(name)}
}

// configMap is a ConfigMap whose metadata edit changes, with fields and values in pairs.
func configMap(edit func(md map[string]any), fields ...any) map[string]any {
	m := object("ConfigMap", "cfg")
	edit(at(m, "metadata"))
	for i := 0; i < len(fields); i += 2 {
		m[fields[i].(string)] = fields[i+1]
	}
	return m
}

func secret(fields ...any) map[string]any {
	m := configMap(func(map[string]any) {}, fields...)
	m["kind"] = "Secret"
	return m
}

func service(name string, ports ...map[string]any) map[string]any {
	m := object("Service", name)
	list := []any{}
	for _, p := range ports {
		list = append(list, p)
	}
	m["spec"] = map[string]any{"ports": list}
	return m
}

func port(name string, number float64) map[string]any {
	p := map[string]any{"port": number}
	if name != "" {
		p["name"] = name
	}
	return p
}

// container is a compliant container named name.
func container(t testing.TB, name string) map[string]any {
	c := fromYAML(t, goodContainer)
	c["name"] = name
	return c
}

func withContainers(t testing.TB, field string, names ...string) func(m, spec map[string]any) {
	return func(_, spec map[string]any) {
		list, _ := spec[field].([]any)
		for _, n := range names {
			list = append(list, container(t, n))
		}
		spec[field] = list
	}
}

func edit(path []any, key string, value any) func(m, spec map[string]any) {
	return func(_, spec map[string]any) { at(spec, path...)[key] = value }
}

// restarting is w with its pod's restartPolicy set to policy, or unset if policy is nil.
func restarting(t testing.TB, w workload, policy any) map[string]any {
	return withPod(t, w, func(_, spec map[string]any) {
		delete(spec, "restartPolicy")
		if policy != nil {
			spec["restartPolicy"] = policy
		}
	})
}

var (
	label63     = strings.Repeat("a", 63)
	subdomain   = label63 + "." + label63 + "." + label63 + "." + strings.Repeat("b", 61) // 253
	annotations = 256 << 10
)

func TestCheckAPIServerRefuses(t *testing.T) {
	c := mustChecker(t, Config{Kinds: checkableKinds()})
	mainContainer := []any{"containers", 0}
	tests := []struct {
		name string
		doc  map[string]any
		want string // the field of the one violation
	}{
		{"Pod name with upper case", withPod(t, pod, named("Web")), "metadata.name"},
		{"ConfigMap name of 254 characters", object("ConfigMap", subdomain+"c"), "metadata.name"},
		{"ConfigMap name with an underscore", object("ConfigMap", "my_cfg"), "metadata.name"},
		{"ConfigMap name ending in a dot", object("ConfigMap", "cfg."), "metadata.name"},
		{"Secret name with a slash", object("Secret", "a/b"), "metadata.name"},
		{"Service name with a dot", service("web.v1", port("", 80)), "metadata.name"},
		{"Service name of 64 characters", service(label63+"a", port("", 80)), "metadata.name"},
		{"generateName with an underscore", withPod(t, pod, named("", "web_")), "metadata.generateName"},
		{"Service generateName with a dot", func() map[string]any {
			m := service("", port("", 80))
			at(m, "metadata")["generateName"] = "web.v1-"
			delete(at(m, "metadata"), "name")
			return m
		}(), "metadata.generateName"},
		{"Job name of 64 characters (its job-name label)", withPod(t, job, named(label63+"a")), "metadata.name"},
		{"Indexed Job whose last pod name has a dot", withPod(t, job, func(m, _ map[string]any) {
			named("train.v1")(m, nil)
			at(m, "spec")["completionMode"], at(m, "spec")["completions"] = "Indexed", 2.0
		}), "metadata.name"},
		{"Indexed Job whose last pod name is 64 characters", withPod(t, job, func(m, _ map[string]any) {
			named(strings.Repeat("j", 61))(m, nil)
			at(m, "spec")["completionMode"], at(m, "spec")["completions"] = "Indexed", 100.0
		}), "metadata.name"},
		{"CronJob name of 53 characters", withPod(t, cronJob, named(strings.Repeat("c", 53))), "metadata.name"},
		{"CronJob generateName of 48 characters", withPod(t, cronJob, named("", strings.Repeat("c", 47)+"-")), "metadata.name"},
		{"label key with a space", configMap(func(md map[string]any) { md["labels"] = map[string]any{"bad key": "x"} }), "metadata.labels[bad key]"},
		{"label key with an upper-case prefix", configMap(func(md map[string]any) { md["labels"] = map[string]any{"Example.com/app": "x"} }), "metadata.labels[Example.com/app]"},
		{"label key with two slashes", configMap(func(md map[string]any) { md["labels"] = map[string]any{"a/b/c": "x"} }), "metadata.labels[a/b/c]"},
		{"label value of 64 characters", configMap(func(md map[string]any) { md["labels"] = map[string]any{"app": label63 + "a"} }), "metadata.labels[app]"},
		{"template label value starting with a dash", withPod(t, deployment, func(m, _ map[string]any) {
			at(m, "spec", "template", "metadata", "labels")["tier"] = "-web"
		}), "spec.template.metadata.labels[tier]"},
		{"annotation key with two slashes", configMap(func(md map[string]any) { md["annotations"] = map[string]any{"a/b/c": "x"} }), "metadata.annotations[a/b/c]"},
		{"annotations over 256 KiB", configMap(func(md map[string]any) {
			md["annotations"] = map[string]any{"k": strings.Repeat("x", annotations)}
		}), "metadata.annotations"},
		{"Job template annotation key that is empty", withPod(t, job, func(m, _ map[string]any) {
			at(m, "spec", "template", "metadata")["annotations"] = map[string]any{"": "x"}
		}), "spec.template.metadata.annotations[]"},
		{"ConfigMap data key with a space", configMap(func(md map[string]any) {}, "data", map[string]any{"my key": "x"}), "data[my key]"},
		{"ConfigMap binaryData key starting with '..'", configMap(func(md map[string]any) {}, "binaryData", map[string]any{"..x": "eA=="}), "binaryData[..x]"},
		{"ConfigMap key in data and binaryData", configMap(func(md map[string]any) {}, "data", map[string]any{"k": "x"}, "binaryData", map[string]any{"k": "eA=="}), "data[k]"},
		{"Secret stringData key with a slash", secret("stringData", map[string]any{"a/b": "x"}), "stringData[a/b]"},
		{"Secret data key '.'", secret("data", map[string]any{".": "eA=="}), "data[.]"},
		{"container name with upper case", withPod(t, pod, edit(mainContainer, "name", "Main")), "spec.containers[0].name"},
		{"container name with a dot", withPod(t, pod, edit(mainContainer, "name", "main.v1")), "spec.containers[0].name"},
		{"container without a name", withPod(t, pod, func(_, spec map[string]any) { delete(at(spec, mainContainer...), "name") }), "spec.containers[0].name"},
		{"two containers of one name", withPod(t, statefulSet, withContainers(t, "containers", "main")), "spec.template.spec.containers[1].name"},
		{"init container named as a container", withPod(t, job, withContainers(t, "initContainers", "main")), "spec.template.spec.initContainers[0].name"},
		{"two init containers of one name", withPod(t, pod, withContainers(t, "initContainers", "fetch", "fetch")), "spec.initContainers[1].name"},
		{"port name with an underscore", withPod(t, pod, edit(mainContainer, "ports", []any{map[string]any{"name": "http_alt", "containerPort": 8080.0}})), "spec.containers[0].ports[0].name"},
		{"port name of 16 characters", withPod(t, pod, edit(mainContainer, "ports", []any{map[string]any{"name": "a234567890123456", "containerPort": 8080.0}})), "spec.containers[0].ports[0].name"},
		{"port name without a letter", withPod(t, pod, edit(mainContainer, "ports", []any{map[string]any{"name": "8080", "containerPort": 8080.0}})), "spec.containers[0].ports[0].name"},
		{"port name with two dashes in a row", withPod(t, pod, edit(mainContainer, "ports", []any{map[string]any{"name": "a--b", "containerPort": 8080.0}})), "spec.containers[0].ports[0].name"},
		{"two ports of one name in a container", withPod(t, pod, edit(mainContainer, "ports", []any{
			map[string]any{"name": "http", "containerPort": 8080.0}, map[string]any{"name": "http", "containerPort": 8081.0},
		})), "spec.containers[0].ports[1].name"},
		{"Service port name with upper case", service("web", port("HTTP", 80)), "spec.ports[0].name"},
		{"Service port without a name beside another", service("web", port("http", 80), port("", 443)), "spec.ports[1].name"},
		{"two Service ports of one name", service("web", port("http", 80), port("http", 443)), "spec.ports[1].name"},
		{"env name with '='", withPod(t, pod, edit(mainContainer, "env", []any{map[string]any{"name": "A=B", "value": "x"}})), "spec.containers[0].env[0].name"},
		{"env name that is empty", withPod(t, pod, edit(mainContainer, "env", []any{map[string]any{"name": "", "value": "x"}})), "spec.containers[0].env[0].name"},
		{"env name with a non-ASCII letter", withPod(t, pod, edit(mainContainer, "env", []any{map[string]any{"name": "CAFÉ", "value": "x"}})), "spec.containers[0].env[0].name"},
		{"env name with a tab", withPod(t, pod, edit(mainContainer, "env", []any{map[string]any{"name": "A\tB", "value": "x"}})), "spec.containers[0].env[0].name"},
		{"Job without restartPolicy", restarting(t, job, nil), "spec.template.spec.restartPolicy"},
		{"Job with restartPolicy Always", restarting(t, job, "Always"), "spec.template.spec.restartPolicy"},
		{"CronJob with restartPolicy Always", restarting(t, cronJob, "Always"), "spec.jobTemplate.spec.template.spec.restartPolicy"},
		{"CronJob without restartPolicy", restarting(t, cronJob, nil), "spec.jobTemplate.spec.template.spec.restartPolicy"},
		{"Deployment with restartPolicy Never", restarting(t, deployment, "Never"), "spec.template.spec.restartPolicy"},
		{"StatefulSet with restartPolicy OnFailure", restarting(t, statefulSet, "OnFailure"), "spec.template.spec.restartPolicy"},
		{"Pod with an unknown restartPolicy", restarting(t, pod, "Sometimes"), "spec.restartPolicy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Second in a bundle, so that the document index is checked too.
			res := c.Check(tenantRequest(object("ConfigMap", "first"), tt.doc))
			want := []located{{1, tt.want}}
			if diff := cmp.Diff(want, fieldsOf(res.Violations)); diff != "" {
				t.Errorf("Check(%s) fields (-want +got):\n%s\nviolations: %v", tt.name, diff, res.Violations)
			}
		})
	}
}

func TestCheckAPIServerAccepts(t *testing.T) {
	c := mustChecker(t, Config{Kinds: checkableKinds()})
	mainContainer := []any{"containers", 0}
	tests := []struct {
		name string
		doc  map[string]any
	}{
		{"ConfigMap name of 253 characters with dots", object("ConfigMap", subdomain)},
		{"Pod name with dots", withPod(t, pod, named("web.v1.example"))},
		{"PersistentVolumeClaim name with dots", object("PersistentVolumeClaim", "data.cache-1")},
		{"Service name starting with a digit (RFC 1123, not 1035)", service("1web", port("", 80))},
		{"Service name of 63 characters", service(label63, port("", 80))},
		{"Service generateName ending in a dash", func() map[string]any {
			m := service("", port("", 80))
			at(m, "metadata")["generateName"] = "web-"
			delete(at(m, "metadata"), "name")
			return m
		}()},
		{"generateName of 253 characters with dots", withPod(t, pod, named("", subdomain[:252]+"-"))},
		{"Job name of 63 characters", withPod(t, job, named(label63))},
		{"Job name of 64 characters with a manual selector", withPod(t, job, func(m, _ map[string]any) {
			named(label63+"a")(m, nil)
			at(m, "spec")["manualSelector"] = true
			at(m, "spec")["selector"] = map[string]any{"matchLabels": map[string]any{"app": "x"}}
		})},
		{"Job generateName of 200 characters (names are cut to 63)", withPod(t, job, named("", strings.Repeat("j", 200)))},
		{"Indexed Job whose last pod name is 63 characters", withPod(t, job, func(m, _ map[string]any) {
			named(strings.Repeat("j", 60))(m, nil)
			at(m, "spec")["completionMode"], at(m, "spec")["completions"] = "Indexed", 100.0
		})},
		{"NonIndexed Job name with a dot", withPod(t, job, func(m, _ map[string]any) {
			named("train.v1")(m, nil)
			at(m, "spec")["completions"] = 2.0
		})},
		{"CronJob name of 52 characters", withPod(t, cronJob, named(strings.Repeat("c", 52)))},
		{"CronJob generateName of 47 characters", withPod(t, cronJob, named("", strings.Repeat("c", 46)+"-"))},
		{"labels at the edges", configMap(func(md map[string]any) {
			md["labels"] = map[string]any{
				"app": label63, "empty": "", "example.com/Name_x.y": "A.b-c_D", label63: "x", subdomain + "/n": "v",
			}
		})},
		{"annotations of upper-case keys, exactly 256 KiB", configMap(func(md map[string]any) {
			md["annotations"] = map[string]any{"Example.COM/Key": strings.Repeat("x", annotations-len("Example.COM/Key"))}
		})},
		{"ConfigMap and Secret keys at the edges", configMap(func(md map[string]any) {}, "data", map[string]any{"config.yaml": "x", ".env": "x", "KEY_NAME-1": "x", strings.Repeat("k", 253): "x"}, "binaryData", map[string]any{"a..b": "eA=="})},
		{"Secret key in data and stringData (stringData wins)", secret("data", map[string]any{"k": "eA=="}, "stringData", map[string]any{"k": "y", "tls.crt": "z"})},
		{"container name of 63 characters", withPod(t, pod, edit(mainContainer, "name", label63))},
		{"init container and container of different names", withPod(t, job, withContainers(t, "initContainers", "fetch"))},
		{"port names at the edges, repeated across containers", withPod(t, deployment, func(_, spec map[string]any) {
			at(spec, mainContainer...)["ports"] = []any{map[string]any{"name": "a23456789012345", "containerPort": 8080.0}, map[string]any{"name": "9-a", "containerPort": 81.0}}
			c := container(t, "side")
			c["ports"] = []any{map[string]any{"name": "a23456789012345", "containerPort": 9090.0}}
			spec["containers"] = append(spec["containers"].([]any), c)
		})},
		{"one unnamed Service port", service("web", port("", 80))},
		{"Service ports of two names", service("web", port("http", 80), port("https-1", 443))},
		{"env names any printable ASCII but '='", withPod(t, pod, edit(mainContainer, "env", []any{
			map[string]any{"name": "MY_VAR", "value": "x"}, map[string]any{"name": "1.my env-name!~", "value": "x"},
		}))},
		{"Pod without restartPolicy (Always)", restarting(t, pod, nil)},
		{"Pod with restartPolicy Never", restarting(t, pod, "Never")},
		{"Job with restartPolicy OnFailure", restarting(t, job, "OnFailure")},
		{"CronJob with restartPolicy Never", restarting(t, cronJob, "Never")},
		{"Deployment without restartPolicy (Always)", restarting(t, deployment, nil)},
		{"StatefulSet with restartPolicy Always", restarting(t, statefulSet, "Always")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if res := c.Check(tenantRequest(tt.doc)); !res.Allowed() {
				t.Errorf("Check(%s) = %v, want no violation", tt.name, res.Violations)
			}
		})
	}
}

// The example manifests a newcomer copies, examples/job.yaml and the README's, pass the policy.
func TestExamplesPass(t *testing.T) {
	c := mustChecker(t, Config{})
	req := func(ms []map[string]any) Request {
		return Request{Manifests: ms, Namespaces: []string{"team-a"}, DefaultNamespace: "team-a"}
	}
	job, err := os.ReadFile("../../examples/job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	sources := map[string][]map[string]any{"examples/job.yaml": decodedOrFail(t, string(job))}
	// The README's YAML blocks that are manifests, and the manifests of its JSON request bodies.
	for i, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(readme), -1) {
		if strings.Contains(m[1], "apiVersion:") {
			sources[fmt.Sprintf("README.md YAML block %d", i)] = decodedOrFail(t, m[1])
		}
	}
	for i, m := range regexp.MustCompile("(?s)<<'JSON'\n(.*?)\nJSON\n").FindAllStringSubmatch(string(readme), -1) {
		var body struct {
			Manifest json.RawMessage `json:"manifest"`
		}
		if err := json.Unmarshal([]byte(m[1]), &body); err != nil {
			t.Fatalf("README.md JSON body %d: %v", i, err)
		}
		if body.Manifest != nil {
			ms, err := manifest.DecodeJSON(body.Manifest, manifest.DefaultLimits)
			if err != nil {
				t.Fatalf("README.md JSON body %d: %v", i, err)
			}
			sources[fmt.Sprintf("README.md JSON body %d", i)] = ms
		}
	}
	if len(sources) < 3 {
		t.Fatalf("found %d example sources, want examples/job.yaml and at least two of the README's", len(sources))
	}
	for name, ms := range sources {
		if res := c.Check(req(ms)); !res.Allowed() {
			t.Errorf("Check(%s) = %v, want no violation", name, res.Violations)
		}
	}
}

func decodedOrFail(t *testing.T, s string) []map[string]any {
	t.Helper()
	ms, err := manifest.DecodeYAML([]byte(s), manifest.DefaultLimits)
	if err != nil {
		t.Fatalf("decoding an example: %v\n%s", err, s)
	}
	return ms
}
