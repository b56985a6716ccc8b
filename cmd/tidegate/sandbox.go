package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/tidegate/tidegate/shared/dev/sandbox"
)

// sandboxCmd runs the stand-ins alone until interrupted; `make test` starts one for all packages
// and points TIDEGATE_SANDBOX_STATE at its state file.
func sandboxCmd() *cobra.Command {
	var state, dir string
	var kube bool
	var clusters int
	cmd := &cobra.Command{
		Use:    "sandbox --state FILE [--kube [--clusters N]]",
		Short:  "Run the local stand-ins until interrupted, writing how to reach them to FILE",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				d, err := os.MkdirTemp("", "tidegate-sandbox-")
				if err != nil {
					return err
				}
				dir = d
				defer os.RemoveAll(d)
			}
			if clusters < 1 || (clusters > 1 && !kube) {
				return fmt.Errorf("--clusters %d: give 1 or more, and --kube with it", clusters)
			}
			sb, err := sandbox.Start(cmd.Context(), sandbox.Options{Dir: dir, Kube: kube, Clusters: clusters, Progress: func(m string) {
				fmt.Fprintln(cmd.ErrOrStderr(), "sandbox:", m)
			}})
			if err != nil {
				return err
			}
			defer sb.Stop()
			if err := sb.State.WriteState(state); err != nil {
				return err
			}
			defer os.Remove(state)
			fmt.Fprintln(cmd.ErrOrStderr(), "sandbox: ready; state in", state)
			<-cmd.Context().Done()
			return nil
		},
	}
	cmd.Flags().StringVar(&state, "state", "", "file to write the sandbox's endpoints to (required)")
	cmd.Flags().StringVar(&dir, "dir", "", "folder for data and logs (a temporary one by default)")
	cmd.Flags().BoolVar(&kube, "kube", false, "start the Kubernetes sandbox too")
	cmd.Flags().IntVar(&clusters, "clusters", 1, "with --kube, how many clusters (sandbox, sandbox-2, …); the state's regions_kubeconfig has a context for each")
	_ = cmd.MarkFlagRequired("state")
	return cmd
}
