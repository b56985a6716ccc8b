package policy

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// What the API server refuses in a container's image and resources. A manifest that breaks
// these is admitted by nothing else here, yet fails only when dispatch applies it, after it has
// held a place in the queue and a share of the region's capacity.

// checkImagePresent refuses a container without an image, or with white space around it, as
// the API server does for containers, init containers and ephemeral containers alike (the
// white space only for the first two: an ephemeral container's image is checked for presence
// alone). path is where the container sits, made only if something is reported.
func checkImagePresent(image string, ephemeral bool, path func() string, r *report) {
	switch {
	case image == "":
		r.add(path()+".image", msgImageRequired)
	case !ephemeral && strings.TrimSpace(image) != image:
		r.addf(path()+".image", msgImageSpace, image)
	}
}

// checkEphemeralImages holds the pod's ephemeral containers to checkImagePresent.
func checkEphemeralImages(p podRef, r *report) {
	s := p.spec
	for i := range s.EphemeralContainers {
		checkImagePresent(s.EphemeralContainers[i].Image, true, func() string { return indexed(p.specPath+".ephemeralContainers", i) }, r)
	}
}

// checkResourceLimits refuses a request for a resource Kubernetes cannot overcommit (any but
// the native ones, and hugepages) without a limit of the same amount: the API server's
// "Limit must be set for non overcommitable resources" and "must be equal to … limit of …".
// A limit alone is fine: the request defaults to it. Requests are visited in name order so
// that the same manifest always reports the same list.
func checkResourceLimits(res *corev1.ResourceRequirements, path func() string, r *report) {
	var names []corev1.ResourceName
	for name := range res.Requests {
		if !overcommitAllowed(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		request := res.Requests[name]
		limit, limited := res.Limits[name]
		switch {
		case !limited:
			r.addf(path()+".resources.limits["+string(name)+"]", msgResourceNoLimit, name, request.String(), name, request.String())
		case request.Cmp(limit) != 0:
			r.addf(path()+".resources.requests["+string(name)+"]", msgResourceUnequal, name, request.String(), limit.String(), name, limit.String())
		}
	}
}

// overcommitAllowed is the API server's helper of the same name: a native resource (a name
// without a domain, or one in kubernetes.io) other than hugepages may be requested below its
// limit; an extended resource such as nvidia.com/gpu, and hugepages, may not.
func overcommitAllowed(name corev1.ResourceName) bool {
	s := string(name)
	native := !strings.Contains(s, "/") || strings.Contains(s, corev1.ResourceDefaultNamespacePrefix)
	return native && !strings.HasPrefix(s, corev1.ResourceHugePagesPrefix)
}
