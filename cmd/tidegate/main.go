// Command tidegate is Tidegate's command line: `tidegate dev` runs the whole system on one machine,
// `tidegate admin` manages tenants and keys, and `tidegate login`, `jobs`, `queue`, `templates`,
// `webhooks`, `apps` and `secrets` do everything the API does, from a terminal.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := root().ExecuteContext(ctx); err != nil {
		reportError(os.Stderr, err)
		os.Exit(1)
	}
}

func root() *cobra.Command {
	cmd := &cobra.Command{
		Use:           "tidegate",
		Short:         "Run batch jobs and hosted apps on Kubernetes across AWS regions",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.AddCommand(devCmd(), adminCmd(), sandboxCmd())
	s := &session{}
	cmd.AddCommand(loginCmd(s), jobsCmd(s), queueCmd(s), costsCmd(s), templatesCmd(s), workflowsCmd(s), webhooksCmd(s), auditCmd(s), appsCmd(s), secretsCmd(s))
	return cmd
}

// envOr is the environment variable's value, or def when it is unset: flags default to it, so the
// flag wins, then the variable, then the built-in default.
func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}
