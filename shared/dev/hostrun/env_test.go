package hostrun

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tidegate/tidegate/shared/podspec"
)

// launch is a host as the hosting beat makes one, with an org's secrets a hostile tenant chose.
func launch(env map[string]string) podspec.Launch {
	return podspec.Launch{
		Org: "acme", App: "web", Host: "web-r1-0a1b2c3d", Release: 1, Namespace: "apps", Stack: "tidegate",
		SourcesURL:    "http://127.0.0.1:4566/sources/abc?X-Amz-Signature=s",
		SourcesSHA256: strings.Repeat("a", 64), Env: env,
		HostToken: "tok", RegisterURL: "http://127.0.0.1:8080/api/v1/hosts/web-r1-0a1b2c3d/register",
	}
}

// hostPod is l's pod and Secret as the cluster holds them, the pod with uid.
func hostPod(t *testing.T, l podspec.Launch, uid string) (*corev1.Pod, map[string]map[string][]byte) {
	t.Helper()
	p, err := podspec.Pod(l)
	if err != nil {
		t.Fatal(err)
	}
	s, err := podspec.Secret(l)
	if err != nil {
		t.Fatal(err)
	}
	p.UID = types.UID(uid)
	return p, map[string]map[string][]byte{s.Name: s.Data}
}

// TestAppEnv: the app's process gets the Secret's variables, the container's own (which win), the
// pod's UID and the register URL naming it as podspec.RegisterURLOf makes it, PATH and its port;
// nothing of this machine's environment, and an org's secret that looks like a reference to
// another variable stays as written.
func TestAppEnv(t *testing.T) {
	t.Setenv("TIDEGATE_RUNNER_ONLY", "leaked")
	l := launch(map[string]string{"API_TOKEN": "s3cret", "HOME": "/root", "REF": "$(TIDEGATE_HOST_TOKEN)"})
	pod, secrets := hostPod(t, l, "6f1c-uid")
	got, err := containerEnv(pod, pod.Spec.Containers[0], secrets, 4100)
	if err != nil {
		t.Fatalf("containerEnv: %v", err)
	}
	want := map[string]string{
		"PATH":                 imagePath,
		"API_TOKEN":            "s3cret",
		"REF":                  "$(TIDEGATE_HOST_TOKEN)",
		"HOME":                 "/scratch", // the container's own wins over the org's
		"TMPDIR":               "/scratch",
		"NO_COLOR":             "1",
		podspec.EnvHost:        l.Host,
		podspec.EnvHostToken:   "tok",
		podspec.EnvPodUID:      "6f1c-uid",
		podspec.EnvRegisterURL: podspec.RegisterURLOf(l.RegisterURL, "6f1c-uid"),
		EnvPort:                "4100",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("containerEnv(app) (-want +got):\n%s", diff)
	}
}

// TestInstallEnv: the install gets its container's variables (the sources and where to put
// them) and PATH, none of the org's secrets, and no port.
func TestInstallEnv(t *testing.T) {
	l := launch(map[string]string{"API_TOKEN": "s3cret"})
	pod, _ := hostPod(t, l, "u1")
	got, err := containerEnv(pod, pod.Spec.InitContainers[0], nil, 0)
	if err != nil {
		t.Fatalf("containerEnv: %v", err)
	}
	want := map[string]string{
		"PATH": imagePath, "HOME": "/home/app", "TMPDIR": "/scratch", "TIDEGATE_APP_DIR": "/app",
		"TIDEGATE_SOURCES_URL": l.SourcesURL, "TIDEGATE_SOURCES_SHA256": l.SourcesSHA256,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("containerEnv(install) (-want +got):\n%s", diff)
	}
}

// TestContainerEnvRefuses: what the runner cannot give as a kubelet would is an error naming
// the variable, never a value passed on wrong.
func TestContainerEnvRefuses(t *testing.T) {
	pod, secrets := hostPod(t, launch(nil), "u1")
	for name, c := range map[string]corev1.Container{
		"a reference": {Name: "app", Env: []corev1.EnvVar{{Name: "X", Value: "$(HOME)/x"}}},
		"a resource field": {Name: "app", Env: []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{
			ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory"}}}}},
		"an unread Secret": {Name: "app", EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "other-env"}}}}},
		"a ConfigMap":                   {Name: "app", EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{}}}},
		"a register URL without a base": {Name: "app", Env: []corev1.EnvVar{{Name: podspec.EnvRegisterURL, Value: "x"}}},
	} {
		if env, err := containerEnv(pod, c, secrets, 0); err == nil {
			t.Errorf("containerEnv with %s = %v, want an error", name, env)
		}
	}
}
