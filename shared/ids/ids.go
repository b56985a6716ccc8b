// Package ids makes identifiers that sort by creation time and are safe as Kubernetes names.
package ids

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"strings"
	"time"
)

// lower is base32 in lowercase without padding: DNS-label safe, and in the same order as the bytes.
var lower = base32.NewEncoding("0123456789abcdefghijklmnopqrstuv").WithPadding(base32.NoPadding)

// New returns prefix + 26 characters: 48 bits of milliseconds since the epoch then 80 random bits,
// as ULIDs lay them out, so ids made later sort later and two made in one millisecond still differ.
func New(prefix string, now time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(now.UnixMilli())<<16)
	_, _ = rand.Read(b[6:])
	return prefix + strings.TrimRight(lower.EncodeToString(b[:]), "=")
}
