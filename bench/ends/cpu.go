package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// clockTicks is Linux's USER_HZ, the unit of /proc/<pid>/stat's CPU times: 100 on every
// architecture Go builds for.
const clockTicks = 100

// cpuTimes is the CPU time each running command has used so far, by its name (/proc/<pid>/stat's
// comm: java for DynamoDB Local, node for the SQS and S3 stand-in, kube-apiserver, etcd, kwok, …).
// A process that ends between two readings is not counted in their difference.
func cpuTimes() map[string]time.Duration {
	out := map[string]time.Duration{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// pid (comm) state ppid … utime stime: comm may hold spaces, so split after its ')'.
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		fields := strings.Fields(s[end+1:])
		if len(fields) < 13 {
			continue
		}
		utime, err1 := strconv.ParseInt(fields[11], 10, 64)
		stime, err2 := strconv.ParseInt(fields[12], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		out[s[open+1:end]] += time.Duration(utime+stime) * time.Second / clockTicks
	}
	return out
}

// cpuSince is the CPU time each command used from before to after.
func cpuSince(before, after map[string]time.Duration) map[string]time.Duration {
	out := map[string]time.Duration{}
	for name, t := range after {
		if d := t - before[name]; d > 0 {
			out[name] = d
		}
	}
	return out
}

// printCPU prints the CPU time per job that each command spent in a run of n jobs, the busiest
// first, and in all.
func printCPU(w io.Writer, what string, used map[string]time.Duration, n int) {
	var total time.Duration
	for _, d := range used {
		total += d
	}
	names := slices.SortedFunc(maps.Keys(used), func(a, b string) int { return cmp.Compare(used[b], used[a]) })
	var parts []string
	for _, name := range names {
		if per := used[name] / time.Duration(n); per >= time.Millisecond {
			parts = append(parts, fmt.Sprintf("%s %s", name, per.Round(time.Millisecond)))
		}
	}
	fmt.Fprintf(w, "- CPU a job, %s: %s in all (%s)\n", what, (total / time.Duration(n)).Round(time.Millisecond), strings.Join(parts, ", "))
}

// clusterCommands are the commands of the sandbox's cluster (/proc's comm, at most 15 bytes):
// what would run on the cluster's own machines in AWS, where DynamoDB, SQS and the functions
// do not.
var clusterCommands = []string{"etcd", "kube-apiserver", "kube-controller", "kube-scheduler", "kwok"}

// clusterCPU is the CPU time the cluster's commands took of used.
func clusterCPU(used map[string]time.Duration) time.Duration {
	var total time.Duration
	for name, d := range used {
		if slices.ContainsFunc(clusterCommands, func(c string) bool { return strings.HasPrefix(name, c) }) {
			total += d
		}
	}
	return total
}
