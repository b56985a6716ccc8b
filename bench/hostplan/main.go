// Command hostplan times the host plan against the seed runner's own planned() (Python) on the
// same cluster: N apps with five pods each, as ../shared/bench/seed_plan_bench.py builds it and
// seedinput mirrors. It runs that script when it is there beside the repository, reads its best of
// 3, times hostplan.Plan best of 3 on the same input, and prints both and the ratio as a markdown
// row; progress goes to stderr. Goal: the Go plan at least 100× faster.
//
//	go run ./bench/hostplan [-n 10000]
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"time"

	"github.com/tidegate/tidegate/bench/hostplan/seedinput"
	"github.com/tidegate/tidegate/shared/hostplan"
)

// seedScript is where the seed's benchmark sits, relative to the repository's root.
const seedScript = "../shared/bench/seed_plan_bench.py"

// goalRatio is how many times faster than the seed's planned() the Go plan is to be: the seed's
// plan scans every pod for every app, and the Go one reads each pod once.
const goalRatio = 100.0

// seedSays is the line the seed's benchmark ends with, for example
// "seed planned(): 10000 apps, 50000 pods, 41940 steps, best of 3: 45210 ms".
var seedSays = regexp.MustCompile(`(\d+) steps, best of 3: (\d+) ms`)

func main() {
	n := flag.Int("n", 10_000, "apps to plan, five pods each")
	runs := flag.Int("runs", 3, "runs of the Go plan; the fastest counts, as the seed's script does")
	seed := flag.String("seed", seedScript, "the seed's benchmark script, relative to the repository's root unless absolute")
	flag.Parse()
	if err := run(*n, *runs, *seed); err != nil {
		fmt.Fprintf(os.Stderr, "hostplan bench: %v\n", err)
		os.Exit(1)
	}
}

func say(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "hostplan bench: "+format+"\n", args...)
}

func run(n, runs int, seed string) error {
	if n < 1 || runs < 1 {
		return fmt.Errorf("-n %d -runs %d: both must be at least 1", n, runs)
	}
	in := seedinput.Build(n)
	best, steps := timePlan(in, runs)
	say("Go plan: %d apps, %d pods, %d steps, best of %d: %s", n, len(in.Containers), steps, runs, ms(best))

	script, err := findSeedScript(seed)
	if err != nil {
		say("skipping the comparison with the seed's planned(): %v", err)
		printRows(n, len(in.Containers), best, 0)
		return nil
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		say("skipping the comparison with the seed's planned(): no python3 on PATH to run %s", script)
		printRows(n, len(in.Containers), best, 0)
		return nil
	}
	say("the seed's planned() on the same %d apps, best of 3 (minutes: it scans every pod for every app)", n)
	var out bytes.Buffer
	cmd := exec.Command(python, script, strconv.Itoa(n))
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("running %s %d: %w", script, n, err)
	}
	say("%s", bytes.TrimSpace(out.Bytes()))
	m := seedSays.FindSubmatch(out.Bytes())
	if m == nil {
		return fmt.Errorf("%s printed %q, not the %q line this reads", script, out.String(), seedSays)
	}
	seedSteps, _ := strconv.Atoi(string(m[1]))
	seedMS, _ := strconv.Atoi(string(m[2]))
	if seedSteps != steps {
		return fmt.Errorf("the seed planned %d steps and the Go plan %d: the two did not plan the same cluster; compare seedinput with %s", seedSteps, steps, script)
	}
	printRows(n, len(in.Containers), best, time.Duration(seedMS)*time.Millisecond)
	return nil
}

// timePlan is the fastest of runs plans of in, each after an untimed one and a collection, and the
// number of steps planned.
func timePlan(in seedinput.Input, runs int) (time.Duration, int) {
	var best time.Duration
	steps := 0
	for range runs {
		hostplan.Plan(in.Apps, in.Containers, in.Crashes, seedinput.Now)
		runtime.GC()
		start := time.Now()
		planned := hostplan.Plan(in.Apps, in.Containers, in.Crashes, seedinput.Now)
		if t := time.Since(start); best == 0 || t < best {
			best = t
		}
		steps = 0
		for _, todo := range planned {
			steps += len(todo)
		}
	}
	return best, steps
}

// findSeedScript is the seed's benchmark at path, a relative path taken from the repository's root:
// the nearest folder up from here with a go.mod.
func findSeedScript(path string) (string, error) {
	if filepath.IsAbs(path) {
		return existing(path, path)
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the repository's root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod here or above: run it from inside the repository")
		}
		dir = up
	}
	return existing(filepath.Clean(filepath.Join(dir, path)), path)
}

// existing is script when it is there; asked is how it was asked for.
func existing(script, asked string) (string, error) {
	if _, err := os.Stat(script); errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s (asked for as %s) is not there", script, asked)
	} else if err != nil {
		return "", err
	}
	return script, nil
}

// printRows prints the figures as BENCHMARKS.md rows; seed is 0 when the seed was not run.
func printRows(n, pods int, goPlan, seed time.Duration) {
	fmt.Println("| Apps (pods) | seed planned(), best of 3 | hostplan.Plan, best of 3 | × faster (goal ≥ 100×) |")
	fmt.Println("|--:|--:|--:|--:|")
	if seed == 0 {
		fmt.Printf("| %d (%d) | not run | %s | — |\n", n, pods, ms(goPlan))
		return
	}
	ratio := float64(seed) / float64(goPlan)
	mark := ""
	if ratio < goalRatio {
		mark = " (under goal)"
	}
	fmt.Printf("| %d (%d) | %s | %s | %.0f×%s |\n", n, pods, ms(seed), ms(goPlan), ratio, mark)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
