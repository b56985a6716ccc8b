package jobs

import (
	"fmt"
	"slices"
	"strings"
)

// Workflow is a workflow's graph, kept on its parent record: named steps, each one job, each
// waiting for the success of the steps it comes after. The parent runs nothing itself; like an
// array's, it is running while its jobs are and ends when they all have: succeeded when every
// one did, failed when any failed or was cancelled (a job whose step before it failed is
// cancelled dependency_not_met, down the graph).
type Workflow struct {
	Name  string `json:"name" dynamodbav:"name"`
	Steps []Step `json:"steps" dynamodbav:"steps"`
}

// Step is one job of a workflow: its name there, its id once stored, and the steps it comes after.
type Step struct {
	Name  string   `json:"name" dynamodbav:"name"`
	Job   string   `json:"job" dynamodbav:"job"`
	After []string `json:"after,omitempty" dynamodbav:"after,omitempty"`
}

// MaxWorkflowSteps bounds a workflow, as the issue and Argo's defaults do: beyond a few hundred
// jobs, an array is the shape that scales.
const MaxWorkflowSteps = 500

// Group reports whether j is a parent that runs nothing itself and counts its children's ends:
// an array's or a workflow's.
func (j Job) Group() bool { return j.Array != nil || j.Workflow != nil }

// GroupSize is how many children a group has.
func (j Job) GroupSize() int {
	switch {
	case j.Array != nil:
		return j.Array.Size
	case j.Workflow != nil:
		return len(j.Workflow.Steps)
	}
	return 0
}

// CheckGraph lists what is wrong with a workflow's steps as submitted (field path and what to
// fix): a name missing, not a DNS label or given twice, an after naming no step or itself; and
// answers the order to store them in, each step after those it comes after. A cycle is named
// step by step ("a → b → a") in cycle, for a 422.
func CheckGraph(steps []Step, isName func(string) bool) (order []int, bad [][2]string, cycle string) {
	if len(steps) == 0 || len(steps) > MaxWorkflowSteps {
		return nil, [][2]string{{"jobs", fmt.Sprintf("must list 1 to %d jobs; for more of one kind, make a step an array", MaxWorkflowSteps)}}, ""
	}
	index := map[string]int{}
	for i, s := range steps {
		field := fmt.Sprintf("jobs[%d].name", i)
		switch _, twice := index[s.Name]; {
		case !isName(s.Name):
			bad = append(bad, [2]string{field, "required: the step's name, a DNS label (lowercase letters, digits and '-')"})
		case twice:
			bad = append(bad, [2]string{field, fmt.Sprintf("%q names two steps; name each once", s.Name)})
		default:
			index[s.Name] = i
		}
	}
	for i, s := range steps {
		for k, a := range s.After {
			field := fmt.Sprintf("jobs[%d].after[%d]", i, k)
			if _, ok := index[a]; !ok || a == s.Name {
				bad = append(bad, [2]string{field, fmt.Sprintf("%q is not another step of this workflow", a)})
			}
		}
	}
	if len(bad) > 0 {
		return nil, bad, ""
	}
	return topological(steps, index)
}

// topological orders steps so that each comes after those it names, or names a cycle.
func topological(steps []Step, index map[string]int) ([]int, [][2]string, string) {
	const (
		unseen = iota
		open
		done
	)
	state := make([]int, len(steps))
	var order []int
	var path []string
	var visit func(i int) string
	visit = func(i int) string {
		switch state[i] {
		case done:
			return ""
		case open:
			start := slices.Index(path, steps[i].Name)
			return strings.Join(append(slices.Clone(path[start:]), steps[i].Name), " → ")
		}
		state[i] = open
		path = append(path, steps[i].Name)
		for _, a := range steps[i].After {
			if c := visit(index[a]); c != "" {
				return c
			}
		}
		path = path[:len(path)-1]
		state[i] = done
		order = append(order, i)
		return ""
	}
	for i := range steps {
		if c := visit(i); c != "" {
			return nil, nil, c
		}
	}
	return order, nil, ""
}
