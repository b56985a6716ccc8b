package httpapi

import (
	"fmt"
	"slices"
	"strings"
)

// checkRegions settles where a submission may run: region, or regions (a drain then picks the
// cheapest open one with room among them, at each drain). Each must be a configured region, none
// twice, and not both fields. One region given as regions is that region.
func (a *api) checkRegions(s *submission) []FieldProblem {
	oneOf := "one of " + strings.Join(a.regions, ", ")
	switch {
	case s.regions != nil && s.region != "":
		return []FieldProblem{{"regions", "give region or regions, not both"}}
	case s.regions == nil && s.region == "":
		return []FieldProblem{{"region", "required; " + oneOf}}
	case s.regions == nil:
		if !slices.Contains(a.regions, s.region) {
			return []FieldProblem{{"region", "must be " + oneOf}}
		}
		return nil
	case len(s.regions) == 0:
		return []FieldProblem{{"regions", "list at least one region; " + oneOf}}
	}
	var bad []FieldProblem
	for i, r := range s.regions {
		field := fmt.Sprintf("regions[%d]", i)
		switch {
		case !slices.Contains(a.regions, r):
			bad = append(bad, FieldProblem{field, "must be " + oneOf})
		case slices.Index(s.regions, r) < i:
			bad = append(bad, FieldProblem{field, fmt.Sprintf("%s is listed twice; list each region once", r)})
		}
	}
	if len(bad) == 0 && len(s.regions) == 1 {
		s.region = s.regions[0]
	}
	return bad
}

// wakeRegions are the regions whose drains a new job concerns: its own, or every one it may run in.
func wakeRegions(s submission) []string {
	if s.region != "" {
		return []string{s.region}
	}
	return s.regions
}
