package apps

import (
	"strings"
	"time"
)

// Revive is one time the beat ran a host that served again after its process exited or stayed
// unready past its limit, with the
// host's last lines as they were then: what its owner needs to see why it crashed, kept on the
// app's record once the pod that printed them is gone.
type Revive struct {
	Host    string `json:"host" dynamodbav:"host"`
	Release int    `json:"release" dynamodbav:"release"`
	// Verdict says why the host was run again: it exited, or it stayed unready (unhealthy).
	Verdict string    `json:"verdict,omitempty" dynamodbav:"verdict,omitempty"`
	At      time.Time `json:"at" dynamodbav:"at"`
	Lines   []string  `json:"lines" dynamodbav:"lines"`
}

// What the app's record keeps of its revives: the last five (as many as the crash window allows
// a host before its release fails), each with its host's last 50 lines within 4 KiB. Five of
// them are 20 KiB at most, small beside DynamoDB's 400 KB item.
const (
	KeptRevives     = 5
	KeptReviveLines = 50
	keptReviveBytes = 4 << 10
)

// KeepRevive answers kept with r added, newest last: the last KeptRevives of them, and of r's
// lines the last KeptReviveLines within 4 KiB, whole lines only (but a single line longer than
// that keeps its tail), in valid UTF-8 (DynamoDB stores no other).
func KeepRevive(kept []Revive, r Revive) []Revive {
	r.Lines = lastLines(r.Lines, KeptReviveLines, keptReviveBytes)
	out := append(append([]Revive(nil), kept...), r)
	return out[max(0, len(out)-KeptRevives):]
}

// lastLines is the tail of lines: at most n lines and size bytes (their newlines counted).
func lastLines(lines []string, n, size int) []string {
	lines = lines[max(0, len(lines)-n):]
	out := []string{}
	room := size
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.ToValidUTF8(lines[i], "")
		if len(l)+1 > room {
			if len(out) == 0 {
				out = append(out, strings.ToValidUTF8(l[len(l)-(room-1):], ""))
			}
			break
		}
		room -= len(l) + 1
		out = append(out, l)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// LastRevive is the newest revive kept of release, if any.
func (a App) LastRevive(release int) (Revive, bool) {
	for i := len(a.Revives) - 1; i >= 0; i-- {
		if a.Revives[i].Release == release {
			return a.Revives[i], true
		}
	}
	return Revive{}, false
}
