// Command decodemem measures the peak heap of decoding the worst 1 MiB manifest bodies: the
// strict JSON and YAML decoders of shared/manifest, and the whole admission of a body (decoding
// and then the policy check that turns it into typed objects), against the goal of 32 MiB for
// each. Each body is decoded in a fresh process of this program, so that nothing else lives
// on its heap: the child builds the body, collects garbage, then decodes it once while a
// goroutine reads the runtime's count of heap object bytes in a tight loop. The peak is the
// highest reading, the heap's size after the collection before it included (the body itself,
// and the runtime's own few hundred KiB), so it is what the function's heap held at most.
//
// Its markdown table gives each body's peak against the floor measured in the same run, the
// body's own size, as the ratio; the goal is 32× (32 MiB for a 1 MiB body).
//
//	go run ./bench/decodemem [-runs 3]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/tidegate/tidegate/shared/policy"
)

// childEnv names the body a child process decodes.
const childEnv = "TIDEGATE_DECODEMEM_BODY"

// goalMiB is the bound on the peak heap of one 1 MiB body.
const goalMiB = 32

func main() {
	runs := flag.Int("runs", 3, "fresh processes per body; the highest peak counts")
	flag.Parse()
	if name := os.Getenv(childEnv); name != "" {
		if err := child(name); err != nil {
			fmt.Fprintf(os.Stderr, "decodemem bench: %s: %v\n", name, err)
			os.Exit(1)
		}
		return
	}
	if err := parent(*runs); err != nil {
		fmt.Fprintf(os.Stderr, "decodemem bench: %v\n", err)
		os.Exit(1)
	}
}

func say(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "decodemem bench: "+format+"\n", args...)
}

// measurement is what a child prints: the body's size, the peak heap, the bytes allocated
// while decoding, and how the decode ended.
type measurement struct {
	Body    int    `json:"body"`
	Peak    uint64 `json:"peak"`
	Before  uint64 `json:"before"`
	Alloc   uint64 `json:"alloc"`
	Outcome string `json:"outcome"`
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func parent(runs int) error {
	if runs < 1 {
		return fmt.Errorf("-runs %d: must be at least 1", runs)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	results := map[string]measurement{}
	for _, b := range bodies {
		var worst measurement
		for i := 0; i < runs; i++ {
			m, err := runChild(self, b.name)
			if err != nil {
				return fmt.Errorf("%s: %w", b.name, err)
			}
			if m.Peak > worst.Peak {
				worst = m
			}
		}
		say("%s: peak %s, %s allocated, %s", b.name, mib(worst.Peak), mib(worst.Alloc), worst.Outcome)
		results[b.name] = worst
	}
	printTable(results)
	return nil
}

func runChild(self, name string) (measurement, error) {
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), childEnv+"="+name)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return measurement{}, err
	}
	var m measurement
	if err := json.Unmarshal(out, &m); err != nil {
		return measurement{}, fmt.Errorf("child printed %q: %w", out, err)
	}
	return m, nil
}

// heapBytes is the runtime's count of bytes in heap objects, live or not yet swept.
const heapBytes = "/memory/classes/heap/objects:bytes"

const allocBytes = "/gc/heap/allocs:bytes"

func read(samples []metrics.Sample) (heap, alloc uint64) {
	metrics.Read(samples)
	return samples[0].Value.Uint64(), samples[1].Value.Uint64()
}

// child decodes one body and prints its measurement as JSON.
func child(name string) error {
	b, ok := bodyNamed(name)
	if !ok {
		return fmt.Errorf("no body named %q", name)
	}
	body := b.build()
	if checker == nil {
		var err error
		if checker, err = policy.NewChecker(policy.Config{}); err != nil {
			return err
		}
	}
	samples := []metrics.Sample{{Name: heapBytes}, {Name: allocBytes}}
	runtime.GC()
	before, allocBefore := read(samples)
	var peak atomic.Uint64
	peak.Store(before)
	stop, done := make(chan struct{}), make(chan struct{})
	go sample(&peak, stop, done)
	outcome := b.decode(body)
	heap, allocAfter := read(samples)
	close(stop)
	<-done
	if heap > peak.Load() {
		peak.Store(heap)
	}
	runtime.KeepAlive(body)
	m := measurement{Body: len(body), Peak: peak.Load(), Before: before, Alloc: allocAfter - allocBefore, Outcome: outcome}
	return json.NewEncoder(os.Stdout).Encode(m)
}

// sample keeps the highest heap reading until stop closes. It has a core of its own on a
// machine of two or more (GOMAXPROCS permitting), and one reading takes a microsecond or so,
// while the decoders allocate at most a few hundred bytes in that time.
func sample(peak *atomic.Uint64, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	samples := []metrics.Sample{{Name: heapBytes}, {Name: allocBytes}}
	for {
		select {
		case <-stop:
			return
		default:
		}
		if h, _ := read(samples); h > peak.Load() {
			peak.Store(h)
		}
	}
}

// outcome says how a decode ended, briefly.
func outcome(n int, err error) string {
	if err != nil {
		s := err.Error()
		if i := strings.Index(s, ";"); i > 0 {
			s = s[:i]
		}
		return "refused: " + s
	}
	return "accepted, " + strconv.Itoa(n) + " manifests"
}
