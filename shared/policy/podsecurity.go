package policy

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// podSecurity holds a pod to the Pod Security Standards "restricted" profile. The upstream
// evaluator decides; this package only says where. For each check the evaluator fails, the
// locator for its reason finds the fields at fault and says what to set them to. A locator
// mirrors its check's condition but never admits anything: if it finds nothing (say, an
// upstream check changed), the violation falls back to the pod spec's path with the
// evaluator's own words, so a pod the evaluator refuses is always refused.
func (c *Checker) podSecurity(p podRef, r *report) {
	for _, res := range c.evaluator.EvaluatePod(restricted, p.meta, p.spec) {
		if res.Allowed {
			continue
		}
		var found []finding
		if locate, ok := locators[res.ForbiddenReason]; ok {
			found = locate(p, res.ForbiddenDetail)
		}
		if len(found) == 0 {
			r.addf(p.specPath, msgPodSecurityFallback, res.ForbiddenReason, res.ForbiddenDetail)
			continue
		}
		suffix := fmt.Sprintf(msgPodSecuritySuffix, res.ForbiddenReason)
		for _, f := range found {
			r.add(f.field, f.message+suffix)
		}
	}
}

// finding is one field a failed check is about.
type finding struct {
	field, message string
}

// locators find the fields at fault for each upstream check, by the reason the check gives.
// Checks the restricted profile overrides (hostPath volumes, non-default capabilities) have none
// and fall back.
var locators = map[string]func(p podRef, detail string) []finding{
	"privileged":                        locatePrivileged,
	"host namespaces":                   locateHostNamespaces,
	"restricted volume types":           locateVolumes,
	"runAsNonRoot != true":              locateRunAsNonRoot,
	"runAsUser=0":                       locateRunAsUser,
	"allowPrivilegeEscalation != false": locatePrivilegeEscalation,
	"unrestricted capabilities":         locateCapabilities,
	"seccompProfile":                    locateSeccomp,
	"forbidden AppArmor profile":        locateAppArmor,
	"forbidden AppArmor profiles":       locateAppArmor,
	"seLinuxOptions":                    locateSELinux,
	"forbidden sysctls":                 locateSysctls,
	"hostPort":                          locateHostPorts,
	"procMount":                         locateProcMount,
	"probe or lifecycle host":           locateProbeHosts,
	"hostProcess":                       locateHostProcess,
}

// eachContainer calls fn for every container of the pod, in the evaluator's order (init
// containers, containers, ephemeral containers), with the container's path.
func eachContainer(p podRef, fn func(c *corev1.Container, path string)) {
	s := p.spec
	for i := range s.InitContainers {
		fn(&s.InitContainers[i], indexed(p.specPath+".initContainers", i))
	}
	for i := range s.Containers {
		fn(&s.Containers[i], indexed(p.specPath+".containers", i))
	}
	for i := range s.EphemeralContainers {
		// The evaluator reads an ephemeral container as a Container too: the types share
		// their fields.
		fn((*corev1.Container)(&s.EphemeralContainers[i].EphemeralContainerCommon), indexed(p.specPath+".ephemeralContainers", i))
	}
}

func indexed(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

const podSubject = "the pod"

func containerSubject(c *corev1.Container) string { return fmt.Sprintf("container %q", c.Name) }

// containersSubject names several containers as the evaluator does.
func containersSubject(names []string) string {
	if len(names) == 1 {
		return fmt.Sprintf("container %q", names[0])
	}
	return `containers "` + strings.Join(names, `", "`) + `"`
}

// securityContextSetters calls fn with the pod's security context (subject "the pod") and each
// container's, for the checks that look at both.
func securityContextSetters(p podRef, pod func(sc *corev1.PodSecurityContext, path string), container func(c *corev1.Container, sc *corev1.SecurityContext, path string)) {
	if p.spec.SecurityContext != nil {
		pod(p.spec.SecurityContext, p.specPath+".securityContext")
	}
	eachContainer(p, func(c *corev1.Container, path string) {
		if c.SecurityContext != nil {
			container(c, c.SecurityContext, path+".securityContext")
		}
	})
}
