package hostplan

// Group is the plan's own grouping of the pods by app, alone: the floor the benchmarks measure
// Plan against. It answers how many pods it grouped, so that the work is not optimised away.
func Group(apps []App, containers []Container) int { return group(apps, containers).pods }
