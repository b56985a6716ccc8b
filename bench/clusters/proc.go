package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// processNames are a cluster set's servers, as sandbox.Cluster.PIDs names them.
var processNames = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's utime and stime: fixed at 100 by Linux's
// ABI on every architecture Go builds for, whatever the kernel's own HZ.
const clockTicks = 100

// cpuTicks is each process's utime + stime so far, in clockTicks, by name.
func cpuTicks(pids map[string]int) (map[string]int64, error) {
	out := map[string]int64{}
	for _, name := range processNames {
		pid, ok := pids[name]
		if !ok {
			return nil, fmt.Errorf("the cluster has no running %s", name)
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return nil, fmt.Errorf("reading %s's CPU time: %w", name, err)
		}
		// The command name, in parentheses, may hold spaces; the fields after it are fixed:
		// state is field 3, utime 14, stime 15 (proc(5)).
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 13 {
			return nil, fmt.Errorf("/proc/%d/stat (%s) has %d fields after the name, want at least 13", pid, name, len(fields))
		}
		utime, err1 := strconv.ParseInt(fields[11], 10, 64)
		stime, err2 := strconv.ParseInt(fields[12], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("/proc/%d/stat (%s): utime %q, stime %q are not numbers", pid, name, fields[11], fields[12])
		}
		out[name] = utime + stime
	}
	return out, nil
}

// rssMiB is process pid's resident set (VmRSS), in MiB.
func rssMiB(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("reading process %d's memory: %w", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err != nil {
				return 0, fmt.Errorf("process %d's VmRSS %q is not a number of kB", pid, v)
			}
			return kb / 1024, nil
		}
	}
	return 0, fmt.Errorf("process %d's status has no VmRSS line", pid)
}

// loadavg is the machine's 1, 5 and 15 minute load averages, as /proc/loadavg gives them.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// loadNow is the one-minute load average, or 0 when it cannot be read.
func loadNow() float64 {
	f := strings.Fields(loadavg())
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// How often quietMachine looks at the load again: the one-minute average moves little faster.
const loadPoll = 15 * time.Second

// quietMachine waits until the one-minute load average is below maxLoad, or wait has passed, when
// it says the figures that follow were taken under load.
func quietMachine(maxLoad float64, wait time.Duration) {
	deadline := time.Now().Add(wait)
	for loadNow() >= maxLoad {
		if time.Now().After(deadline) {
			fmt.Printf("(the load average is %s, not below %.1f after waiting %s: the next figure is taken under load)\n", loadavg(), maxLoad, wait)
			return
		}
		time.Sleep(loadPoll)
	}
}
