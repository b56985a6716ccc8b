package main

import (
	"testing"
	"time"
)

// The emulator's own lines, as aws-lambda-rie wrote them in a run.
const emulatorLog = `30 Nov 2026 05:14:12,421 [INFO] (rapid) INIT START(type: on-demand, phase: init)
30 Nov 2026 05:14:12,438 [INFO] (rapid) INIT RTDONE(status: success)
30 Nov 2026 05:14:12,438 [INFO] (rapid) INIT REPORT(durationMs: 17.002000)
30 Nov 2026 05:14:12,438 [INFO] (rapid) INVOKE START(requestId: fd63f8c0-d3f3-420f-a237-0795760f12c7)
30 Nov 2026 05:14:12,446 [INFO] (rapid) INVOKE RTDONE(status: success, produced bytes: 0, duration: 7.797000ms)
`

func TestReported(t *testing.T) {
	tests := []struct {
		name string
		re   string
		log  string
		want time.Duration
	}{
		{"init", "init", emulatorLog, 17002 * time.Microsecond},
		{"first event", "event", emulatorLog, 7797 * time.Microsecond},
		{"init that failed", "init", "INIT REPORT(durationMs: 2.500000)\nINVOKE RTDONE(status: error, produced bytes: 0, duration: 1.0ms)", 2500 * time.Microsecond},
		{"invocation that failed", "event", "INVOKE RTDONE(status: error, produced bytes: 0, duration: 1.0ms)", 0},
		{"nothing reported", "init", "START RequestId: x", 0},
	}
	for _, tt := range tests {
		re := initReport
		if tt.re == "event" {
			re = invokeReport
		}
		if got := reported(re, []byte(tt.log)); got != tt.want {
			t.Errorf("reported(%s, %s) = %v, want %v", tt.re, tt.name, got, tt.want)
		}
	}
}
