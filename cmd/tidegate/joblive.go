package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tidegate/tidegate/shared/apiclient"
)

func jobsLogsCmd(s *session) *cobra.Command {
	var o apiclient.LogOptions
	var follow bool
	cmd := &cobra.Command{
		Use:   "logs ID",
		Short: "Print a job's logs: its newest pod's, or the tail kept on the job once its pods are gone",
		Example: `  tidegate jobs logs job-01… --tail 50
  tidegate jobs logs job-01… -f`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeJobs(s),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, c, err := s.open(cmd)
			if err != nil {
				return err
			}
			if follow {
				if p.scripted() {
					return fmt.Errorf("-f prints lines as they come; it takes no -o")
				}
				return followLogs(cmd.Context(), p, c, args[0], o)
			}
			logs, err := c.JobLogs(cmd.Context(), args[0], o)
			if err != nil {
				return err
			}
			return p.emit(logs, func() {
				if logs.From == "record" {
					p.note("the job's pods are gone; these are the last lines kept when it ended")
				}
				for _, l := range logs.Lines {
					p.line("%s", l)
				}
			})
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&follow, "follow", "f", false, "keep printing new lines until the job ends")
	f.IntVar(&o.Tail, "tail", 0, "only the last this many lines (1–10000)")
	f.StringVarP(&o.Container, "container", "c", "", "the container whose logs to read (the pod's first by default)")
	f.BoolVarP(&o.Previous, "previous", "p", false, "the previous run of a restarted container")
	f.IntVar(&o.SinceSeconds, "since-seconds", 0, "only lines written in the last this many seconds")
	return cmd
}

func jobsEventsCmd(s *session) *cobra.Command {
	return jobCmd(s, "events ID", "List the cluster's events about a job's objects and pods",
		func(cmd *cobra.Command, p *printer, c *apiclient.Client, id string) error {
			evs, err := c.JobEvents(cmd.Context(), id)
			if err != nil {
				return err
			}
			sort.SliceStable(evs, func(i, k int) bool { return evs[i].LastSeen.Before(evs[k].LastSeen) })
			return p.emit(apiclient.Items[apiclient.Event]{Items: evs}, func() {
				t := &table{header: []string{"LAST SEEN", "TYPE", "REASON", "OBJECT", "COUNT", "MESSAGE"}}
				for _, e := range evs {
					typ := plain(e.Type)
					if e.Type == "Warning" {
						typ.color = colorYellow
					}
					t.add(plain(p.age(e.LastSeen)), typ, plain(e.Reason), plain(e.Object), plain(strconv.Itoa(e.Count)), plain(e.Message))
				}
				p.print(t)
			})
		})
}

func jobsPodsCmd(s *session) *cobra.Command {
	return jobCmd(s, "pods ID", "List a job's pods, live from its cluster",
		func(cmd *cobra.Command, p *printer, c *apiclient.Client, id string) error {
			pods, err := c.JobPods(cmd.Context(), id)
			if err != nil {
				return err
			}
			return p.emit(apiclient.Items[apiclient.Pod]{Items: pods}, func() {
				t := &table{header: []string{"NAME", "PHASE", "READY", "RESTARTS", "NODE", "WHY"}}
				for _, pod := range pods {
					ready, restarts := 0, 0
					for _, c := range pod.Containers {
						if c.Ready {
							ready++
						}
						restarts += c.RestartCount
					}
					phase := stateCell(strings.ToLower(pod.Phase))
					phase.text = pod.Phase
					t.add(plain(pod.Name), phase, plain(fmt.Sprintf("%d/%d", ready, len(pod.Containers))),
						plain(strconv.Itoa(restarts)), plain(pod.NodeName), plain(podWhy(pod)))
				}
				p.print(t)
			})
		})
}

// podWhy is the first reason a pod gives for not being ready: a condition's or a container's.
func podWhy(pod apiclient.Pod) string {
	for _, c := range pod.Containers {
		for _, st := range []string{"waiting", "terminated"} {
			if m, ok := c.State[st].(map[string]any); ok {
				if r, _ := m["reason"].(string); r != "" && r != "Completed" {
					return c.Name + ": " + r
				}
			}
		}
	}
	for _, c := range pod.Conditions {
		if c.Status == "False" && c.Reason != "" {
			return c.Type + ": " + c.Reason
		}
	}
	return ""
}
