package policy

import (
	"strings"
)

// checkImages reports every image, in any container position or image volume, that is not
// under one of the trusted registry prefixes. With no prefixes configured, any image may run.
func (c *Checker) checkImages(p podRef, r *report) {
	if len(c.registries) == 0 {
		return
	}
	s := p.spec
	for i := range s.InitContainers {
		c.checkImage(s.InitContainers[i].Image, p.specPath+".initContainers", i, ".image", r)
	}
	for i := range s.Containers {
		c.checkImage(s.Containers[i].Image, p.specPath+".containers", i, ".image", r)
	}
	for i := range s.EphemeralContainers {
		c.checkImage(s.EphemeralContainers[i].Image, p.specPath+".ephemeralContainers", i, ".image", r)
	}
	for i := range s.Volumes {
		if v := s.Volumes[i].Image; v != nil {
			c.checkImage(v.Reference, p.specPath+".volumes", i, ".image.reference", r)
		}
	}
}

// checkImage reports image unless it is trusted; the field is list[i]+rest, built only then. A
// container without an image is the API server's checks' to report (checkImagePresent), once.
func (c *Checker) checkImage(image, list string, i int, rest string, r *report) {
	if image == "" {
		if rest != ".image" {
			r.addf(indexed(list, i)+rest, msgNoImage, c.trustedText)
		}
		return
	}
	full := qualifyImage(image)
	for _, prefix := range c.registries {
		if underPrefix(full, prefix) {
			return
		}
	}
	r.addf(indexed(list, i)+rest, msgUntrusted, image, full, c.trustedText)
}

// qualifyImage writes an image reference in full, as the container runtime resolves it: a
// reference whose first component is not a registry host is on Docker Hub, and a bare name
// there is an official image, so "nginx:1.27" is docker.io/library/nginx:1.27.
func qualifyImage(ref string) string {
	host, rest, found := strings.Cut(ref, "/")
	if found && isRegistryHost(host) && host != "index.docker.io" && (host != "docker.io" || strings.Contains(rest, "/")) {
		return ref // already in full
	}
	if !found || !isRegistryHost(host) {
		rest = ref
	}
	if !strings.Contains(rest, "/") {
		rest = "library/" + rest
	}
	return "docker.io/" + rest
}

// isRegistryHost applies the Docker reference rule: a first component is a registry host if it
// has a dot or a port, is localhost, or has an upper-case letter (a repository path cannot).
func isRegistryHost(s string) bool {
	return strings.ContainsAny(s, ".:") || s == "localhost" || strings.ToLower(s) != s
}

// underPrefix reports whether a fully qualified image is under prefix, matching whole
// components: the prefix must end where the reference's host, a path component, the tag or the
// digest ends.
func underPrefix(image, prefix string) bool {
	if !strings.HasPrefix(image, prefix) {
		return false
	}
	if len(image) == len(prefix) || strings.HasSuffix(prefix, "/") {
		return true
	}
	return strings.IndexByte("/:@", image[len(prefix)]) >= 0
}
