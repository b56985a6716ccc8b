package policy

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Locators for the checks that look at the pod as a whole, or at the pod's security context and
// its containers' together.

func locateHostNamespaces(p podRef, _ string) []finding {
	var found []finding
	for _, h := range []struct {
		on          bool
		field, name string
	}{{p.spec.HostNetwork, "hostNetwork", "network"}, {p.spec.HostPID, "hostPID", "PID"}, {p.spec.HostIPC, "hostIPC", "IPC"}} {
		if h.on {
			found = append(found, finding{p.specPath + "." + h.field, fmt.Sprintf(msgHostNamespace, h.name, h.field)})
		}
	}
	return found
}

// restrictedVolumeSources are the volume sources the restricted profile allows.
var restrictedVolumeSources = []string{"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "image", "persistentVolumeClaim", "projected", "secret"}

// volumeSourceFields are VolumeSource's fields by JSON name, read once.
var volumeSourceFields = func() []string {
	t := reflect.TypeFor[corev1.VolumeSource]()
	names := make([]string, t.NumField())
	for i := range names {
		names[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	return names
}()

func locateVolumes(p podRef, _ string) []finding {
	var found []finding
	for i := range p.spec.Volumes {
		v := &p.spec.Volumes[i]
		src := reflect.ValueOf(&v.VolumeSource).Elem()
		var bad []string
		allowed := false
		for j, name := range volumeSourceFields {
			if src.Field(j).IsNil() {
				continue
			}
			if slices.Contains(restrictedVolumeSources, name) {
				allowed = true
			} else {
				bad = append(bad, name)
			}
		}
		path := indexed(p.specPath+".volumes", i)
		switch {
		case allowed:
		case len(bad) == 0:
			found = append(found, finding{path, fmt.Sprintf(msgVolumeNoSource, v.Name)})
		default:
			found = append(found, finding{path + "." + bad[0], fmt.Sprintf(msgVolumeType, v.Name, bad[0])})
		}
	}
	return found
}

func locateRunAsNonRoot(p podRef, _ string) []finding {
	var found []finding
	podTrue := false
	securityContextSetters(p,
		func(sc *corev1.PodSecurityContext, path string) {
			if sc.RunAsNonRoot != nil && !*sc.RunAsNonRoot {
				found = append(found, finding{path + ".runAsNonRoot", fmt.Sprintf(msgRunAsNonRootFalse, podSubject)})
			}
			podTrue = sc.RunAsNonRoot != nil && *sc.RunAsNonRoot
		},
		func(c *corev1.Container, sc *corev1.SecurityContext, path string) {
			if sc.RunAsNonRoot != nil && !*sc.RunAsNonRoot {
				found = append(found, finding{path + ".runAsNonRoot", fmt.Sprintf(msgRunAsNonRootFalse, containerSubject(c))})
			}
		})
	if len(found) > 0 || podTrue {
		// As the evaluator does: an explicit false is reported before any unset one.
		return found
	}
	var unset []string
	eachContainer(p, func(c *corev1.Container, _ string) {
		if c.SecurityContext == nil || c.SecurityContext.RunAsNonRoot == nil {
			unset = append(unset, c.Name)
		}
	})
	if len(unset) > 0 {
		found = append(found, finding{p.specPath + ".securityContext.runAsNonRoot", fmt.Sprintf(msgRunAsNonRootUnset, containersSubject(unset))})
	}
	return found
}

func locateRunAsUser(p podRef, _ string) []finding {
	var found []finding
	securityContextSetters(p,
		func(sc *corev1.PodSecurityContext, path string) {
			if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
				found = append(found, finding{path + ".runAsUser", fmt.Sprintf(msgRunAsUserRoot, podSubject)})
			}
		},
		func(c *corev1.Container, sc *corev1.SecurityContext, path string) {
			if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
				found = append(found, finding{path + ".runAsUser", fmt.Sprintf(msgRunAsUserRoot, containerSubject(c))})
			}
		})
	return found
}

func validSeccomp(sp *corev1.SeccompProfile) bool {
	return sp.Type == corev1.SeccompProfileTypeRuntimeDefault || sp.Type == corev1.SeccompProfileTypeLocalhost
}

func locateSeccomp(p podRef, _ string) []finding {
	var found []finding
	podSet := false
	securityContextSetters(p,
		func(sc *corev1.PodSecurityContext, path string) {
			if sp := sc.SeccompProfile; sp != nil {
				podSet = validSeccomp(sp)
				if !podSet {
					found = append(found, finding{path + ".seccompProfile.type", fmt.Sprintf(msgSeccompType, podSubject, sp.Type)})
				}
			}
		},
		func(c *corev1.Container, sc *corev1.SecurityContext, path string) {
			if sp := sc.SeccompProfile; sp != nil && !validSeccomp(sp) {
				found = append(found, finding{path + ".seccompProfile.type", fmt.Sprintf(msgSeccompType, containerSubject(c), sp.Type)})
			}
		})
	if len(found) > 0 || podSet {
		return found
	}
	var unset []string
	eachContainer(p, func(c *corev1.Container, _ string) {
		if c.SecurityContext == nil || c.SecurityContext.SeccompProfile == nil {
			unset = append(unset, c.Name)
		}
	})
	if len(unset) > 0 {
		found = append(found, finding{p.specPath + ".securityContext.seccompProfile.type", fmt.Sprintf(msgSeccompUnset, containersSubject(unset))})
	}
	return found
}

func validAppArmor(ap *corev1.AppArmorProfile) bool {
	return ap.Type == corev1.AppArmorProfileTypeRuntimeDefault || ap.Type == corev1.AppArmorProfileTypeLocalhost
}

func locateAppArmor(p podRef, _ string) []finding {
	var found []finding
	securityContextSetters(p,
		func(sc *corev1.PodSecurityContext, path string) {
			if ap := sc.AppArmorProfile; ap != nil && !validAppArmor(ap) {
				found = append(found, finding{path + ".appArmorProfile.type", fmt.Sprintf(msgAppArmorType, podSubject, ap.Type)})
			}
		},
		func(c *corev1.Container, sc *corev1.SecurityContext, path string) {
			if ap := sc.AppArmorProfile; ap != nil && !validAppArmor(ap) {
				found = append(found, finding{path + ".appArmorProfile.type", fmt.Sprintf(msgAppArmorType, containerSubject(c), ap.Type)})
			}
		})
	var keys []string
	for k, v := range p.meta.Annotations {
		allowed := v == "" || v == corev1.DeprecatedAppArmorBetaProfileRuntimeDefault || strings.HasPrefix(v, corev1.DeprecatedAppArmorBetaProfileNamePrefix)
		if strings.HasPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix) && !allowed {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		found = append(found, finding{p.metaPath + ".annotations[" + k + "]", fmt.Sprintf(msgAppArmorAnnotation, p.meta.Annotations[k])})
	}
	return found
}

// seLinuxTypes are the SELinux types the evaluator allows at its latest version.
var seLinuxTypes = []string{"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}

func locateSELinux(p podRef, _ string) []finding {
	var found []finding
	check := func(subject string, o *corev1.SELinuxOptions, path string) {
		if o == nil {
			return
		}
		path += ".seLinuxOptions"
		if !slices.Contains(seLinuxTypes, o.Type) {
			found = append(found, finding{path + ".type", fmt.Sprintf(msgSELinuxType, subject, o.Type)})
		}
		if o.User != "" {
			found = append(found, finding{path + ".user", fmt.Sprintf(msgSELinuxUser, subject)})
		}
		if o.Role != "" {
			found = append(found, finding{path + ".role", fmt.Sprintf(msgSELinuxRole, subject)})
		}
	}
	securityContextSetters(p,
		func(sc *corev1.PodSecurityContext, path string) { check(podSubject, sc.SELinuxOptions, path) },
		func(c *corev1.Container, sc *corev1.SecurityContext, path string) {
			check(containerSubject(c), sc.SELinuxOptions, path)
		})
	return found
}

// locateSysctls takes the forbidden names from the evaluator's detail (it lists exactly them),
// because the safe set grows with each Kubernetes version.
func locateSysctls(p podRef, detail string) []finding {
	sc := p.spec.SecurityContext
	if sc == nil {
		return nil
	}
	forbidden := strings.Split(detail, ", ")
	var found []finding
	for i, s := range sc.Sysctls {
		if slices.Contains(forbidden, s.Name) {
			found = append(found, finding{indexed(p.specPath+".securityContext.sysctls", i) + ".name", fmt.Sprintf(msgSysctl, s.Name)})
		}
	}
	return found
}

func locateHostProcess(p podRef, _ string) []finding {
	var found []finding
	hostProcess := func(w *corev1.WindowsSecurityContextOptions) bool {
		return w != nil && w.HostProcess != nil && *w.HostProcess
	}
	securityContextSetters(p,
		func(sc *corev1.PodSecurityContext, path string) {
			if hostProcess(sc.WindowsOptions) {
				found = append(found, finding{path + ".windowsOptions.hostProcess", fmt.Sprintf(msgHostProcess, podSubject)})
			}
		},
		func(c *corev1.Container, sc *corev1.SecurityContext, path string) {
			if hostProcess(sc.WindowsOptions) {
				found = append(found, finding{path + ".windowsOptions.hostProcess", fmt.Sprintf(msgHostProcess, containerSubject(c))})
			}
		})
	return found
}
