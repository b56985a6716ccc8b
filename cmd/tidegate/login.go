package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/tidegate/tidegate/shared/apiclient"
	"github.com/tidegate/tidegate/shared/dev/devstack"
)

// defaultContext names the context login saves when none is named.
const defaultContext = "default"

func loginCmd(s *session) *cobra.Command {
	var region string
	cmd := &cobra.Command{
		Use:   "login --url URL [--profile PROFILE] [--context NAME]",
		Short: "Save an API's URL and credentials (an API key, or an AWS profile) as the context to use",
		Long: `Saves the API at --url as a context in your config folder (readable by you alone) and makes it
the one commands use. With --profile, requests are signed with that AWS profile's credentials
(SigV4, for API Gateway's IAM auth); otherwise the API key is read from ` + envAPIKey + `, or asked
for (not echoed), or read from standard input. The credentials are checked before they are saved.
Without --url, switches to a context saved before.

A deployment in AWS has one URL per kind of credential, in its stack's outputs: ApiUrl takes
signed requests (--profile), KeyApiUrl takes API keys.

Commands then take the API from --url, ` + envURL + `, then the context; the key from ` + envAPIKey + `, then
the context (a context's key goes only to its own URL); --profile signs instead. ` + "`tidegate dev`" + `
saves the context "dev" for the stack it runs.`,
		Example: `  tidegate login --url https://abc123.execute-api.us-east-1.amazonaws.com --profile prod   # ApiUrl
  echo "$KEY" | tidegate login --url https://def456.execute-api.us-east-1.amazonaws.com --context ci  # KeyApiUrl
  tidegate login --context dev`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := configPath()
			if err != nil {
				return err
			}
			cfg, err := loadConfig(path)
			if err != nil {
				return err
			}
			name := firstOf(s.context, defaultContext)
			if s.url == "" {
				return switchContext(cmd, cfg, path, name, s.context != "")
			}
			ctxv := cliContext{URL: strings.TrimRight(s.url, "/"), Profile: s.profile, Region: region}
			if s.profile == "" {
				if ctxv.APIKey, err = readKey(cmd, ctxv.URL); err != nil {
					return err
				}
			}
			if err := checkLogin(cmd, ctxv); err != nil {
				return err
			}
			cfg.Contexts[name], cfg.Current = ctxv, name
			if err := cfg.save(path); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "logged in to %s as context %q (saved in %s)\n", ctxv.URL, name, path)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&s.url, "url", "", "the API's URL")
	f.StringVar(&s.profile, "profile", "", "sign requests with this AWS profile (SigV4) instead of an API key")
	f.StringVar(&s.context, "context", "", "the name to save it under ("+defaultContext+" when left out)")
	f.StringVar(&region, "aws-region", "", "the region SigV4 signatures are for, when the URL is a custom domain (else the profile's)")
	_ = cmd.RegisterFlagCompletionFunc("context", completeContexts)
	return cmd
}

// switchContext makes a saved context current.
func switchContext(cmd *cobra.Command, cfg cliConfig, path, name string, named bool) error {
	if !named {
		return fmt.Errorf("name the API: tidegate login --url URL (or switch with --context NAME; saved: %s)", strings.Join(cfg.names(), ", "))
	}
	c, ok := cfg.Contexts[name]
	if !ok {
		return fmt.Errorf(msgNoContext, name, path, strings.Join(cfg.names(), ", "), name)
	}
	cfg.Current = name
	if err := cfg.save(path); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "using context %q: %s\n", name, c.URL)
	return nil
}

// readKey takes the API key from the environment, else asks for it on a terminal without echo,
// else reads the first line of standard input.
func readKey(cmd *cobra.Command, url string) (string, error) {
	if k := strings.TrimSpace(os.Getenv(envAPIKey)); k != "" {
		return k, nil
	}
	in := cmd.InOrStdin()
	var key string
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprintf(cmd.ErrOrStderr(), "API key for %s: ", url)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(cmd.ErrOrStderr())
		if err != nil {
			return "", fmt.Errorf("reading the API key: %w", err)
		}
		key = string(b)
	} else {
		line, err := bufio.NewReader(in).ReadString('\n')
		if err != nil && err != io.EOF {
			return "", fmt.Errorf("reading the API key from standard input: %w", err)
		}
		key = line
	}
	if key = strings.TrimSpace(key); key == "" {
		return "", fmt.Errorf("no API key given: set %s, type it when asked, or pipe it in (or use --profile)", envAPIKey)
	}
	return key, nil
}

// checkLogin lists one job with the new credentials: a wrong key or an unmapped IAM caller is
// refused now, not on the next command.
func checkLogin(cmd *cobra.Command, c cliContext) error {
	t := target{url: c.URL, apiKey: c.APIKey, profile: c.Profile, region: c.Region}
	client, err := t.client(cmd.Context())
	if err != nil {
		return err
	}
	if _, err := client.Jobs(cmd.Context(), apiclient.JobFilter{}, apiclient.ListOptions{Limit: 1}); err != nil {
		return fmt.Errorf("checking the credentials with %s: %w%s", c.URL, err, gatewayHint(err, c))
	}
	return nil
}

// What to say when API Gateway, not Tidegate, refused a login: a deployment has one API per kind
// of credential (template.yaml's outputs ApiUrl and KeyApiUrl), and each refuses the other kind.
const (
	hintSigned = "; API Gateway refused the signed request before Tidegate saw it: log in with --profile to the stack's ApiUrl output (KeyApiUrl takes API keys only), and check the profile may call execute-api:Invoke"
	hintKey    = "; API Gateway refused the key before Tidegate saw it: log in with an API key to the stack's KeyApiUrl output (ApiUrl takes SigV4-signed requests only: use --profile there)"
)

// gatewayHint is what to add to a login's error when API Gateway refused it (a 401 or 403 without
// Tidegate's error code), "" otherwise.
func gatewayHint(err error, c cliContext) string {
	var e *apiclient.Error
	if !errors.As(err, &e) || e.Code != "" || (e.Status != http.StatusUnauthorized && e.Status != http.StatusForbidden) {
		return ""
	}
	if c.Profile != "" {
		return hintSigned
	}
	return hintKey
}

// saveDevContext is what `tidegate dev` does once its stack serves: save it as the context "dev",
// and make that current unless another context already is (then say how to switch).
func saveDevContext(st devstack.State, say io.Writer) {
	path, err := configPath()
	if err == nil {
		var cfg cliConfig
		if cfg, err = loadConfig(path); err == nil {
			cfg.Contexts[devContext] = cliContext{URL: st.URL, APIKey: st.APIKey}
			switched := cfg.Current == "" || cfg.Current == devContext
			if switched {
				cfg.Current = devContext
			}
			if err = cfg.save(path); err == nil {
				if switched {
					fmt.Fprintf(say, "tidegate dev: the CLI now talks to this stack (context %q in %s): try `tidegate jobs list`\n", devContext, path)
				} else {
					fmt.Fprintf(say, "tidegate dev: saved as context %q; the CLI still uses %q: switch with `tidegate login --context %s`\n", devContext, cfg.Current, devContext)
				}
				return
			}
		}
	}
	fmt.Fprintf(say, "tidegate dev: could not save the CLI's context (%v); use eval \"$(tidegate dev env)\" instead\n", err)
}
