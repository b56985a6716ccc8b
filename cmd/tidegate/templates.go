package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tidegate/tidegate/shared/apiclient"
)

func templatesCmd(s *session) *cobra.Command {
	return apiGroup(s, "templates", "Keep job manifests with {{ key }} placeholders, and run them",
		templatesCreateCmd(s), templatesListCmd(s), templatesGetCmd(s), templatesDeleteCmd(s), templatesRunCmd(s))
}

func templatesCreateCmd(s *session) *cobra.Command {
	var file, name, description string
	var params, jsonParams []string
	cmd := &cobra.Command{
		Use:   "create -f FILE|- [--name NAME]",
		Short: "Create a template from a file",
		Long: `FILE (YAML or JSON) is either a template — name, description, manifest and parameters (the
placeholders' defaults) — or a bare manifest, named with --name, with defaults from --param.`,
		Example: `  tidegate templates create -f train-template.yaml
  tidegate templates create -f job.yaml --name train --param tag=1.36 --param-json workers=2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := s.printer(cmd)
			if err != nil {
				return err
			}
			body, err := readInput(cmd, file)
			if err != nil {
				return err
			}
			tr, err := templateRequest(body, name, description, params, jsonParams)
			if err != nil {
				return err
			}
			c, err := s.client(cmd.Context())
			if err != nil {
				return err
			}
			t, err := c.CreateTemplate(cmd.Context(), tr)
			if err != nil {
				return err
			}
			return p.emit(t, func() {
				p.line("template %s created; run it with `tidegate templates run %s --name JOB -n NAMESPACE`", t.Name, t.Name)
				for _, w := range t.Warnings {
					p.line("warning: %s", w)
				}
			})
		},
	}
	cmd.Flags().StringVarP(&file, "filename", "f", "", "the template or manifest, YAML or JSON; - for standard input (required)")
	cmd.Flags().StringVar(&name, "name", "", "the template's name, a DNS label (overrides the file's)")
	cmd.Flags().StringVar(&description, "description", "", "a sentence on what the template is for (overrides the file's)")
	addParamFlags(cmd, &params, &jsonParams, "a default for a placeholder")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}

// addParamFlags adds --param (a string) and --param-json (any JSON value) k=v flags.
func addParamFlags(cmd *cobra.Command, params, jsonParams *[]string, what string) {
	cmd.Flags().StringArrayVar(params, "param", nil, what+", as text: key=value; repeat for more")
	cmd.Flags().StringArrayVar(jsonParams, "param-json", nil, what+", as a JSON value (a number, true, a list): key=4")
}

// parseParams reads --param (text, kept exactly: a tag 1.10 stays "1.10") and --param-json (a JSON
// value, so a number stays a number in the filled manifest).
func parseParams(params, jsonParams []string) (map[string]any, error) {
	out := map[string]any{}
	for _, kv := range params {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--param %q is not key=value", kv)
		}
		out[k] = v
	}
	for _, kv := range jsonParams {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--param-json %q is not key=JSON", kv)
		}
		var val any
		if err := json.Unmarshal([]byte(v), &val); err != nil {
			return nil, fmt.Errorf("--param-json %s: %q is not JSON (quote text, or use --param)", k, v)
		}
		out[k] = val
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// templateRequest reads a template file, or wraps a bare manifest (one with a kind) in one.
func templateRequest(body []byte, name, description string, params, jsonParams []string) (apiclient.TemplateRequest, error) {
	docs, err := documents(body)
	if err != nil {
		return apiclient.TemplateRequest{}, err
	}
	if len(docs) != 1 {
		return apiclient.TemplateRequest{}, fmt.Errorf("a template holds one manifest; this input holds %d documents", len(docs))
	}
	var probe struct {
		Kind string `json:"kind"`
	}
	_ = json.Unmarshal(docs[0], &probe)
	var tr apiclient.TemplateRequest
	if probe.Kind != "" {
		tr.Manifest = docs[0]
	} else if err := json.Unmarshal(docs[0], &tr); err != nil {
		return tr, fmt.Errorf("the template file is not name, description, manifest and parameters: %w", err)
	}
	defaults, err := parseParams(params, jsonParams)
	if err != nil {
		return tr, err
	}
	for k, v := range defaults {
		if tr.Parameters == nil {
			tr.Parameters = map[string]any{}
		}
		tr.Parameters[k] = v
	}
	tr.Name = firstOf(name, tr.Name)
	tr.Description = firstOf(description, tr.Description)
	if tr.Name == "" {
		return tr, fmt.Errorf("name the template: --name NAME, or name: in the file")
	}
	return tr, nil
}

func templatesListCmd(s *session) *cobra.Command {
	var l listFlags
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List your templates",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, c, err := s.open(cmd)
			if err != nil {
				return err
			}
			page, err := apiclient.Collect(cmd.Context(), l.max(), l.cursor, c.Templates)
			if err != nil {
				return err
			}
			return p.emit(page, func() {
				t := &table{header: []string{"NAME", "KIND", "PARAMETERS", "DESCRIPTION", "UPDATED"}}
				for _, tp := range page.Items {
					kind, _ := tp.Manifest["kind"].(string)
					t.add(plain(tp.Name), plain(kind), plain(paramNames(tp)), plain(tp.Description), plain(p.age(tp.UpdatedAt)))
				}
				p.print(t)
				moreNote(p, page.NextCursor)
			})
		},
	}
	l.add(cmd)
	return cmd
}

// paramNames lists the parameters a template has defaults for.
func paramNames(t apiclient.Template) string {
	names := make([]string, 0, len(t.Parameters))
	for k := range t.Parameters {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

func templatesGetCmd(s *session) *cobra.Command {
	return &cobra.Command{
		Use:               "get NAME",
		Short:             "Show a template with its manifest",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeTemplates(s),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, c, err := s.open(cmd)
			if err != nil {
				return err
			}
			t, err := c.Template(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return p.emit(t, func() {
				defaults, _ := json.Marshal(t.Parameters)
				p.kv([2]string{"Name", t.Name}, [2]string{"Description", t.Description}, [2]string{"Defaults", string(defaults)},
					[2]string{"Created", when(t.CreatedAt)}, [2]string{"Updated", when(t.UpdatedAt)})
				m, _ := json.MarshalIndent(t.Manifest, "", "  ")
				p.line("Manifest:\n%s", indent(string(m), "  "))
			})
		},
	}
}

func templatesDeleteCmd(s *session) *cobra.Command {
	return &cobra.Command{
		Use:               "delete NAME",
		Aliases:           []string{"rm"},
		Short:             "Delete a template; jobs made from it are not touched",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeTemplates(s),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, c, err := s.open(cmd)
			if err != nil {
				return err
			}
			if err := c.DeleteTemplate(cmd.Context(), args[0]); err != nil {
				return err
			}
			return p.emit(map[string]string{"deleted": args[0]}, func() { p.line("template %s deleted", args[0]) })
		},
	}
}

func templatesRunCmd(s *session) *cobra.Command {
	var f submitFlags
	var jobName string
	var params, jsonParams []string
	cmd := &cobra.Command{
		Use:               "run NAME --name JOB -n NAMESPACE [--param k=v…]",
		Short:             "Submit a job made from a template, its placeholders filled from --param",
		Example:           `  tidegate templates run train --name train-7 -n team-a --param tag=1.36 --param-json workers=8 --wait`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeTemplates(s),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, c, err := s.open(cmd)
			if err != nil {
				return err
			}
			values, err := parseParams(params, jsonParams)
			if err != nil {
				return err
			}
			labels, err := parseLabels(f.labels)
			if err != nil {
				return err
			}
			tr := apiclient.TemplateRun{
				Name: jobName, Namespace: f.namespace, Region: f.region, Regions: f.regions, Parameters: values, Labels: labels,
				Priority: f.priorityPtr(cmd), MaxSpotPrice: f.spotPtr(cmd), SpotInstanceType: f.spotType,
				SpotDeadline: f.spotDeadline, OnDeadline: f.onDeadline, DependsOn: f.dependencies(), Array: f.arrayShape(),
			}
			j, err := c.RunTemplate(cmd.Context(), args[0], tr, f.idempotencyKey)
			if err != nil {
				return err
			}
			return submitted(cmd, p, c, j, f.wait)
		},
	}
	cmd.Flags().StringVar(&jobName, "name", "", "the job's object name, a DNS label (required)")
	addParamFlags(cmd, &params, &jsonParams, "a placeholder's value")
	f.add(s, cmd)
	_ = cmd.MarkFlagRequired("name")
	return cmd
}
