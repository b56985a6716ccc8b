package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/tidegate/tidegate/shared/apiclient"
)

// maxSecretInput bounds what is read for one value: the API takes 16 KiB, and a little more lets
// it say so itself.
const maxSecretInput = 64 << 10

func secretsCmd(s *session) *cobra.Command {
	return apiGroup(s, "secrets", "Set the org's secrets, which its apps read as environment variables",
		secretsSetCmd(s), secretsListCmd(s), secretsRemoveCmd(s))
}

func secretsSetCmd(s *session) *cobra.Command {
	var fromFile string
	cmd := &cobra.Command{
		Use:   "set NAME [--from-file FILE]",
		Short: "Set a secret; the value is read from a file, asked for (not echoed), or read from standard input",
		Long: `Sets the org's secret NAME (shaped like an environment variable: DATABASE_URL). The value never
goes on the command line, where the shell's history would keep it: it comes from --from-file,
or is asked for on a terminal without echo, or is read whole from standard input. The org's
apps restart to read it.`,
		Example: `  tidegate secrets set DATABASE_URL
  tidegate secrets set TLS_KEY --from-file key.pem
  vault read -field=token secret/ci | tidegate secrets set CI_TOKEN`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeSecrets(s),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := s.printer(cmd)
			if err != nil {
				return err
			}
			value, err := readSecret(cmd, args[0], fromFile)
			if err != nil {
				return err
			}
			c, err := s.client(cmd.Context())
			if err != nil {
				return err
			}
			if err := c.SetSecret(cmd.Context(), args[0], value); err != nil {
				return err
			}
			return p.emit(map[string]string{"name": args[0], "set": "true"}, func() {
				p.line("secret %s set; the org's apps restart to read it", args[0])
			})
		},
	}
	cmd.Flags().StringVar(&fromFile, "from-file", "", "read the value from this file, as it is")
	return cmd
}

// readSecret reads a value from a file, a terminal (no echo) or standard input. Text read from a
// terminal or a pipe loses one trailing newline, which echo and heredocs add; a file is taken as
// it is.
func readSecret(cmd *cobra.Command, name, file string) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("--from-file: %w", err)
		}
		return string(b), nil
	}
	in := cmd.InOrStdin()
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprintf(cmd.ErrOrStderr(), "value of %s: ", name)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(cmd.ErrOrStderr())
		if err != nil {
			return "", fmt.Errorf("reading the value: %w", err)
		}
		return string(b), nil
	}
	b, err := io.ReadAll(io.LimitReader(in, maxSecretInput))
	if err != nil {
		return "", fmt.Errorf("reading the value from standard input: %w", err)
	}
	v := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if v == "" {
		return "", fmt.Errorf("no value for %s: pipe it in, type it when asked, or use --from-file", name)
	}
	return v, nil
}

func secretsListCmd(s *session) *cobra.Command {
	var l listFlags
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the org's secrets by name (values are never shown)",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, c, err := s.open(cmd)
			if err != nil {
				return err
			}
			page, err := apiclient.Collect(cmd.Context(), l.max(), l.cursor, c.Secrets)
			if err != nil {
				return err
			}
			return p.emit(page, func() {
				t := &table{header: []string{"NAME", "UPDATED"}}
				for _, sec := range page.Items {
					updated := ""
					if sec.UpdatedAt != nil {
						updated = p.age(*sec.UpdatedAt)
					}
					t.add(plain(sec.Name), plain(updated))
				}
				p.print(t)
				moreNote(p, page.NextCursor)
			})
		},
	}
	l.add(cmd)
	return cmd
}

func secretsRemoveCmd(s *session) *cobra.Command {
	return &cobra.Command{
		Use:               "rm NAME",
		Aliases:           []string{"delete"},
		Short:             "Remove a secret; the org's apps restart without it",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeSecrets(s),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, c, err := s.open(cmd)
			if err != nil {
				return err
			}
			if err := c.DeleteSecret(cmd.Context(), args[0]); err != nil {
				return err
			}
			return p.emit(map[string]string{"deleted": args[0]}, func() { p.line("secret %s removed", args[0]) })
		},
	}
}
