package policy

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// Locators for the checks that look at each container alone.

func locatePrivileged(p podRef, _ string) []finding {
	var found []finding
	eachContainer(p, func(c *corev1.Container, path string) {
		if sc := c.SecurityContext; sc != nil && sc.Privileged != nil && *sc.Privileged {
			found = append(found, finding{path + ".securityContext.privileged", fmt.Sprintf(msgPrivileged, containerSubject(c))})
		}
	})
	return found
}

func locatePrivilegeEscalation(p podRef, _ string) []finding {
	var found []finding
	eachContainer(p, func(c *corev1.Container, path string) {
		sc := c.SecurityContext
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			found = append(found, finding{path + ".securityContext.allowPrivilegeEscalation", fmt.Sprintf(msgPrivilegeEscalation, containerSubject(c))})
		}
	})
	return found
}

func locateCapabilities(p podRef, _ string) []finding {
	var found []finding
	eachContainer(p, func(c *corev1.Container, path string) {
		var caps *corev1.Capabilities
		if c.SecurityContext != nil {
			caps = c.SecurityContext.Capabilities
		}
		path += ".securityContext.capabilities"
		droppedAll := false
		if caps != nil {
			for _, d := range caps.Drop {
				droppedAll = droppedAll || d == "ALL"
			}
		}
		if !droppedAll {
			found = append(found, finding{path + ".drop", fmt.Sprintf(msgDropAll, containerSubject(c))})
		}
		if caps == nil {
			return
		}
		for j, a := range caps.Add {
			if a != "NET_BIND_SERVICE" {
				found = append(found, finding{indexed(path+".add", j), fmt.Sprintf(msgAddCapability, containerSubject(c), a)})
			}
		}
	})
	return found
}

func locateHostPorts(p podRef, _ string) []finding {
	var found []finding
	eachContainer(p, func(c *corev1.Container, path string) {
		for j, port := range c.Ports {
			if port.HostPort != 0 {
				found = append(found, finding{indexed(path+".ports", j) + ".hostPort", fmt.Sprintf(msgHostPort, containerSubject(c), port.HostPort)})
			}
		}
	})
	return found
}

func locateProcMount(p podRef, _ string) []finding {
	var found []finding
	eachContainer(p, func(c *corev1.Container, path string) {
		if sc := c.SecurityContext; sc != nil && sc.ProcMount != nil && *sc.ProcMount != corev1.DefaultProcMount {
			found = append(found, finding{path + ".securityContext.procMount", fmt.Sprintf(msgProcMount, containerSubject(c), *sc.ProcMount)})
		}
	})
	return found
}

func locateProbeHosts(p podRef, _ string) []finding {
	var found []finding
	eachContainer(p, func(c *corev1.Container, path string) {
		add := func(what, field string, http *corev1.HTTPGetAction, tcp *corev1.TCPSocketAction) {
			if http != nil && http.Host != "" {
				found = append(found, finding{path + "." + field + ".httpGet.host", fmt.Sprintf(msgProbeHost, containerSubject(c), what, http.Host)})
			}
			if tcp != nil && tcp.Host != "" {
				found = append(found, finding{path + "." + field + ".tcpSocket.host", fmt.Sprintf(msgProbeHost, containerSubject(c), what, tcp.Host)})
			}
		}
		for _, pr := range []struct {
			field string
			probe *corev1.Probe
		}{{"livenessProbe", c.LivenessProbe}, {"readinessProbe", c.ReadinessProbe}, {"startupProbe", c.StartupProbe}} {
			if pr.probe != nil {
				add(pr.field, pr.field, pr.probe.HTTPGet, pr.probe.TCPSocket)
			}
		}
		if c.Lifecycle == nil {
			return
		}
		for _, h := range []struct {
			field   string
			handler *corev1.LifecycleHandler
		}{{"postStart", c.Lifecycle.PostStart}, {"preStop", c.Lifecycle.PreStop}} {
			if h.handler != nil {
				add(h.field+" hook", "lifecycle."+h.field, h.handler.HTTPGet, h.handler.TCPSocket)
			}
		}
	})
	return found
}
