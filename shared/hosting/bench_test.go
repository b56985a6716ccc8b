package hosting_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/podspec"
)

// BenchmarkNoopBeatVsRawList times a hosting beat with nothing to do — 2,000 apps, each live on
// its registered host — against one raw paginated LIST of the same pods with the same selector:
// what any beat must read of the cluster at least.
//
//	go test -run '^$' -bench NoopBeatVsRawList -benchtime 1x ./shared/hosting/
func BenchmarkNoopBeatVsRawList(b *testing.B) {
	const nApps = 2000
	s := newStack(b)
	ctx := context.Background()
	start := time.Now()
	work := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var setupErr error
	for range 16 {
		wg.Go(func() {
			for i := range work {
				if err := s.live(ctx, fmt.Sprintf("app-%04d", i)); err != nil {
					mu.Lock()
					setupErr = err
					mu.Unlock()
				}
			}
		})
	}
	for i := range nApps {
		work <- i
	}
	close(work)
	wg.Wait()
	if setupErr != nil {
		b.Fatal(setupErr)
	}
	b.Logf("setup: %d live apps with their pods in %s", nApps, time.Since(start).Round(time.Second))

	plan, err := s.h.Plan(ctx, "acme")
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range plan {
		if len(p.Steps) != 0 {
			b.Fatalf("app %s has steps %+v; the beat would not be a no-op", p.App, p.Steps)
		}
	}
	rawList := func() time.Duration {
		t := time.Now()
		opts := metav1.ListOptions{LabelSelector: podspec.StackSelector(podspec.Selector(), podspec.StackValue(s.h.Stack)), Limit: 500}
		n := 0
		for {
			l, err := s.kc.CoreV1().Pods(s.ns).List(ctx, opts)
			if err != nil {
				b.Fatal(err)
			}
			n += len(l.Items)
			if opts.Continue = l.Continue; opts.Continue == "" {
				break
			}
		}
		if n != nApps {
			b.Fatalf("raw LIST found %d pods, want %d", n, nApps)
		}
		return time.Since(t)
	}
	beat := func() time.Duration {
		t := time.Now()
		if err := s.h.Beat(ctx); err != nil {
			b.Fatal(err)
		}
		return time.Since(t)
	}
	beat()
	rawList()
	var bestBeat, bestRaw time.Duration
	b.ResetTimer()
	for b.Loop() {
		for i := range 6 {
			if i%2 == 0 {
				bestBeat, bestRaw = fastest(bestBeat, beat()), fastest(bestRaw, rawList())
			} else {
				bestRaw, bestBeat = fastest(bestRaw, rawList()), fastest(bestBeat, beat())
			}
		}
	}
	b.ReportMetric(float64(bestBeat.Microseconds())/1000, "beat-ms")
	b.ReportMetric(float64(bestRaw.Microseconds())/1000, "raw-list-ms")
	b.ReportMetric(float64(bestBeat)/float64(bestRaw), "beat/raw")
}

func fastest(best, d time.Duration) time.Duration {
	if best == 0 || d < best {
		return d
	}
	return best
}

// live makes app a live app on its registered host with a pod, as the beat and the host would.
func (s *stack) live(ctx context.Context, name string) error {
	sha := strings.Repeat("a", 64)
	r, err := s.apps.CreateRelease(ctx, "acme", apps.Release{App: name, SHA256: sha, Bytes: 10, CreatedAt: s.now})
	if err != nil {
		return err
	}
	digest, err := s.secrets.Digest(ctx, "acme")
	if err != nil {
		return err
	}
	host := apps.HostName("acme", name, r.Number, sha, digest)
	token, err := s.apps.MintHostToken(ctx, "acme", name, host)
	if err != nil {
		return err
	}
	l := podspec.Launch{Org: "acme", App: name, Host: host, Release: r.Number, Namespace: s.ns, Stack: podspec.StackValue(s.h.Stack),
		SourcesURL: "https://sources.invalid/x", SourcesSHA256: sha, HostToken: token, RegisterURL: "https://api.invalid/register"}
	pod, err := podspec.Pod(l)
	if err != nil {
		return err
	}
	created, err := s.kc.CoreV1().Pods(s.ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	if _, _, err := s.apps.Register(ctx, host, string(created.UID), token, s.now); err != nil {
		return err
	}
	return s.apps.MarkLive(ctx, "acme", name, host, r.Number, s.now)
}
