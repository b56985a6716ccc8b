package tenancy

import "strings"

// BearerKey reads an API key from an Authorization header's value, "Bearer <key>" (the scheme
// in any case, as RFC 9110 has it). It reports ok=false for anything else: no header, another
// scheme such as a SigV4 signature, or an empty key. The API and the authorizer read keys with
// it, so they agree on what a key is.
func BearerKey(header string) (key string, ok bool) {
	scheme, key, ok := strings.Cut(header, " ")
	key = strings.TrimSpace(key)
	if !ok || !strings.EqualFold(scheme, "Bearer") || key == "" {
		return "", false
	}
	return key, true
}
