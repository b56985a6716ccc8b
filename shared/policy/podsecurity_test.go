package policy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/pod-security-admission/api"
	psa "k8s.io/pod-security-admission/policy"
)

var sortLocated = cmpopts.SortSlices(func(a, b located) bool {
	return a.Document < b.Document || a.Document == b.Document && a.Field < b.Field
})

// containerMutations each make one container break the restricted profile; fields are the
// violations' paths under the container.
var containerMutations = []struct {
	name   string
	mutate func(c map[string]any)
	fields []string
}{
	{"privileged", func(c map[string]any) { at(c, "securityContext")["privileged"] = true },
		[]string{".securityContext.privileged"}},
	{"allowPrivilegeEscalation true", func(c map[string]any) { at(c, "securityContext")["allowPrivilegeEscalation"] = true },
		[]string{".securityContext.allowPrivilegeEscalation"}},
	{"no securityContext", func(c map[string]any) { delete(c, "securityContext") },
		[]string{".securityContext.allowPrivilegeEscalation", ".securityContext.capabilities.drop"}},
	{"adds SYS_ADMIN", func(c map[string]any) {
		at(c, "securityContext", "capabilities")["add"] = []any{"NET_BIND_SERVICE", "SYS_ADMIN"}
	},
		[]string{".securityContext.capabilities.add[1]"}},
	{"runAsNonRoot false", func(c map[string]any) { at(c, "securityContext")["runAsNonRoot"] = false },
		[]string{".securityContext.runAsNonRoot"}},
	{"runAsUser 0", func(c map[string]any) { at(c, "securityContext")["runAsUser"] = 0.0 },
		[]string{".securityContext.runAsUser"}},
	{"seccomp Unconfined", func(c map[string]any) { at(c, "securityContext", "seccompProfile")["type"] = "Unconfined" },
		[]string{".securityContext.seccompProfile.type"}},
	{"hostPort", func(c map[string]any) {
		c["ports"] = []any{map[string]any{"containerPort": 8080.0, "hostPort": 8080.0}}
	},
		[]string{".ports[0].hostPort"}},
	{"procMount Unmasked", func(c map[string]any) { at(c, "securityContext")["procMount"] = "Unmasked" },
		[]string{".securityContext.procMount"}},
	{"probe host", func(c map[string]any) {
		c["livenessProbe"] = map[string]any{"httpGet": map[string]any{"host": "169.254.169.254", "port": 80.0}}
	}, []string{".livenessProbe.httpGet.host"}},
	{"SELinux type", func(c map[string]any) { at(c, "securityContext", "seLinuxOptions")["type"] = "spc_t" },
		[]string{".securityContext.seLinuxOptions.type"}},
	{"AppArmor Unconfined", func(c map[string]any) { at(c, "securityContext", "appArmorProfile")["type"] = "Unconfined" },
		[]string{".securityContext.appArmorProfile.type"}},
	{"Windows hostProcess", func(c map[string]any) { at(c, "securityContext", "windowsOptions")["hostProcess"] = true },
		[]string{".securityContext.windowsOptions.hostProcess"}},
}

// podMutations each make the pod as a whole break the restricted profile; fields are under the
// pod spec.
var podMutations = []struct {
	name   string
	mutate func(s map[string]any)
	fields []string
}{
	{"hostNetwork", func(s map[string]any) { s["hostNetwork"] = true }, []string{".hostNetwork"}},
	{"hostPID and hostIPC", func(s map[string]any) { s["hostPID"], s["hostIPC"] = true, true }, []string{".hostPID", ".hostIPC"}},
	{"hostPath volume", func(s map[string]any) {
		s["volumes"] = []any{map[string]any{"name": "host", "hostPath": map[string]any{"path": "/"}}}
	}, []string{".volumes[0].hostPath"}},
	{"nfs volume after an allowed one", func(s map[string]any) {
		s["volumes"] = []any{
			map[string]any{"name": "scratch", "emptyDir": map[string]any{}},
			map[string]any{"name": "share", "nfs": map[string]any{"server": "nfs", "path": "/"}},
		}
	}, []string{".volumes[1].nfs"}},
	{"unsafe sysctl", func(s map[string]any) {
		at(s, "securityContext")["sysctls"] = []any{
			map[string]any{"name": "net.ipv4.tcp_syncookies", "value": "1"},
			map[string]any{"name": "kernel.msgmax", "value": "65536"},
		}
	}, []string{".securityContext.sysctls[1].name"}},
	{"runAsNonRoot missing", func(s map[string]any) { delete(at(s, "securityContext"), "runAsNonRoot") },
		[]string{".securityContext.runAsNonRoot"}},
	{"runAsNonRoot false", func(s map[string]any) { at(s, "securityContext")["runAsNonRoot"] = false },
		[]string{".securityContext.runAsNonRoot"}},
	{"seccompProfile missing", func(s map[string]any) { delete(at(s, "securityContext"), "seccompProfile") },
		[]string{".securityContext.seccompProfile.type"}},
	{"runAsUser 0", func(s map[string]any) { at(s, "securityContext")["runAsUser"] = 0.0 },
		[]string{".securityContext.runAsUser"}},
	{"SELinux user", func(s map[string]any) { at(s, "securityContext", "seLinuxOptions")["user"] = "system_u" },
		[]string{".securityContext.seLinuxOptions.user"}},
}

func TestCheckGoodPodAndPodControllers(t *testing.T) {
	c := mustChecker(t, Config{})
	for _, w := range workloads {
		for _, pos := range positions {
			t.Run(w.kind.Kind+"/"+pos.name, func(t *testing.T) {
				res := c.Check(tenantRequest(w.wrap(withContainer(t, pos.name, func(map[string]any) {}))))
				if !res.Allowed() {
					t.Errorf("Check(good %s with a good container in %s) = %v, want none", w.kind, pos.name, res.Violations)
				}
			})
		}
	}
}

func TestCheckBadContainerInEveryPosition(t *testing.T) {
	c := mustChecker(t, Config{})
	for _, w := range workloads {
		for _, pos := range positions {
			for _, m := range containerMutations {
				t.Run(fmt.Sprintf("%s/%s/%s", w.kind.Kind, pos.name, m.name), func(t *testing.T) {
					res := c.Check(tenantRequest(w.wrap(withContainer(t, pos.name, m.mutate))))
					container := fmt.Sprintf("%s.%s[%d]", w.specPath, pos.name, pos.index)
					var want []located
					for _, f := range m.fields {
						want = append(want, located{0, container + f})
					}
					if diff := cmp.Diff(want, fieldsOf(res.Violations), sortLocated); diff != "" {
						t.Errorf("Check(%s with %s in %s) fields (-want +got):\n%s\nviolations: %v", w.kind, m.name, pos.name, diff, res.Violations)
					}
					assertPodSecurityMessages(t, res.Violations)
				})
			}
		}
	}
}

func TestCheckBadPodInEveryController(t *testing.T) {
	c := mustChecker(t, Config{})
	for _, w := range workloads {
		for _, m := range podMutations {
			t.Run(w.kind.Kind+"/"+m.name, func(t *testing.T) {
				spec := fromYAML(t, goodPodSpec)
				m.mutate(spec)
				res := c.Check(tenantRequest(w.wrap(spec)))
				var want []located
				for _, f := range m.fields {
					want = append(want, located{0, w.specPath + f})
				}
				// Only the Pod Security verdicts are compared: the fixture's emptyDir has no
				// sizeLimit, which the pod fields check refuses too, for a reason of its own.
				got := podSecurityOnly(res.Violations)
				if diff := cmp.Diff(want, fieldsOf(got), sortLocated); diff != "" {
					t.Errorf("Check(%s with %s) fields (-want +got):\n%s\nviolations: %v", w.kind, m.name, diff, res.Violations)
				}
				assertPodSecurityMessages(t, got)
			})
		}
	}
}

func TestCheckAppArmorAnnotationOnTemplate(t *testing.T) {
	c := mustChecker(t, Config{})
	const key = "container.apparmor.security.beta.kubernetes.io/main"
	for _, w := range workloads {
		t.Run(w.kind.Kind, func(t *testing.T) {
			m := w.wrap(fromYAML(t, goodPodSpec))
			metaPath := strings.TrimSuffix(w.specPath, "spec") + "metadata"
			var keys []any
			for _, k := range strings.Split(metaPath, ".") {
				keys = append(keys, k)
			}
			at(m, keys...)["annotations"] = map[string]any{key: "unconfined"}
			res := c.Check(tenantRequest(m))
			want := []located{{0, metaPath + ".annotations[" + key + "]"}}
			if diff := cmp.Diff(want, fieldsOf(res.Violations)); diff != "" {
				t.Errorf("Check(%s with an AppArmor annotation) fields (-want +got):\n%s", w.kind, diff)
			}
		})
	}
}

// podSecurityOnly keeps the violations of the Pod Security profile, which name its upstream check.
func podSecurityOnly(vs []Violation) []Violation {
	var out []Violation
	for _, v := range vs {
		if strings.Contains(v.Message, `(Pod Security Standards "restricted": `) {
			out = append(out, v)
		}
	}
	return out
}

func assertPodSecurityMessages(t *testing.T, vs []Violation) {
	t.Helper()
	for _, v := range vs {
		if !strings.Contains(v.Message, `(Pod Security Standards "restricted": `) {
			t.Errorf("violation %v does not name the failed upstream check", v)
		}
		if !strings.Contains(v.Message, "set") && !strings.Contains(v.Message, "remove") && !strings.Contains(v.Message, "use") {
			t.Errorf("violation %v does not say what to change", v)
		}
	}
}

// fakeEvaluator refuses every pod for a reason no locator knows, as a future upstream check
// might.
type fakeEvaluator struct{}

func (fakeEvaluator) EvaluatePod(api.LevelVersion, *metav1.ObjectMeta, *corev1.PodSpec) []psa.CheckResult {
	return []psa.CheckResult{{Allowed: true}, {ForbiddenReason: "new check", ForbiddenDetail: `container "main" must not`}}
}

func TestPodSecurityFallsBackToThePodSpec(t *testing.T) {
	c := mustChecker(t, Config{})
	c.evaluator = fakeEvaluator{}
	res := c.Check(tenantRequest(workloads[2].wrap(fromYAML(t, goodPodSpec))))
	want := []Violation{{Document: 0, Kind: "CronJob", Name: "cj", Field: "spec.jobTemplate.spec.template.spec",
		Message: `the pod breaks the Pod Security Standards "restricted" profile: new check (container "main" must not)`}}
	if diff := cmp.Diff(want, res.Violations); diff != "" {
		t.Errorf("Check(CronJob) with an unlocatable upstream refusal (-want +got):\n%s", diff)
	}
}
