package apps

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// An org's secrets reach its hosts as environment variables, so their names are shaped like one.
// 128 characters is far past any real variable's name and keeps a listing small.
const (
	MaxSecretName = 128
	// MaxSecretValue bounds one value: a PEM key with its chain fits in 16 KiB.
	MaxSecretValue = 16 << 10
	// MaxSecrets bounds an org's secrets: every value goes into one Kubernetes Secret per host,
	// which etcd caps at 1 MiB, and 50 values of 16 KiB leave room for the rest of it.
	MaxSecrets = 50
	// reservedPrefix is what Tidegate names its own variables with (a host's token, say).
	reservedPrefix = "TIDEGATE_"
)

var envName = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)

// CheckSecretName reports what is wrong with a secret's name, or nil.
func CheckSecretName(name string) error {
	switch {
	case len(name) > MaxSecretName || !envName.MatchString(name):
		return fmt.Errorf("must look like an environment variable: uppercase letters, digits and '_', not starting with a digit, at most %d characters", MaxSecretName)
	case strings.HasPrefix(name, reservedPrefix):
		return fmt.Errorf("must not start with %s: Tidegate sets those variables itself", reservedPrefix)
	}
	return nil
}

// CheckSecretValue reports what is wrong with a secret's value, or nil. The value itself never
// appears in the answer.
func CheckSecretValue(value string) error {
	switch {
	case len(value) > MaxSecretValue:
		return fmt.Errorf("is %d bytes; at most %d (16 KiB)", len(value), MaxSecretValue)
	case strings.ContainsRune(value, 0):
		return fmt.Errorf("holds a NUL character, which no environment variable can carry")
	}
	return nil
}

// SecretBinding is what a secret's sealed value is bound to, so that it opens only as that org's
// secret of that name: a sealed value copied to another name or org does not open.
func SecretBinding(org, name string) string { return org + "/" + name }

// SecretsDigest is what an org's secrets add to its hosts' names: the SHA-256 over each secret's
// name and fingerprint, sorted by name. An org without secrets has the digest of nothing.
func SecretsDigest(fingerprints map[string]string) string {
	h := sha256.New()
	for _, name := range slices.Sorted(maps.Keys(fingerprints)) {
		h.Write([]byte(name + "\x00" + fingerprints[name] + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}
