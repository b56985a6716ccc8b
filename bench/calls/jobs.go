package main

import (
	"encoding/base64"
	"fmt"
	"os"

	"github.com/tidegate/tidegate/bench/jobsapi"
)

// jobEvents are the events of a job that runs to success, each delivered to the run's webhook.
var jobEvents = []string{"job.queued", "job.dispatched", "job.started", "job.completed"}

// hookSecret signs the deliveries: 32 bytes, as whsec_ base64.
var hookSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("tidegate-calls-benchmark-secret!"))

// jobName names the run's i-th job.
func jobName(i int) string { return fmt.Sprintf("calls-%d-%d", os.Getpid(), i) }

// jobRequest is the README's first job: one pod that echoes and ends.
func jobRequest(name string) map[string]any {
	return jobsapi.JobRequest(name, map[string]string{"team": "ml"}, nil, "echo", "hi")
}
