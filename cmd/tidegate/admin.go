package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/spf13/cobra"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/flavors"
	"github.com/tidegate/tidegate/shared/ids"
	"github.com/tidegate/tidegate/shared/records"
	"github.com/tidegate/tidegate/shared/tenancy"
)

func adminCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "admin",
		Short: "Manage tenants and API keys, straight in the control table",
		Long: `Admin commands write to the control table directly, with your AWS credentials: they need
TIDEGATE_CONTROL_TABLE (and TIDEGATE_DYNAMODB_ENDPOINT for a local stack). Against the dev stack:
eval "$(tidegate dev env)" first.`,
	}
	tenants := &cobra.Command{Use: "tenants", Short: "Create, change and list tenants"}
	tenants.AddCommand(tenantsPutCmd(), tenantsListCmd(), tenantsHoldCmd(true), tenantsHoldCmd(false))
	keys := &cobra.Command{Use: "keys", Short: "Create API keys"}
	keys.AddCommand(keysCreateCmd())
	cmd.AddCommand(tenants, keys, adminSecretsCmd(), adminRegionsCmd())
	return cmd
}

// tenantStore reaches the control table named by the environment.
func tenantStore(ctx context.Context) (*dynamo.TenantStore, error) {
	db, table, err := controlTable(ctx)
	if err != nil {
		return nil, err
	}
	return dynamo.NewTenantStore(db, table), nil
}

// controlTable is a client of the control table named by the environment, and its name.
func controlTable(ctx context.Context) (*dynamodb.Client, string, error) {
	table := os.Getenv(config.EnvControlTable)
	if table == "" {
		return nil, "", fmt.Errorf("%s is not set: name the control table (for the dev stack: eval \"$(tidegate dev env)\")", config.EnvControlTable)
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("loading AWS configuration: %w", err)
	}
	db := dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
		if ep := os.Getenv(config.EnvDynamoDBEndpoint); ep != "" {
			o.BaseEndpoint = &ep
		}
	})
	return db, table, nil
}

// auditedDo does change, operator action on tenant's target, between its audit record's writes.
func auditedDo(ctx context.Context, action, tenant, target string, change func() error) error {
	done, err := audited(ctx, action, tenant, target)
	if err != nil {
		return err
	}
	err = change()
	done(err)
	return err
}

// audited records operator action (such as "admin tenants put") on tenant's target in the audit
// log before it is made, and answers the function that records how it ended: an action whose
// record cannot be written is not made. The tenant acted on reads it in its own log.
func audited(ctx context.Context, action, tenant, target string) (func(err error), error) {
	db, table, err := controlTable(ctx)
	if err != nil {
		return nil, err
	}
	var retention config.Config
	if err := retention.ApplyTunables(os.Getenv); err != nil {
		return nil, err
	}
	log := dynamo.NewAuditStore(db, table, retention.AuditRetention)
	who := "operator"
	if u, err := user.Current(); err == nil {
		who += ":" + u.Username
	}
	rec := dynamo.AuditRecord{At: time.Now().UTC(), Tenant: tenant, Principal: who, RequestID: ids.New("cli_", time.Now()), Action: action, Path: target}
	if err := log.Begin(ctx, rec); err != nil {
		return nil, fmt.Errorf("not done: %w", err)
	}
	return func(err error) {
		status := 200
		switch {
		case errors.Is(err, records.ErrNotFound):
			status = 404
		case err != nil:
			status = 500
		}
		if ferr := log.Finish(context.WithoutCancel(ctx), rec, status); ferr != nil {
			fmt.Fprintf(os.Stderr, "tidegate: the audit record of %s was written, its outcome not: %v\n", action, ferr)
		}
	}, nil
}

// checkQuotaRegions refuses a quota for a region Tidegate does not run jobs in, when the regions
// are known here (TIDEGATE_REGIONS, as the functions and `tidegate dev env` set it): such a share
// would never be used, and is most likely a typo.
func checkQuotaRegions(quotas map[string]tenancy.Quota) error {
	setting := os.Getenv(config.EnvRegions)
	if setting == "" || len(quotas) == 0 {
		return nil
	}
	regions, err := config.ParseRegions(setting)
	if err != nil {
		return fmt.Errorf("%s: %w", config.EnvRegions, err)
	}
	known := config.Config{Regions: regions}.RegionNames()
	set, err := flavors.Parse(os.Getenv(config.EnvFlavors))
	if err != nil {
		return fmt.Errorf("%s: %w", config.EnvFlavors, err)
	}
	for _, region := range slices.Sorted(maps.Keys(quotas)) {
		if _, ok := regions[region]; !ok {
			return fmt.Errorf("--quota: Tidegate runs no jobs in region %q; its regions are %s (%s)", region, strings.Join(known, ", "), config.EnvRegions)
		}
		fr := set.Of(region, config.Config{}.Capacity(region), 0)
		for _, f := range slices.Sorted(maps.Keys(quotas[region].Flavors)) {
			if fr.Index(f) < 0 {
				var names []string
				for _, fl := range fr.Flavors {
					names = append(names, fl.Name)
				}
				return fmt.Errorf("--quota: region %s has no flavor %q; its flavors are %s (%s)", region, f, strings.Join(names, ", "), config.EnvFlavors)
			}
		}
	}
	return nil
}

// tenantPut is what `tenants put` says of the tenant it stored.
func tenantPut(t tenancy.Tenant) string {
	also := ""
	if t.Operator {
		also = ", operator (sees every tenant's costs and queue use)"
	}
	if t.PreemptWithin != "" {
		also += ", its jobs of higher priority evict its own of lower"
	}
	return fmt.Sprintf("tenant %s: org %s, role %s%s, namespaces %s, max priority %d, max queued %s", t.Name, t.Org, t.Role, also,
		strings.Join(t.Namespaces, ", "), t.PriorityLimit(), queuedCap(t.MaxQueued))
}

func tenantsPutCmd() *cobra.Command {
	var t tenancy.Tenant
	var role string
	var iamARNs []string
	var shareNamespace bool
	var maxPriority, maxQueued int
	var quotas, borrowing, lending []string
	cmd := &cobra.Command{
		Use:   "put NAME --org ORG --namespace NS [--namespace NS…] [--role admin|deployer|member|viewer] [--operator] [--iam-arn ARN…] [--share-namespace] [--max-priority N] [--max-queued N] [--quota REGION/FLAVOR=RES:QTY,…] [--borrowing-limit REGION/FLAVOR=RES:QTY,…] [--lending-limit REGION/FLAVOR=RES:QTY,…] [--preempt-within lower-priority] [--rate N] [--burst N]",
		Short: "Create or replace a tenant",
		Example: "  tidegate admin tenants put ml-team --org acme --namespace ml-train --namespace ml-eval --role member --max-priority 80 \\\n" +
			"    --quota us-east-1/spot=cpu:64,memory:256Gi --quota us-east-1/on-demand=nvidia.com/gpu:8 --borrowing-limit us-east-1/on-demand=nvidia.com/gpu:0",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t.Name, t.Role, t.CreatedAt, t.MaxPriority = args[0], tenancy.Role(role), time.Now().UTC(), &maxPriority
			if cmd.Flags().Changed("max-queued") {
				t.MaxQueued = &maxQueued
			}
			var err error
			if t.Quotas, err = flavors.ParseQuotas(quotas, borrowing, lending); err != nil {
				return err
			}
			if err := checkQuotaRegions(t.Quotas); err != nil {
				return err
			}
			if err := t.Validate(); err != nil {
				return err
			}
			for _, arn := range iamARNs {
				if _, err := tenancy.MappedIAM(arn); err != nil {
					return fmt.Errorf("--iam-arn: %w", err)
				}
			}
			store, err := tenantStore(cmd.Context())
			if err != nil {
				return err
			}
			if old, err := store.Tenant(cmd.Context(), t.Name); err == nil {
				// A put replaces what it sets; a hold is the operator's apart (tenants hold).
				t.CreatedAt, t.Held = old.CreatedAt, old.Held
			} else if !errors.Is(err, records.ErrNotFound) {
				return err
			}
			if err := checkNamespaces(cmd.Context(), store, t, shareNamespace); err != nil {
				return err
			}
			if err := auditedDo(cmd.Context(), "admin tenants put", t.Name, "tenants/"+t.Name, func() error {
				return store.PutTenant(cmd.Context(), t)
			}); err != nil {
				return err
			}
			for _, arn := range iamARNs {
				if err := store.AddIAM(cmd.Context(), t.Name, arn, time.Now()); err != nil {
					return err
				}
			}
			fmt.Fprintln(cmd.OutOrStdout(), tenantPut(t))
			return nil
		},
	}
	cmd.Flags().StringVar(&t.Org, "org", "", "the org whose apps and secrets the tenant shares (required)")
	cmd.Flags().StringSliceVar(&t.Namespaces, "namespace", nil, "a namespace the tenant may use; repeat or comma-separate (required)")
	cmd.Flags().StringVar(&role, "role", string(tenancy.RoleMember), "admin (also webhooks, secrets, keys), deployer (also the org's apps and their logs), member (jobs, templates) or viewer (reads)")
	cmd.Flags().StringVar(&t.PreemptWithin, "preempt-within", "", "lower-priority: when a region has no room for one of the tenant's jobs, evict the tenant's own running jobs of lower priority for it (their pods get SIGTERM and their grace); empty: never")
	cmd.Flags().BoolVar(&t.Operator, "operator", false, "the deployment's operator: its keys and IAM callers see every tenant's costs and queue use (a tenant's admin sees only its own)")
	cmd.Flags().StringSliceVar(&iamARNs, "iam-arn", nil, "an IAM role or user ARN (or an account root) whose callers act for the tenant through API Gateway; a session ARN is refused")
	cmd.Flags().BoolVar(&shareNamespace, "share-namespace", false, "let the tenant hold namespaces another tenant already holds (each then sees the other's jobs there)")
	cmd.Flags().IntVar(&maxPriority, "max-priority", tenancy.TopPriority, "the highest priority the tenant's jobs may have, 0 to 100")
	cmd.Flags().IntVar(&maxQueued, "max-queued", 0, "how many of the tenant's jobs may wait in the queues at once, across regions (a submission past it is refused 429); 0 is no cap; left out, the deployment's "+config.EnvMaxQueuedPerTenant)
	cmd.Flags().StringArrayVar(&quotas, "quota", nil, "the tenant's nominal quota of a flavor, "+flavors.QuotaSyntax+"; repeat for each flavor (a region left out has the default share). The older REGION=JOBS[:GPUS] is that many pods and GPUs on every flavor of the region")
	cmd.Flags().StringArrayVar(&borrowing, "borrowing-limit", nil, "how far above its nominal quota of a flavor the tenant may borrow, per resource, REGION/FLAVOR=RES:QTY,…; a resource left out has no limit")
	cmd.Flags().StringArrayVar(&lending, "lending-limit", nil, "how much of its unused nominal quota of a flavor other tenants may borrow, per resource, REGION/FLAVOR=RES:QTY,…; a resource left out lends all")
	cmd.Flags().Float64Var(&t.RateLimit, "rate", 0, "API requests a second each of the tenant's keys and IAM callers may send to each API process; 0 is the default")
	cmd.Flags().IntVar(&t.RateBurst, "burst", 0, "how many API requests each of the tenant's keys and IAM callers may send at once before --rate paces it; 0 is the default")
	_ = cmd.MarkFlagRequired("org")
	_ = cmd.MarkFlagRequired("namespace")
	return cmd
}

// checkNamespaces refuses the namespaces tenant t may not hold: the cluster's, default, the hosted
// apps' (as this environment names it) and, unless share, another tenant's. Two admins putting
// tenants at the same moment could both pass; tenants are put rarely, by hand.
func checkNamespaces(ctx context.Context, store *dynamo.TenantStore, t tenancy.Tenant, share bool) error {
	others, err := store.Tenants(ctx)
	if err != nil {
		return err
	}
	rules := tenancy.NamespaceRules{AppsNamespace: cmp.Or(os.Getenv(config.EnvAppsNamespace), config.DefaultAppsNamespace), Share: share}
	if err := tenancy.CheckNamespaces(t, others, rules); err != nil {
		return fmt.Errorf("tenant %s: %w", t.Name, err)
	}
	return nil
}

func tenantsListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List tenants with their max priority, cap of queued jobs, quotas and request budgets",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := tenantStore(cmd.Context())
			if err != nil {
				return err
			}
			ts, err := store.Tenants(cmd.Context())
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tORG\tROLE\tNAMESPACES\tMAX-PRIORITY\tMAX-QUEUED\tQUOTAS\tRATE\tBURST\tCREATED")
			for _, t := range ts {
				rate, burst := orDefault(t.RateLimit > 0, strconv.FormatFloat(t.RateLimit, 'g', -1, 64)), orDefault(t.RateBurst > 0, strconv.Itoa(t.RateBurst))
				role := string(t.Role)
				if t.Operator {
					role += "+operator"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", t.Name, t.Org, role, strings.Join(t.Namespaces, ","),
					t.PriorityLimit(), queuedCap(t.MaxQueued), regionQuotas(t.Quotas), rate, burst, t.CreatedAt.Format(time.RFC3339))
			}
			return w.Flush()
		},
	}
}

// regionQuotas spells a tenant's quotas as the flags of `admin tenants put` take them, by region,
// or "default" where it sets none and has the default share everywhere.
func regionQuotas(qs map[string]tenancy.Quota) string {
	var out []string
	for _, region := range slices.Sorted(maps.Keys(qs)) {
		out = append(out, flavors.Spell(region, qs[region])...)
	}
	return orDefault(len(out) > 0, strings.Join(out, ","))
}

// queuedCap spells a tenant's cap of queued jobs: its own, "none" for 0, or "default" where its
// record sets none and the deployment's applies.
func queuedCap(n *int) string {
	switch {
	case n == nil:
		return "default"
	case *n == 0:
		return "none"
	}
	return strconv.Itoa(*n)
}

// orDefault is s where a tenant's record sets the value, else "default".
func orDefault(set bool, s string) string {
	if !set {
		return "default"
	}
	return s
}

func keysCreateCmd() *cobra.Command {
	var tenant string
	cmd := &cobra.Command{
		Use:   "create --tenant NAME",
		Short: "Create an API key for a tenant; it is shown once, only its hash is kept",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := tenantStore(cmd.Context())
			if err != nil {
				return err
			}
			key, err := tenancy.NewKey()
			if err != nil {
				return err
			}
			if err := auditedDo(cmd.Context(), "admin keys create", tenant, "tenants/"+tenant+"/keys/"+tenancy.KeyID(key), func() error {
				return store.AddKey(cmd.Context(), tenant, key, time.Now())
			}); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "key %s for tenant %s; it is not shown again:\n", tenancy.KeyID(key), tenant)
			fmt.Fprintln(cmd.OutOrStdout(), key)
			return nil
		},
	}
	cmd.Flags().StringVar(&tenant, "tenant", "", "the tenant the key acts for (required)")
	_ = cmd.MarkFlagRequired("tenant")
	return cmd
}
