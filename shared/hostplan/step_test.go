package hostplan_test

import (
	"strings"
	"testing"

	"github.com/tidegate/tidegate/shared/hostplan"
)

func TestFailedWhy(t *testing.T) {
	tests := []struct {
		failed    hostplan.Failed
		lastLines string
		want      []string // in this order
		not       string
	}{
		{
			failed:    hostplan.Failed{Pod: &hostplan.Container{Name: wanted, ExitCode: 1}, Reason: hostplan.ReasonInstallFailed},
			lastLines: "npm ERR! missing script\n",
			want:      []string{"installing the release failed with exit code 1", "\nits last lines:\nnpm ERR! missing script"},
		},
		{
			failed:    hostplan.Failed{Pod: &hostplan.Container{Name: wanted, ExitCode: 3}, Reason: hostplan.ReasonExited},
			lastLines: "Error: no PORT",
			want:      []string{"exited with code 3 before it registered", "its last lines:\nError: no PORT"},
		},
		{
			failed: hostplan.Failed{Pod: &hostplan.Container{Name: wanted}, Reason: hostplan.ReasonOOMKilled},
			want:   []string{"more memory than a host has", "lower its memory use"},
			not:    "last lines",
		},
		{
			failed:    hostplan.Failed{Pod: &hostplan.Container{Name: wanted}, Reason: hostplan.ReasonNeverRegistered},
			lastLines: "listening on 8080",
			want:      []string{"did not register within 120 s", "POST /api/v1/hosts/{host}/register", "listening on 8080"},
		},
		{
			failed: hostplan.Failed{Pod: &hostplan.Container{Name: wanted}, Reason: hostplan.ReasonCrashLooping},
			want:   []string{"run again 5 times within 10 minutes"},
		},
		{
			failed:    hostplan.Failed{Pod: &hostplan.Container{Name: wanted}, Reason: "something_new"},
			lastLines: "\n\n",
			want:      []string{"(something_new)"},
			not:       "last lines",
		},
	}
	for _, tt := range tests {
		got := tt.failed.Why(tt.lastLines)
		rest := got
		for _, w := range tt.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("%+v.Why(%q) = %q, want it to contain %q after what came before", tt.failed, tt.lastLines, got, w)
				break
			}
			rest = rest[i+len(w):]
		}
		if tt.not != "" && strings.Contains(got, tt.not) {
			t.Errorf("%+v.Why(%q) = %q, want no %q", tt.failed, tt.lastLines, got, tt.not)
		}
	}
}
