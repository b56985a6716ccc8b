package main

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tidegate/tidegate/shared/apiclient"
)

// Shell completion (`tidegate completion bash|zsh|fish|powershell`) offers the API's own ids and
// names. A completion that cannot reach the API offers nothing rather than files.

// completeTimeout keeps a slow API from hanging the shell on Tab.
const completeTimeout = 3 * time.Second

type completion = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)

// fixedCompletions offers a closed set of values.
func fixedCompletions(values ...string) completion {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

// fromAPI offers what list answers, filtered by the prefix typed so far.
func fromAPI(s *session, list func(context.Context, *apiclient.Client) ([]string, error)) completion {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		ctx, cancel := context.WithTimeout(cmd.Context(), completeTimeout)
		defer cancel()
		c, err := s.client(ctx)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		names, err := list(ctx, c)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, n := range names {
			if strings.HasPrefix(n, toComplete) {
				out = append(out, n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeJobs offers the newest jobs' ids, with their status as the description.
func completeJobs(s *session) completion {
	return fromAPI(s, func(ctx context.Context, c *apiclient.Client) ([]string, error) {
		page, err := c.Jobs(ctx, apiclient.JobFilter{}, apiclient.ListOptions{Limit: 100})
		var out []string
		for _, j := range page.Items {
			out = append(out, j.ID+"\t"+j.Status+" in "+j.Region)
		}
		return out, err
	})
}

func completeTemplates(s *session) completion {
	return fromAPI(s, func(ctx context.Context, c *apiclient.Client) ([]string, error) {
		page, err := c.Templates(ctx, apiclient.ListOptions{Limit: 100})
		var out []string
		for _, t := range page.Items {
			out = append(out, t.Name)
		}
		return out, err
	})
}

func completeWebhooks(s *session) completion {
	return fromAPI(s, func(ctx context.Context, c *apiclient.Client) ([]string, error) {
		page, err := c.Webhooks(ctx, apiclient.ListOptions{Limit: 100})
		var out []string
		for _, w := range page.Items {
			out = append(out, w.ID+"\t"+w.URL)
		}
		return out, err
	})
}

func completeApps(s *session) completion {
	return fromAPI(s, func(ctx context.Context, c *apiclient.Client) ([]string, error) {
		page, err := c.Apps(ctx, apiclient.ListOptions{Limit: 100})
		var out []string
		for _, a := range page.Items {
			out = append(out, a.Name+"\t"+a.State)
		}
		return out, err
	})
}

func completeSecrets(s *session) completion {
	return fromAPI(s, func(ctx context.Context, c *apiclient.Client) ([]string, error) {
		page, err := c.Secrets(ctx, apiclient.ListOptions{})
		var out []string
		for _, sec := range page.Items {
			out = append(out, sec.Name)
		}
		return out, err
	})
}

// completeRegions offers the API's regions, as its queue stats list them.
func completeRegions(s *session) completion {
	return fromAPI(s, func(ctx context.Context, c *apiclient.Client) ([]string, error) {
		st, err := c.QueueStats(ctx)
		var out []string
		for _, r := range st.Regions {
			out = append(out, r.Region)
		}
		return out, err
	})
}

// completeContexts offers the saved contexts.
func completeContexts(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	path, err := configPath()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	cfg, err := loadConfig(path)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return cfg.names(), cobra.ShellCompDirectiveNoFileComp
}
