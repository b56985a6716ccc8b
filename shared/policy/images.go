package policy

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// checkImages reports every image, in any container position or image volume, that is not
// under one of the trusted registry prefixes. With no prefixes configured, any image may run.
func (c *Checker) checkImages(p podRef, r *report) {
	if len(c.registries) == 0 {
		return
	}
	eachContainer(p, func(ct *corev1.Container, path string) {
		c.checkImage(ct.Image, path+".image", r)
	})
	for i, v := range p.spec.Volumes {
		if v.Image != nil {
			c.checkImage(v.Image.Reference, indexed(p.specPath+".volumes", i)+".image.reference", r)
		}
	}
}

func (c *Checker) checkImage(image, field string, r *report) {
	trusted := strings.Join(c.registries, ", ")
	if image == "" {
		r.addf(field, msgNoImage, trusted)
		return
	}
	full := qualifyImage(image)
	for _, prefix := range c.registries {
		if underPrefix(full, prefix) {
			return
		}
	}
	r.addf(field, msgUntrusted, image, full, trusted)
}

// qualifyImage writes an image reference in full, as the container runtime resolves it: a
// reference whose first component is not a registry host is on Docker Hub, and a bare name
// there is an official image, so "nginx:1.27" is docker.io/library/nginx:1.27.
func qualifyImage(ref string) string {
	host, rest, found := strings.Cut(ref, "/")
	if !found || !isRegistryHost(host) {
		host, rest = "docker.io", ref
	}
	if host == "index.docker.io" {
		host = "docker.io"
	}
	if host == "docker.io" && !strings.Contains(rest, "/") {
		rest = "library/" + rest
	}
	return host + "/" + rest
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
