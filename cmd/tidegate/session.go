package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tidegate/tidegate/shared/apiclient"
)

// The environment the API commands read; each overrides the context, and a flag overrides it.
const (
	envURL     = "TIDEGATE_URL"
	envAPIKey  = "TIDEGATE_API_KEY"
	envContext = "TIDEGATE_CONTEXT"
	envProfile = "AWS_PROFILE"
	envNoColor = "NO_COLOR" // https://no-color.org
)

// Messages a person reads when the CLI does not know where or who to be.
const (
	msgNoURL = "no API to talk to: run `tidegate login --url URL`, start one here with `make dev`, " +
		"or set " + envURL
	msgNoCredentials = "no credentials for %s: set " + envAPIKey + ", sign with an AWS profile (--profile), " +
		"or save them with `tidegate login --url %s`"
	msgNoContext   = "no context %q in %s; the saved ones are: %s (add one with `tidegate login --context %s --url URL`)"
	msgNoSigRegion = "no AWS region to sign requests to %s for: set one in profile %q, or AWS_REGION"
)

// session is what every API command shares: the flags that choose the API and the output, read
// once into a client and a printer.
type session struct {
	url, profile, context string
	output                string
	noColor               bool
}

// addFlags puts the API flags on a command group; its subcommands inherit them.
func (s *session) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&s.url, "url", "", "the API's URL (overrides "+envURL+" and the context)")
	fs.StringVar(&s.profile, "profile", "", "sign requests with this AWS profile's credentials (SigV4, for API Gateway's IAM auth)")
	fs.StringVar(&s.context, "context", "", "the saved context to use (overrides "+envContext+" and the current one)")
	fs.StringVarP(&s.output, "output", "o", "table", "table, json or yaml")
	fs.BoolVar(&s.noColor, "no-color", false, "no colour, even on a terminal (also "+envNoColor+")")
}

// target is the API a command talks to and how it authenticates, once flags, environment and the
// saved context are weighed.
type target struct {
	url     string
	apiKey  string
	profile string
	region  string
}

// resolve picks the API and credentials: a flag, then the environment, then the context. A
// context's credentials are sent only to its own URL, never to one a flag or variable names.
func (s *session) resolve() (target, error) {
	path, err := configPath()
	if err != nil {
		return target{}, err
	}
	cfg, err := loadConfig(path)
	if err != nil {
		return target{}, err
	}
	name := firstOf(s.context, os.Getenv(envContext), cfg.Current)
	ctxv, found := cfg.Contexts[name]
	if !found && firstOf(s.context, os.Getenv(envContext)) != "" {
		return target{}, fmt.Errorf(msgNoContext, name, path, strings.Join(cfg.names(), ", "), name)
	}
	t := target{url: firstOf(s.url, os.Getenv(envURL), ctxv.URL)}
	if t.url == "" {
		return t, fmt.Errorf("%s", msgNoURL)
	}
	own := found && strings.TrimRight(t.url, "/") == strings.TrimRight(ctxv.URL, "/")
	switch {
	case s.profile != "":
		t.profile = s.profile
	case os.Getenv(envAPIKey) != "":
		t.apiKey = os.Getenv(envAPIKey)
	case own && ctxv.Profile != "":
		t.profile = firstOf(os.Getenv(envProfile), ctxv.Profile)
	case own && ctxv.APIKey != "":
		t.apiKey = ctxv.APIKey
	default:
		return t, fmt.Errorf(msgNoCredentials, t.url, t.url)
	}
	if own {
		t.region = ctxv.Region
	}
	return t, nil
}

// client is the API client for this invocation.
func (s *session) client(ctx context.Context) (*apiclient.Client, error) {
	t, err := s.resolve()
	if err != nil {
		return nil, err
	}
	return t.client(ctx)
}

func (t target) client(ctx context.Context) (*apiclient.Client, error) {
	opt := apiclient.Options{URL: t.url, UserAgent: "tidegate-cli", Auth: apiclient.APIKey(t.apiKey)}
	if t.profile != "" {
		sig, err := sigV4(ctx, t.url, t.profile, t.region)
		if err != nil {
			return nil, err
		}
		opt.Auth = sig
	}
	return apiclient.New(opt)
}

// sigV4 signs with the profile's credentials, scoped to the region the API's host names, else the
// context's, else the profile's.
func sigV4(ctx context.Context, apiURL, profile, region string) (*apiclient.SigV4, error) {
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithSharedConfigProfile(profile))
	if err != nil {
		return nil, fmt.Errorf("loading AWS profile %q: %w", profile, err)
	}
	u, err := url.Parse(apiURL)
	if err != nil {
		return nil, fmt.Errorf("the API URL %q is not a URL", apiURL)
	}
	region = firstOf(apiclient.RegionOfHost(u.Hostname()), region, awsCfg.Region)
	if region == "" {
		return nil, fmt.Errorf(msgNoSigRegion, apiURL, profile)
	}
	return &apiclient.SigV4{Credentials: awsCfg.Credentials, Region: region}, nil
}

// printer is this invocation's output, writing to the command's streams.
func (s *session) printer(cmd *cobra.Command) (*printer, error) {
	return newPrinter(s.output, cmd.OutOrStdout(), cmd.ErrOrStderr(), s.noColor || os.Getenv(envNoColor) != "")
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// apiGroup makes a command group whose commands talk to the API with s's flags.
func apiGroup(s *session, use, short string, cmds ...*cobra.Command) *cobra.Command {
	g := &cobra.Command{Use: use, Short: short}
	s.addFlags(g.PersistentFlags())
	_ = g.RegisterFlagCompletionFunc("output", fixedCompletions("table", "json", "yaml"))
	_ = g.RegisterFlagCompletionFunc("context", completeContexts)
	g.AddCommand(cmds...)
	return g
}
