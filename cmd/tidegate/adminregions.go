package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/spf13/cobra"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/records"
	"github.com/tidegate/tidegate/shared/wake"
)

// adminRegionsCmd is `tidegate admin regions`: an operator's cordon, drain and uncordon.
func adminRegionsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "regions", Short: "Cordon, drain and uncordon a region"}
	for _, a := range []struct {
		use, short, long, cordon string
	}{
		{"cordon", "Stop admitting jobs in a region; what runs there goes on",
			"Each drain admits nothing in the region (within 5 seconds on a warm dispatcher): its own queued jobs wait region_cordoned in their place, jobs that allow another region go there, and what runs goes on.",
			dynamo.Cordoned},
		{"drain", "Cordon a region and stop what runs there, to run again elsewhere",
			"As cordon, and the region's drain stops each job running there as an eviction does (its pods get SIGTERM and their grace period, TIDEGATE_PREEMPTION_GRACE_MAX at most) and queues it again as a new attempt: in another region it allows, else in its place here until the region is uncordoned.",
			dynamo.Draining},
		{"uncordon", "Admit jobs in a region again", "The region admits again: its queued jobs are dispatched by the next drain.", ""},
	} {
		cmd.AddCommand(&cobra.Command{
			Use: a.use + " REGION", Short: a.short, Long: a.long, Args: cobra.ExactArgs(1),
			Example: "  tidegate admin regions " + a.use + " us-west-2",
			RunE: func(cmd *cobra.Command, args []string) error {
				return setCordon(cmd, args[0], a.use, a.cordon)
			},
		})
	}
	return cmd
}

// setCordon sets cordon on region, as operator action use, audited, and rings the region's
// drain where the dispatch queue is known here, so a drain or an uncordon acts now rather than at
// the next beat.
func setCordon(cmd *cobra.Command, region, use, cordon string) error {
	ctx := cmd.Context()
	if err := checkRegion(region); err != nil {
		return err
	}
	db, table, err := controlTable(ctx)
	if err != nil {
		return err
	}
	store := dynamo.NewJobStore(db, dynamo.Tables{Control: table})
	who := "operator"
	if u, err := user.Current(); err == nil {
		who += ":" + u.Username
	}
	if err := auditedDo(ctx, "admin regions "+use, "", "regions/"+region, func() error {
		return store.SetCordon(ctx, region, cordon, who, time.Now())
	}); err != nil {
		return err
	}
	if err := ringRegion(ctx, region); err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "tidegate: %s set; the next beat acts on it (ringing its drain now failed: %v)\n", region, err)
	}
	fmt.Fprintln(cmd.OutOrStdout(), map[string]string{
		dynamo.Cordoned: region + " cordoned: it admits nothing; what runs there goes on",
		dynamo.Draining: region + " draining: it admits nothing, and its running jobs are stopped and queued again",
		"":              region + " uncordoned: it admits again",
	}[cordon])
	return nil
}

// checkRegion refuses a region Tidegate does not run jobs in, when the regions are known here
// (TIDEGATE_REGIONS).
func checkRegion(region string) error {
	setting := os.Getenv(config.EnvRegions)
	if setting == "" {
		return nil
	}
	regions, err := config.ParseRegions(setting)
	if err != nil {
		return fmt.Errorf("%s: %w", config.EnvRegions, err)
	}
	if _, ok := regions[region]; !ok {
		return fmt.Errorf("Tidegate runs no jobs in region %q; its regions are %s (%s)", region,
			strings.Join(config.Config{Regions: regions}.RegionNames(), ", "), config.EnvRegions)
	}
	return nil
}

// ringRegion wakes region's drain through the dispatch queue TIDEGATE_DISPATCH_QUEUE_URL names;
// without one, nothing (the beat rings it).
func ringRegion(ctx context.Context, region string) error {
	url := os.Getenv(config.EnvDispatchQueueURL)
	if url == "" {
		return nil
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return fmt.Errorf("loading AWS configuration: %w", err)
	}
	client := sqs.NewFromConfig(awsCfg, func(o *sqs.Options) {
		if ep := os.Getenv(config.EnvSQSEndpoint); ep != "" {
			o.BaseEndpoint = aws.String(ep)
		}
	})
	return wake.New(client, url).Ring(ctx, region)
}

// tenantsHoldCmd is `tidegate admin tenants hold|unhold NAME`.
func tenantsHoldCmd(hold bool) *cobra.Command {
	use, short := "unhold", "Let a held tenant's jobs be dispatched again"
	if hold {
		use, short = "hold", "Dispatch none of a tenant's jobs; they keep their place and what runs goes on"
	}
	return &cobra.Command{
		Use: use + " NAME", Short: short, Args: cobra.ExactArgs(1),
		Long: "Each drain reads a tenant's record at most 30 seconds old: a hold reaches every dispatcher within that. " +
			"A held tenant's queued jobs wait tenant_held in their place; its running jobs go on; it may still submit.",
		Example: "  tidegate admin tenants " + use + " ml-team",
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			store, err := tenantStore(ctx)
			if err != nil {
				return err
			}
			err = auditedDo(ctx, "admin tenants "+use, args[0], "tenants/"+args[0], func() error {
				return store.SetHeld(ctx, args[0], hold)
			})
			if errors.Is(err, records.ErrNotFound) {
				return fmt.Errorf("there is no tenant %q (tidegate admin tenants list)", args[0])
			}
			if err != nil {
				return err
			}
			if hold {
				fmt.Fprintf(cmd.OutOrStdout(), "tenant %s held: none of its jobs is dispatched; they keep their place\n", args[0])
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "tenant %s unheld: its jobs are dispatched again\n", args[0])
			}
			return nil
		},
	}
}
