package samcheck

import (
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/tidegate/tidegate/shared/metrics"
)

const (
	typeAlarm     = "AWS::CloudWatch::Alarm"
	typeDashboard = "AWS::CloudWatch::Dashboard"
)

// checkMetrics holds the alarms and dashboards to the metrics the code publishes: every metric in
// Tidegate's namespace that an alarm watches, or a dashboard widget draws, must be one of
// shared/metrics.All, and an alarm must name it under one of the dimension sets it is published
// under. Otherwise the alarm watches a series no data ever reaches: with missing data treated
// as not breaching it never goes off, which is worse than no alarm.
func checkMetrics(t *Template) []Problem {
	var ps []Problem
	resources, _ := dig(t.doc, "Resources").(map[string]any)
	for _, id := range slices.Sorted(maps.Keys(resources)) {
		switch t.resourceType(id) {
		case typeAlarm:
			for _, m := range alarmMetrics(dig(t.resource(id), "Properties")) {
				ps = append(ps, checkAlarmMetric(id, m)...)
			}
		case typeDashboard:
			body, _ := dig(t.resource(id), "Properties", "DashboardBody").(string)
			for _, name := range dashboardMetrics(body) {
				if _, ok := metrics.Named(name); !ok {
					ps = append(ps, problem(RuleMetrics, id, "draws %s.%s, which no function publishes; name one of shared/metrics.All or add it there", metrics.Namespace, name))
				}
			}
		}
	}
	return ps
}

// alarmMetric is one metric an alarm reads: its namespace, name and dimensions' names.
type alarmMetric struct {
	namespace, name string
	dimensions      []string
}

// alarmMetrics are the metrics an alarm's properties read: the one it names itself, or each
// MetricStat among its Metrics.
func alarmMetrics(props any) []alarmMetric {
	var out []alarmMetric
	if name, ok := dig(props, "MetricName").(string); ok {
		ns, _ := dig(props, "Namespace").(string)
		out = append(out, alarmMetric{ns, name, dimensionNames(dig(props, "Dimensions"))})
	}
	queries, _ := dig(props, "Metrics").([]any)
	for _, q := range queries {
		m := dig(q, "MetricStat", "Metric")
		if name, ok := dig(m, "MetricName").(string); ok {
			ns, _ := dig(m, "Namespace").(string)
			out = append(out, alarmMetric{ns, name, dimensionNames(dig(m, "Dimensions"))})
		}
	}
	return out
}

func dimensionNames(v any) []string {
	list, _ := v.([]any)
	var names []string
	for _, d := range list {
		if n, ok := dig(d, "Name").(string); ok {
			names = append(names, n)
		}
	}
	return names
}

func checkAlarmMetric(id string, am alarmMetric) []Problem {
	if am.namespace != metrics.Namespace {
		return nil // AWS's own metrics
	}
	m, ok := metrics.Named(am.name)
	if !ok {
		return []Problem{problem(RuleMetrics, id, "watches %s.%s, which no function publishes; name one of shared/metrics.All or add it there", am.namespace, am.name)}
	}
	got := slices.Sorted(slices.Values(am.dimensions))
	var sets []string
	for _, set := range m.DimensionSets() {
		if slices.Equal(got, slices.Sorted(slices.Values(set))) {
			return nil
		}
		sets = append(sets, "["+strings.Join(set, ", ")+"]")
	}
	return []Problem{problem(RuleMetrics, id, "watches %s under dimensions [%s], but it is published under %s; give one of those", am.name, strings.Join(got, ", "), strings.Join(sets, " or "))}
}

// A dashboard names Tidegate's metrics in SEARCH expressions (…MetricName="QueuedJobs"…) and in
// metric arrays (["Tidegate", "BeatDuration", …]).
var (
	searchedMetric = regexp.MustCompile(`\{` + metrics.Namespace + `[,}][^'"]*['"]?[^'"]*MetricName=\\?"(\w+)`)
	arrayMetric    = regexp.MustCompile(`\[\s*"` + metrics.Namespace + `"\s*,\s*"(\w+)"`)
)

// dashboardMetrics are the names of Tidegate's metrics a dashboard body draws, in order.
func dashboardMetrics(body string) []string {
	var out []string
	for _, re := range []*regexp.Regexp{searchedMetric, arrayMetric} {
		for _, m := range re.FindAllStringSubmatch(body, -1) {
			out = append(out, m[1])
		}
	}
	return out
}
