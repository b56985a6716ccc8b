package podspec

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The variables Tidegate sets in every host's environment, next to the org's secrets.
const (
	// EnvHost is the host's own name.
	EnvHost = "TIDEGATE_HOST"
	// EnvHostToken is the token the host registers with.
	EnvHostToken = "TIDEGATE_HOST_TOKEN"
	// EnvRegisterURL is where the host registers to go live. The Secret holds the bare URL; the
	// app container's own environment, which wins, has it name the pod (RegisterURLOf).
	EnvRegisterURL = "TIDEGATE_REGISTER_URL"
	// EnvPodUID is the UID of the pod the process runs in, from the downward API.
	EnvPodUID = "TIDEGATE_POD_UID"
)

// PodUIDParam is the register URL's query parameter naming the pod whose process registers: a
// registration counts for that pod alone, not for the same host's pod started again.
const PodUIDParam = "pod_uid"

// RegisterURLOf is the register URL base as the process in the pod of UID uid posts to.
func RegisterURLOf(base, uid string) string {
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + PodUIDParam + "=" + uid
}

// SecretName is the name of the Secret that holds host's environment.
func SecretName(host string) string { return host + "-env" }

// Secret holds l's host's environment, one key a variable: the org's secrets and EnvHost,
// EnvHostToken and EnvRegisterURL. It carries the pod's labels, so the beat finds a Secret left
// behind by its pod with the same Selector. It is immutable: a host whose environment changes
// is a new host, and a Secret left over under the same name is deleted, not updated.
func Secret(l Launch) (*corev1.Secret, error) {
	if err := l.check(); err != nil {
		return nil, err
	}
	data := make(map[string][]byte, len(l.Env)+3)
	for name, value := range l.Env {
		data[name] = []byte(value)
	}
	// check refused any org secret under the reserved prefix, so these overwrite nothing.
	data[EnvHost] = []byte(l.Host)
	data[EnvHostToken] = []byte(l.HostToken)
	data[EnvRegisterURL] = []byte(l.RegisterURL)
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: objectMeta(l, SecretName(l.Host)),
		Type:       corev1.SecretTypeOpaque,
		Immutable:  ptr.To(true),
		Data:       data,
	}, nil
}
