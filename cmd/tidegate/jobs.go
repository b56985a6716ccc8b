package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/tidegate/tidegate/shared/apiclient"
)

func jobsCmd(s *session) *cobra.Command {
	return apiGroup(s, "jobs", "Submit, follow and manage batch jobs",
		jobsSubmitCmd(s), jobsListCmd(s), jobsGetCmd(s), jobsLogsCmd(s), jobsEventsCmd(s), jobsPodsCmd(s),
		jobsDeleteCmd(s), jobsRetryCmd(s), jobsBulkDeleteCmd(s), jobsWhyCmd(s))
}

// submitFlags are the settings of a job that `jobs submit` and `templates run` share.
type submitFlags struct {
	region, namespace string
	regions           []string
	priority          int
	labels            []string
	maxSpotPrice      float64
	spotType          string
	spotDeadline      string
	onDeadline        string
	idempotencyKey    string
	wait              bool
	dependsOn         []string // ID or ID:CONDITION
	array             int      // children, 0 for a single job
	parallelism       int
	onRegionLost      string
}

func (f *submitFlags) add(s *session, cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.region, "region", "", "the region to run in (the API's first region when left out of a manifests submission)")
	fl.StringVarP(&f.namespace, "namespace", "n", "", "the namespace to run in (else the manifests' metadata.namespace)")
	fl.IntVar(&f.priority, "priority", 50, "0–100; higher runs first")
	fl.StringArrayVarP(&f.labels, "label", "l", nil, "a label k=v for finding the job again; repeat for more")
	fl.Float64Var(&f.maxSpotPrice, "max-spot-price", 0, "hold the job until the spot price is at most this many dollars an hour")
	fl.StringVar(&f.spotType, "spot-instance-type", "", "the instance type whose spot price --max-spot-price caps, e.g. g5.xlarge")
	fl.StringVar(&f.spotDeadline, "spot-deadline", "", "stop waiting for the spot price after this long (30s, 2h) or at this RFC 3339 time")
	fl.StringVar(&f.onDeadline, "on-deadline", "", "what the job does if the price still holds it at --spot-deadline: on_demand or fail (the default)")
	fl.StringVar(&f.idempotencyKey, "idempotency-key", "", "send the same key again to get the same job, not a second one")
	fl.BoolVarP(&f.wait, "wait", "w", false, "follow the job until it ends; exit non-zero unless it succeeded")
	fl.IntVar(&f.array, "array", 0, "run it as an array of this many children (2–10,000), each with TIDEGATE_ARRAY_INDEX")
	fl.IntVar(&f.parallelism, "parallelism", 0, "with --array, at most this many children queued or running at once (default all)")
	fl.StringArrayVar(&f.dependsOn, "depends-on", nil, "a job ID this one waits for, as ID (its success) or ID:succeeded, ID:failed or ID:ended, and with --array ID:CONDITION:n_to_n (child i waits for child i of that array); repeat for more")
	fl.StringVar(&f.onRegionLost, "on-region-lost", "", "requeue: if its region's cluster is lost while the job runs there, run it again in another of --regions (the lost attempt is fenced); empty waits for the region")
	fl.StringSliceVar(&f.regions, "regions", nil, "instead of --region, the regions it may run in (a,b): each drain sends it to the cheapest open one with room")
	_ = cmd.RegisterFlagCompletionFunc("region", completeRegions(s))
	_ = cmd.RegisterFlagCompletionFunc("namespace", cobra.NoFileCompletions)
}

// settings reports whether any flag only POST /api/v1/jobs takes was given.
func (f *submitFlags) settings(cmd *cobra.Command) bool {
	fl := cmd.Flags()
	return fl.Changed("priority") || len(f.labels) > 0 || fl.Changed("max-spot-price") || fl.Changed("spot-instance-type") ||
		f.spotDeadline != "" || f.onDeadline != "" || len(f.dependsOn) > 0 || f.array != 0 || f.parallelism != 0 || f.onRegionLost != ""
}

// arrayShape is --array and --parallelism as the API takes them; nil without --array.
func (f *submitFlags) arrayShape() *apiclient.Array {
	if f.array == 0 && f.parallelism == 0 {
		return nil
	}
	return &apiclient.Array{Size: f.array, Parallelism: f.parallelism}
}

// dependencies reads --depends-on: ID, ID:CONDITION or ID:CONDITION:MODE. The API checks the condition and that
// each job is the caller's.
func (f *submitFlags) dependencies() []apiclient.Dependency {
	out := make([]apiclient.Dependency, 0, len(f.dependsOn))
	for _, d := range f.dependsOn {
		id, rest, _ := strings.Cut(d, ":")
		on, mode, _ := strings.Cut(rest, ":")
		out = append(out, apiclient.Dependency{Job: id, On: on, Mode: mode})
	}
	return out
}

func (f *submitFlags) priorityPtr(cmd *cobra.Command) *int {
	if cmd.Flags().Changed("priority") {
		return &f.priority
	}
	return nil
}

func (f *submitFlags) spotPtr(cmd *cobra.Command) *float64 {
	if cmd.Flags().Changed("max-spot-price") {
		return &f.maxSpotPrice
	}
	return nil
}

func jobsSubmitCmd(s *session) *cobra.Command {
	var f submitFlags
	var file string
	var dryRun, whatIf bool
	cmd := &cobra.Command{
		Use:   "submit -f FILE|-",
		Short: "Submit a job from Kubernetes manifests (YAML or JSON, one or more documents)",
		Long: `Submits the manifests in FILE (or standard input with -f -) as one job. The admission policy
checks them first; a refusal names each field to change. With --priority, --label or a spot cap
the file must hold one manifest; so with --depends-on, which keeps the job blocked until the
jobs it names end as asked (their success, unless ID:failed or ID:ended says otherwise). --dry-run shows the decision and stores nothing; --wait follows
the job to its end and exits non-zero unless it succeeded.`,
		Example: `  tidegate jobs submit -f examples/job.yaml --wait
  tidegate jobs submit -f job.yaml --region us-west-2 --priority 80 --label team=ml
  tidegate jobs submit -f job.yaml --max-spot-price 0.40 --spot-instance-type g5.xlarge
  tidegate jobs submit -f train.yaml --depends-on job-0abc   # blocked until job-0abc succeeds
  tidegate jobs submit -f shard.yaml --array 1000 --parallelism 50
  tidegate jobs submit -f job.yaml --dry-run       # the policy's decision; nothing is stored
  tidegate jobs submit -f job.yaml --regions us-east-1,us-west-2 --what-if   # each region's admission now; nothing is stored`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := s.printer(cmd)
			if err != nil {
				return err
			}
			body, err := readInput(cmd, file)
			if err != nil {
				return err
			}
			c, err := s.client(cmd.Context())
			if err != nil {
				return err
			}
			mr := apiclient.ManifestsRequest{YAML: body, Namespace: f.namespace, Region: f.region, Regions: f.regions}
			if dryRun {
				return showDryRun(cmd, p, c, mr)
			}
			if whatIf {
				jr, err := f.jobRequest(cmd, body)
				if err != nil {
					return err
				}
				wi, err := c.WhatIfJob(cmd.Context(), jr)
				if err != nil {
					return err
				}
				return p.emit(wi, func() { printWhatIf(p, wi) })
			}
			var job apiclient.Job
			if f.settings(cmd) {
				jr, err := f.jobRequest(cmd, body)
				if err != nil {
					return err
				}
				job, err = c.SubmitJob(cmd.Context(), jr, f.idempotencyKey)
				if err != nil {
					return err
				}
			} else if job, err = c.SubmitManifests(cmd.Context(), mr, f.idempotencyKey); err != nil {
				return err
			}
			return submitted(cmd, p, c, job, f.wait)
		},
	}
	cmd.Flags().StringVarP(&file, "filename", "f", "", "the manifests: a YAML or JSON file, or - for standard input (required)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "show what the admission policy decides; store nothing")
	cmd.Flags().BoolVar(&whatIf, "what-if", false, "run the whole admission in each region the job may run in and show what each would decide now (admitted on which flavor, or why it would wait and where it would stand, your quota, the spot price); store nothing")
	f.add(s, cmd)
	_ = cmd.MarkFlagRequired("filename")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	return cmd
}

// maxInput bounds what is read from a file or standard input: the API takes at most 1 MiB of
// manifests, and a little more lets it say so itself.
const maxInput = 2 << 20

// readInput reads FILE, or standard input for "-".
func readInput(cmd *cobra.Command, file string) ([]byte, error) {
	var r io.Reader
	if file == "-" {
		r = cmd.InOrStdin()
	} else {
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("-f %s: %w", file, errors.Unwrap(err))
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxInput))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", inputName(file), err)
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil, fmt.Errorf("%s is empty; give it a manifest", inputName(file))
	}
	return b, nil
}

func inputName(file string) string {
	if file == "-" {
		return "standard input"
	}
	return file
}

// documents splits YAML or JSON into its documents, each as JSON; empty documents are dropped.
func documents(b []byte) ([]json.RawMessage, error) {
	dec := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	var out []json.RawMessage
	for {
		var doc json.RawMessage
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("the manifests are not YAML or JSON: %w", err)
		}
		if len(doc) == 0 || string(doc) == "null" {
			continue
		}
		out = append(out, doc)
	}
}

// jobRequest is POST /api/v1/jobs' body: the one manifest in body with the flags' settings.
func (f *submitFlags) jobRequest(cmd *cobra.Command, body []byte) (apiclient.JobRequest, error) {
	docs, err := documents(body)
	if err != nil {
		return apiclient.JobRequest{}, err
	}
	if len(docs) != 1 {
		return apiclient.JobRequest{}, fmt.Errorf("--priority, --label and the spot flags set one manifest's job; this input holds %d documents (submit them without those flags, or one at a time)", len(docs))
	}
	ns := f.namespace
	if ns == "" {
		var m struct {
			Metadata struct {
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(docs[0], &m)
		ns = m.Metadata.Namespace
	}
	labels, err := parseLabels(f.labels)
	if err != nil {
		return apiclient.JobRequest{}, err
	}
	return apiclient.JobRequest{
		Manifest: docs[0], Region: f.region, Regions: f.regions, Namespace: ns, Priority: f.priorityPtr(cmd), Labels: labels,
		MaxSpotPrice: f.spotPtr(cmd), SpotInstanceType: f.spotType, SpotDeadline: f.spotDeadline, OnDeadline: f.onDeadline,
		DependsOn: f.dependencies(), Array: f.arrayShape(), OnRegionLost: f.onRegionLost,
	}, nil
}

// parseLabels reads repeated k=v flags.
func parseLabels(kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--label %q is not key=value", kv)
		}
		out[k] = v
	}
	return out, nil
}

// showDryRun prints what the policy decides; violations make it exit non-zero, so a CI step can
// gate on it.
func showDryRun(cmd *cobra.Command, p *printer, c *apiclient.Client, mr apiclient.ManifestsRequest) error {
	dr, err := c.DryRunManifests(cmd.Context(), mr)
	if err != nil {
		return err
	}
	err = p.emit(dr, func() {
		if dr.Valid {
			p.line("valid: %d manifest(s) would be admitted; nothing was stored", len(dr.Manifests))
			return
		}
		p.line("not valid: %d policy violation(s)", len(dr.Violations))
		for _, line := range (&apiclient.Error{Violations: dr.Violations}).Problems() {
			p.line("  - %s", line)
		}
	})
	if err == nil && !dr.Valid {
		return errQuiet
	}
	return err
}

// submitted reports a new job, then follows it when asked.
func submitted(cmd *cobra.Command, p *printer, c *apiclient.Client, job apiclient.Job, wait bool) error {
	if !wait {
		return p.emit(job, func() { p.line("job %s %s in %s (namespace %s)", job.ID, job.Status, job.Region, job.Namespace) })
	}
	if !p.scripted() {
		p.line("job %s submitted to %s (namespace %s)", job.ID, job.Region, job.Namespace)
	}
	final, err := waitJob(cmd.Context(), p, c, job.ID)
	if err != nil {
		return err
	}
	if err := p.emit(final, func() {}); err != nil {
		return err
	}
	return outcome(p, final)
}

// printWhatIf prints what each region's admission would decide for the job.
func printWhatIf(p *printer, wi apiclient.WhatIf) {
	switch {
	case wi.Blocked:
		fmt.Fprintln(p.out, "It would be blocked first, until the jobs it depends on end as it asks.")
	case wi.Admitted:
		fmt.Fprintf(p.out, "It would be admitted now in %s.\n", wi.Region)
	default:
		fmt.Fprintln(p.out, "It would wait: no region admits it now.")
	}
	t := &table{header: []string{"REGION", "ADMITTED", "FLAVOR", "WHY IT WOULD WAIT", "PLACE"}}
	for _, r := range wi.Regions {
		why, place := r.Reason, ""
		if r.Resource != "" {
			why += " (short of " + r.Resource + ")"
		}
		if r.Position > 0 {
			place = ordinal(r.Position)
		}
		t.add(plain(r.Region), plain(strconv.FormatBool(r.Admitted)), plain(r.Flavor), plain(why), plain(place))
	}
	p.print(t)
}
