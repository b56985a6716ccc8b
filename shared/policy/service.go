package policy

import corev1 "k8s.io/api/core/v1"

// checkService holds a Service to the inside of the cluster. NodePort and LoadBalancer would
// open the tenant's pods to the network, ExternalName would point cluster DNS anywhere, and
// externalIPs let a Service capture traffic meant for addresses it does not own
// (CVE-2020-8554), whatever its type.
func checkService(s *corev1.Service, r *report) {
	if t := s.Spec.Type; t != "" && t != corev1.ServiceTypeClusterIP {
		r.addf("spec.type", msgServiceType, t)
	}
	if len(s.Spec.ExternalIPs) > 0 {
		r.add("spec.externalIPs", msgServiceExternalIPs)
	}
}
