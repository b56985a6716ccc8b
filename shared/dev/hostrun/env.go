package hostrun

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/tidegate/tidegate/shared/podspec"
)

// imagePath is the PATH an image such as podspec.DefaultImage sets, which the pod spec does not
// carry: the sandbox finds this machine's node, npm and python3 there.
const imagePath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// EnvPort is the port the process is asked to serve on. In a pod every host has its own network
// and may take any port; here all share this machine's, with the dev API on it, so each gets a
// free one of its own.
const EnvPort = "PORT"

// containerEnv is the environment of pod's container c as a kubelet would give it: PATH as the
// image sets it, then the Secrets c takes its environment from (secrets, by name), then c's own
// variables, which win; the pod's UID where the downward API gives it; and the register URL
// naming that UID, as podspec.RegisterURLOf makes it from the Secret's. port, when not 0, is
// EnvPort. Nothing of this machine's own environment is in it.
func containerEnv(pod *corev1.Pod, c corev1.Container, secrets map[string]map[string][]byte, port int) (map[string]string, error) {
	env := map[string]string{"PATH": imagePath}
	for _, from := range c.EnvFrom {
		if from.SecretRef == nil || from.Prefix != "" {
			return nil, fmt.Errorf("container %s takes its environment from something other than a Secret", c.Name)
		}
		data, ok := secrets[from.SecretRef.Name]
		if !ok {
			return nil, fmt.Errorf("container %s's Secret %s was not read", c.Name, from.SecretRef.Name)
		}
		for name, value := range data {
			env[name] = string(value)
		}
	}
	for _, e := range c.Env {
		value, err := valueOf(pod, c, e)
		if err != nil {
			return nil, err
		}
		env[e.Name] = value
	}
	if _, ok := env[podspec.EnvRegisterURL]; ok {
		base, uid := registerBase(c, secrets), string(pod.UID)
		if base == "" {
			return nil, fmt.Errorf("container %s has %s but its Secret has no base URL for it", c.Name, podspec.EnvRegisterURL)
		}
		env[podspec.EnvRegisterURL] = podspec.RegisterURLOf(base, uid)
	}
	if port != 0 {
		env[EnvPort] = strconv.Itoa(port)
	}
	return env, nil
}

// valueOf is one variable's value: as written, or the pod's name or UID from the downward API.
// The only $(…) reference a host's spec holds is in the register URL, which containerEnv makes
// itself; any other is refused rather than passed on unexpanded.
func valueOf(pod *corev1.Pod, c corev1.Container, e corev1.EnvVar) (string, error) {
	if e.ValueFrom != nil {
		if f := e.ValueFrom.FieldRef; f != nil {
			switch f.FieldPath {
			case "metadata.uid":
				return string(pod.UID), nil
			case "metadata.name":
				return pod.Name, nil
			}
		}
		return "", fmt.Errorf("container %s's variable %s comes from something the runner does not give", c.Name, e.Name)
	}
	if strings.Contains(e.Value, "$(") && e.Name != podspec.EnvRegisterURL {
		return "", fmt.Errorf("container %s's variable %s refers to another with $(…), which the runner does not expand", c.Name, e.Name)
	}
	return e.Value, nil
}

// registerBase is the register URL the host's Secret holds, before it names a pod.
func registerBase(c corev1.Container, secrets map[string]map[string][]byte) string {
	for _, from := range c.EnvFrom {
		if from.SecretRef != nil {
			if v := secrets[from.SecretRef.Name][podspec.EnvRegisterURL]; len(v) > 0 {
				return string(v)
			}
		}
	}
	return ""
}
