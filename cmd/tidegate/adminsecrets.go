package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/spf13/cobra"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/keyring"
	"github.com/tidegate/tidegate/shared/secretbox"
)

func adminSecretsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secrets",
		Short: "Rotate the data keys that seal orgs' and tenants' secrets, and re-seal secrets under them",
		Long: `Secrets at rest (orgs' app secrets, webhooks' signing secrets) are sealed under a data key of
their owner, which the KMS key named by TIDEGATE_KMS_KEY wraps. These commands need
TIDEGATE_CONTROL_TABLE and TIDEGATE_KMS_KEY (the stack's SecretsKmsKeyArn output), your AWS
credentials allowed kms:GenerateDataKey and kms:Decrypt on that key, and, for a local stack,
TIDEGATE_DYNAMODB_ENDPOINT and TIDEGATE_KMS_ENDPOINT (eval "$(tidegate dev env)").`,
	}
	cmd.AddCommand(secretsResealCmd(), secretsRotateCmd())
	return cmd
}

// adminKeyring is a keyring on the control table and KMS key the environment names.
func adminKeyring(ctx context.Context) (*keyring.Ring, *dynamodb.Client, string, error) {
	table, key := os.Getenv(config.EnvControlTable), os.Getenv(config.EnvKMSKey)
	if table == "" || key == "" {
		return nil, nil, "", fmt.Errorf("%s and %s must both be set: the control table and the KMS key that wraps the data keys (for the dev stack: eval \"$(tidegate dev env)\")", config.EnvControlTable, config.EnvKMSKey)
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, nil, "", fmt.Errorf("loading AWS configuration: %w", err)
	}
	db := dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
		if ep := os.Getenv(config.EnvDynamoDBEndpoint); ep != "" {
			o.BaseEndpoint = &ep
		}
	})
	kc := kms.NewFromConfig(awsCfg, func(o *kms.Options) {
		if ep := os.Getenv(config.EnvKMSEndpoint); ep != "" {
			o.BaseEndpoint = &ep
		}
	})
	ring, err := keyring.New(kc, db, table, key)
	return ring, db, table, err
}

func secretsResealCmd() *cobra.Command {
	var legacyFile string
	cmd := &cobra.Command{
		Use:   "reseal [--legacy-key-file FILE]",
		Short: "Seal every secret again under its owner's current data key",
		Long: `reseal opens every sealed secret with the key that sealed it and seals it again under its owner's
current data key (after "secrets rotate", or after TIDEGATE_KMS_KEY names a new KMS key), printing
each one. Each is replaced only if nobody changed it meanwhile. It is safe to stop and run again:
a second run finds nothing to do. Functions keep what they read of owners' keys for up to five
minutes, so run it again that long after a rotation to catch values sealed meanwhile.

--legacy-key-file reads the secrets key older deployments configured (TIDEGATE_SECRETS_KEY, as
Secrets Manager held it), to open the values sealed under it before the keyring.`,
		Example: "  tidegate admin secrets rotate --all && tidegate admin secrets reseal",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ring, db, table, err := adminKeyring(cmd.Context())
			if err != nil {
				return err
			}
			var r dynamo.Resealer = ring
			if legacyFile != "" {
				if r, err = legacyRing(ring, legacyFile); err != nil {
					return err
				}
			}
			return reseal(cmd.Context(), db, table, r, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&legacyFile, "legacy-key-file", "", "a file holding the secrets key of an older deployment, to open what it sealed")
	return cmd
}

// legacyRing is ring, also opening what the secrets key in file sealed.
func legacyRing(ring *keyring.Ring, file string) (*keyring.Legacy, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--legacy-key-file: %w", err)
	}
	key, err := secretbox.KeyFromSetting(string(b))
	if err != nil {
		return nil, fmt.Errorf("--legacy-key-file %s %w", file, err)
	}
	return keyring.NewLegacy(ring, key)
}

// reseal runs dynamo.Reseal, printing each item and a count of each outcome.
func reseal(ctx context.Context, db *dynamodb.Client, table string, r dynamo.Resealer, out io.Writer) error {
	counts := map[string]int{}
	err := dynamo.Reseal(ctx, db, table, r, func(s dynamo.ResealStep) {
		counts[s.Outcome]++
		fmt.Fprintf(out, "%s: %s\n", s.What, s.Outcome)
	})
	fmt.Fprintf(out, "re-sealed %d, %d already under the current key, %d changed meanwhile\n",
		counts[dynamo.ResealDone], counts[dynamo.ResealCurrent], counts[dynamo.ResealChanged])
	return err
}

func secretsRotateCmd() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "rotate (OWNER… | --all)",
		Short: "Make owners a new data key: secrets sealed from now on use it, older ones still open",
		Long: `rotate makes each owner (org/NAME for an org's app secrets, tenant/NAME for a tenant's webhook
secrets; --all for every owner that has one) a new data key under TIDEGATE_KMS_KEY. New values are
sealed under it; values sealed before still open with the key that sealed them, until
"secrets reseal" seals them again under the new one.`,
		Example: "  tidegate admin secrets rotate org/acme tenant/ml-team\n  tidegate admin secrets rotate --all",
		RunE: func(cmd *cobra.Command, owners []string) error {
			if all == (len(owners) > 0) {
				return fmt.Errorf("name the owners to rotate (org/NAME, tenant/NAME), or give --all, not both")
			}
			for _, o := range owners {
				kind, name, _ := strings.Cut(o, "/")
				if (kind != "org" && kind != "tenant") || name == "" {
					return fmt.Errorf("owner %q is neither org/NAME (an org's app secrets) nor tenant/NAME (a tenant's webhook secrets)", o)
				}
			}
			ring, _, _, err := adminKeyring(cmd.Context())
			if err != nil {
				return err
			}
			if all {
				if owners, err = ring.Owners(cmd.Context()); err != nil {
					return err
				}
			}
			for _, o := range owners {
				id, err := ring.Rotate(cmd.Context(), o)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: new data key %s\n", o, id)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "rotated %d owners; run `tidegate admin secrets reseal` to seal their secrets again under the new keys\n", len(owners))
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "rotate every owner that has a data key")
	return cmd
}
