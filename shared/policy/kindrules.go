package policy

import corev1 "k8s.io/api/core/v1"

// The rules of particular kinds, beyond what every manifest is held to.

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

// checkSecret refuses a service-account token Secret, where an operator allows Secrets: the
// cluster would fill it with a token for whichever service account it names.
func checkSecret(s *corev1.Secret, r *report) {
	if s.Type == corev1.SecretTypeServiceAccountToken {
		r.addf("type", msgSecretType, s.Type)
	}
}
