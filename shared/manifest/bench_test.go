package manifest

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// benchDeploymentJSON is a Deployment as a client sends it: compact JSON, 77 values.
const benchDeploymentJSON = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"app":"web","team":"a"},` +
	`"name":"web","namespace":"team-a"},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},` +
	`"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"args":["--port=8080"],` +
	`"env":[{"name":"LOG_LEVEL","value":"info"},{"name":"POD_NAME","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}],` +
	`"image":"ghcr.io/acme/web:1.4.2","name":"web","ports":[{"containerPort":8080,"name":"http"}],` +
	`"readinessProbe":{"httpGet":{"path":"/healthz","port":"http"},"periodSeconds":5},` +
	`"resources":{"limits":{"cpu":"1","memory":"512Mi"},"requests":{"cpu":"250m","memory":"256Mi"}},` +
	`"securityContext":{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]},"readOnlyRootFilesystem":true},` +
	`"volumeMounts":[{"mountPath":"/etc/web","name":"config","readOnly":true},{"mountPath":"/tmp","name":"tmp"}]}],` +
	`"securityContext":{"runAsNonRoot":true,"runAsUser":10001,"seccompProfile":{"type":"RuntimeDefault"}},` +
	`"volumes":[{"configMap":{"name":"web"},"name":"config"},{"emptyDir":{"sizeLimit":"1Gi"},"name":"tmp"}]}}}}`

// BenchmarkDecodeJSON times DecodeJSON on a Deployment, and on an array of 20 of them, against
// encoding/json's UseNumber decoding of the same text into an any, which builds the same values
// but checks neither duplicate keys nor limits. The two alternate in blocks so that load on the
// machine falls on both alike; x-encoding-json is ours/theirs. ns/op, B/op and allocs/op are ours.
func BenchmarkDecodeJSON(b *testing.B) {
	array := "[" + benchDeploymentJSON
	for range 19 {
		array += "," + benchDeploymentJSON
	}
	array += "]"
	for _, bb := range []struct{ name, body string }{{"Deployment", benchDeploymentJSON}, {"Array20", array}} {
		b.Run(bb.name, func(b *testing.B) { benchDecodeJSON(b, []byte(bb.body)) })
	}
}

func benchDecodeJSON(b *testing.B, body []byte) {
	ours := func() {
		if _, err := DecodeJSON(body, DefaultLimits); err != nil {
			b.Fatal(err)
		}
	}
	theirs := func() {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			b.Fatal(err)
		}
	}
	const rounds = 50
	var oursTook, theirsTook time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += rounds {
		n := min(rounds, b.N-done)
		start := time.Now()
		for range n {
			ours()
		}
		oursTook += time.Since(start)
		b.StopTimer()
		start = time.Now()
		for range n {
			theirs()
		}
		theirsTook += time.Since(start)
		b.StartTimer()
	}
	b.ReportMetric(float64(oursTook)/float64(theirsTook), "x-encoding-json")
}
