package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tidegate/tidegate/shared/dev/devstack"
	"github.com/tidegate/tidegate/shared/tenancy"
)

func devCmd() *cobra.Command {
	opt := devstack.Options{}
	var beat, jobTTL, allowPrivate, registerHosts, rate, burst, clusters string
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run all of Tidegate on this machine, on local stand-ins",
		Long: `Starts DynamoDB Local, fauxqs (SQS and S3) and a Kubernetes sandbox (etcd, kube-apiserver,
controller-manager, scheduler and kwok), creates the tables, queues, bucket and the dev tenant,
then serves the API and drives the dispatch, webhook and reconcile functions as AWS would.
The deployment's tunables in the environment (TIDEGATE_POLICY_*, TIDEGATE_RATE_LIMIT, the
isolation settings, …; README lists them) reach the functions as they would in AWS; a flag
below that stands for one is used in its place when given. Ctrl-C stops everything it started.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if tenancy.RefuseUnread(strings.TrimSpace(opt.APIKey)) {
				// The API refuses such a key before looking it up, so the dev tenant could not use it.
				return fmt.Errorf("--api-key (TIDEGATE_DEV_API_KEY) begins with tg_ but is not a key Tidegate made; leave it empty to have one made, or choose one without the tg_ prefix")
			}
			if opt.Beat, err = time.ParseDuration(beat); err != nil {
				return fmt.Errorf("--beat %q is not a duration such as 5s", beat)
			}
			if opt.JobTTL, err = time.ParseDuration(jobTTL); err != nil {
				return fmt.Errorf("--job-ttl %q is not a duration such as 30s", jobTTL)
			}
			if opt.RateLimit, err = strconv.ParseFloat(rate, 64); err != nil {
				return fmt.Errorf("--rate %q is not a number of requests a second", rate)
			}
			if opt.Clusters, err = strconv.Atoi(clusters); err != nil {
				return fmt.Errorf("--clusters %q is not 1 or 2", clusters)
			}
			if opt.RateBurst, err = strconv.Atoi(burst); err != nil {
				return fmt.Errorf("--burst %q is not a whole number of requests", burst)
			}
			if opt.WebhooksAllowPrivate, err = strconv.ParseBool(allowPrivate); err != nil {
				return fmt.Errorf("--webhooks-allow-private %q is not true or false", allowPrivate)
			}
			opt.RegisterHosts = opt.Kubeconfig == ""
			if registerHosts != "" {
				if opt.RegisterHosts, err = strconv.ParseBool(registerHosts); err != nil {
					return fmt.Errorf("--register-hosts %q is not true or false", registerHosts)
				}
			}
			// With the sandbox, hosted apps run for real on this machine where it can.
			opt.RunHosts = opt.RegisterHosts
			// The deployment's tunables (TIDEGATE_POLICY_*, TIDEGATE_RATE_LIMIT, …) are tried here
			// as the functions would read them in AWS.
			opt.Env = os.Getenv
			logFile, err := openDevLog(opt.Dir)
			if err != nil {
				return err
			}
			defer logFile.Close()
			fmt.Fprintf(cmd.ErrOrStderr(), "tidegate dev: logs go to %s\n", logFile.Name())
			log := slog.New(slog.NewTextHandler(logFile, nil))
			// Once the stack serves, other terminals' `tidegate jobs list` should just work.
			opt.Ready = func(st devstack.State) { saveDevContext(st, cmd.ErrOrStderr()) }
			return devstack.Run(cmd.Context(), opt, cmd.ErrOrStderr(), log)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opt.Addr, "addr", envOr("TIDEGATE_DEV_ADDR", devstack.DefaultAddr), "address the API listens on (TIDEGATE_DEV_ADDR)")
	f.StringVar(&opt.APIKey, "api-key", envOr("TIDEGATE_DEV_API_KEY", ""), "the dev tenant's API key; generated and printed when empty (TIDEGATE_DEV_API_KEY)")
	f.StringVar(&opt.Kubeconfig, "kubeconfig", "", "use this cluster instead of starting the sandbox")
	f.StringVar(&clusters, "clusters", envOr("TIDEGATE_DEV_CLUSTERS", "1"), "sandbox clusters the regions run on: 1, both on one; 2, each on its own (us-east-1 on context sandbox, us-west-2 on sandbox-2), so one region's cluster can fail alone (TIDEGATE_DEV_CLUSTERS)")
	f.StringVar(&beat, "beat", envOr("TIDEGATE_DEV_BEAT", devstack.DefaultBeat.String()), "reconcile interval (TIDEGATE_DEV_BEAT)")
	f.StringVar(&jobTTL, "job-ttl", envOr("TIDEGATE_DEV_JOB_TTL", "0"), "how long the cluster keeps a finished Job (ttlSecondsAfterFinished); at least five beats; 0 takes TIDEGATE_JOB_TTL_SECONDS, else 1h (TIDEGATE_DEV_JOB_TTL)")
	f.StringVar(&opt.RegionCapacity, "region-capacity", envOr("TIDEGATE_DEV_REGION_CAPACITY", ""), "each region's room in pods, one flavor of that many, e.g. us-east-1=1,us-west-2=4; empty takes TIDEGATE_REGION_CAPACITY (TIDEGATE_DEV_REGION_CAPACITY)")
	f.StringVar(&opt.Flavors, "flavors", envOr("TIDEGATE_DEV_FLAVORS", ""), "each region's flavors, as TIDEGATE_FLAVORS' JSON; the sandbox gets a node for each; empty takes TIDEGATE_FLAVORS, else a spot and an on-demand flavor in each region --region-capacity does not name (TIDEGATE_DEV_FLAVORS)")
	f.StringVar(&allowPrivate, "webhooks-allow-private", envOr("TIDEGATE_DEV_WEBHOOKS_ALLOW_PRIVATE", "true"), "let webhooks reach http and loopback receivers; false applies production rules (TIDEGATE_DEV_WEBHOOKS_ALLOW_PRIVATE)")
	f.StringVar(&registerHosts, "register-hosts", "", "run each hosted app's pod on this machine under bwrap, its own process registering its host; where the machine cannot, register the host once its pod runs, in place of the app's process (default true with the sandbox, false with --kubeconfig)")
	f.StringVar(&rate, "rate", envOr("TIDEGATE_DEV_RATE", "0"), "a tenant's default API requests a second; 0 takes TIDEGATE_RATE_LIMIT, else the API's 20 (TIDEGATE_DEV_RATE)")
	f.StringVar(&burst, "burst", envOr("TIDEGATE_DEV_BURST", "0"), "a tenant's default burst of requests; 0 takes TIDEGATE_RATE_BURST, else the API's 100 (TIDEGATE_DEV_BURST)")
	f.StringVar(&opt.DefaultQuota, "default-quota", envOr("TIDEGATE_DEV_DEFAULT_QUOTA", ""), "each tenant's share of each region where its record sets none, JOBS[:GPUS]; empty takes TIDEGATE_DEFAULT_QUOTA (TIDEGATE_DEV_DEFAULT_QUOTA)")
	f.StringSliceVar(&opt.NeverRegister, "never-register", nil, "an app (web) or one release of it (web-r2) whose hosts are never registered, to see a release fail with never_registered (repeatable)")
	cmd.PersistentFlags().StringVar(&opt.Dir, "dir", devstack.DefaultDir(), "folder for the dev stack's state, logs and lock")
	cmd.AddCommand(devEnvCmd(&opt.Dir), devPricesCmd(&opt.Dir), devMetricsCmd(&opt.Dir))
	return cmd
}

func openDevLog(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("making dev folder: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "tidegate.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening dev log: %w", err)
	}
	return f, nil
}

func devEnvCmd(dir *string) *cobra.Command {
	return &cobra.Command{
		Use:   "env",
		Short: "Print shell exports for the running dev stack: eval \"$(tidegate dev env)\"",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := devstack.ReadState(*dir)
			if err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), st.Exports())
			return nil
		},
	}
}
