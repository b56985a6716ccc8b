package podspec

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/pod-security-admission/api"
	psa "k8s.io/pod-security-admission/policy"
	"k8s.io/utils/ptr"
)

// restrictedFailures is what the upstream Pod Security evaluator, built as shared/policy builds
// it, refuses in pod under the restricted profile at the newest version.
func restrictedFailures(t *testing.T, pod *corev1.Pod) []string {
	t.Helper()
	evaluator, err := psa.NewEvaluator(psa.DefaultChecks(), nil)
	if err != nil {
		t.Fatalf("building the pod security evaluator: %v", err)
	}
	restricted := api.LevelVersion{Level: api.LevelRestricted, Version: api.LatestVersion()}
	var failed []string
	for _, res := range evaluator.EvaluatePod(restricted, &pod.ObjectMeta, &pod.Spec) {
		if !res.Allowed {
			failed = append(failed, res.ForbiddenReason+": "+res.ForbiddenDetail)
		}
	}
	return failed
}

func TestPodPassesRestricted(t *testing.T) {
	for name, l := range map[string]Launch{
		"fixture":      fixture(),
		"with command": func() Launch { l := fixture(); l.Command = []string{"node", "server.js"}; return l }(),
		"other image":  func() Launch { l := fixture(); l.Image = "registry.example/python:3.12"; return l }(),
	} {
		pod, err := Pod(l)
		if err != nil {
			t.Fatalf("Pod(%s): %v", name, err)
		}
		if failed := restrictedFailures(t, pod); len(failed) > 0 {
			t.Errorf("Pod(%s) fails Pod Security restricted: %q", name, failed)
		}
	}
}

// TestRestrictedCheckBites keeps TestPodPassesRestricted honest: the same evaluator refuses the
// pod once any one of its protections is undone.
func TestRestrictedCheckBites(t *testing.T) {
	undo := map[string]func(p *corev1.Pod){
		"privilege escalation": func(p *corev1.Pod) { p.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = ptr.To(true) },
		"capabilities kept":    func(p *corev1.Pod) { p.Spec.InitContainers[0].SecurityContext.Capabilities = nil },
		"root": func(p *corev1.Pod) {
			p.Spec.SecurityContext.RunAsNonRoot = nil
			p.Spec.Containers[0].SecurityContext.RunAsNonRoot = nil
		},
		"no seccomp": func(p *corev1.Pod) {
			p.Spec.SecurityContext.SeccompProfile = nil
			p.Spec.InitContainers[0].SecurityContext.SeccompProfile = nil
		},
	}
	for name, change := range undo {
		pod, err := Pod(fixture())
		if err != nil {
			t.Fatalf("Pod(fixture()): %v", err)
		}
		change(pod)
		if failed := restrictedFailures(t, pod); len(failed) == 0 {
			t.Errorf("the pod with %s passes Pod Security restricted; the evaluator is not checking", name)
		}
	}
}
