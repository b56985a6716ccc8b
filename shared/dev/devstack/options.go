// Package devstack runs all of Tidegate on one machine: the stand-ins, the API on a loopback port,
// the dispatch and webhook queues long-polled into the same SQS handlers the Lambdas run, and the
// reconcile beat on a ticker. It is what `tidegate dev` does.
package devstack

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"time"

	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/jobobjects"
)

// Options are `tidegate dev`'s settings; API.md fixes their names and defaults.
type Options struct {
	Addr                 string        // --addr, TIDEGATE_DEV_ADDR
	APIKey               string        // --api-key, TIDEGATE_DEV_API_KEY; generated when empty
	Kubeconfig           string        // --kubeconfig: an existing cluster instead of the sandbox
	Beat                 time.Duration // --beat, TIDEGATE_DEV_BEAT
	WebhooksAllowPrivate bool          // --webhooks-allow-private, TIDEGATE_DEV_WEBHOOKS_ALLOW_PRIVATE
	// Clusters (--clusters, TIDEGATE_DEV_CLUSTERS) is how many sandbox clusters the regions run
	// on: 0 or 1, every region on one, as always; 2, each region on its own (us-east-1 on
	// "sandbox", us-west-2 on "sandbox-2"), so one region's cluster can fail while the other runs.
	Clusters int
	// Env looks up the deployment's tunables (config.Tunables: TIDEGATE_POLICY_*, the rate, quota
	// and isolation settings, …), which reach the functions' config as config reads them in AWS;
	// `tidegate dev` passes os.Getenv, and nil sets none. The settings below that stand for one of
	// them (twins, settings.go) are used in its place where given, that is, not zero.
	Env            func(string) string
	RegionCapacity string  // --region-capacity, TIDEGATE_DEV_REGION_CAPACITY, for TIDEGATE_REGION_CAPACITY
	Flavors        string  // --flavors, TIDEGATE_DEV_FLAVORS, for TIDEGATE_FLAVORS; on the sandbox, dev's own where neither is given (devFlavors)
	RateLimit      float64 // --rate: a tenant's default requests a second, for TIDEGATE_RATE_LIMIT
	RateBurst      int     // --burst: a tenant's default burst, for TIDEGATE_RATE_BURST
	DefaultQuota   string  // --default-quota JOBS[:GPUS], for TIDEGATE_DEFAULT_QUOTA
	// JobTTL (--job-ttl, TIDEGATE_DEV_JOB_TTL) is the ttlSecondsAfterFinished dispatch gives Jobs,
	// for TIDEGATE_JOB_TTL_SECONDS, whose default, config.DefaultJobTTL, holds when neither is set.
	// Unlike TIDEGATE_JOB_TTL_SECONDS, whose floor is five of AWS's minute beats, it may be as low
	// as five of the dev stack's own beats, so the clean-up is seen in seconds.
	JobTTL time.Duration
	// Dir holds the dev stack's state, logs and lock; the cache's dev folder by default.
	Dir string
	// RegisterHosts stands in for hosted apps' processes, which kwok's pods do not run: a host is
	// registered once its pod is Running. NeverRegister names apps left unregistered.
	RegisterHosts bool
	NeverRegister []string
	// RunHosts, with RegisterHosts, runs each host's pod for real on this machine (hostrun): its
	// install, then its start command, under bwrap; the app's own process registers it. Where the
	// machine cannot (no bwrap, no node or python3), the stack says so and registers instead.
	// NeverRegister's apps are never run.
	RunHosts bool
	// Standins, when set, are stand-ins another process runs (tests share one set): Run starts
	// none, and removes the tables, queues and bucket it made there when it stops.
	Standins *sandbox.State
	// Prefix, when set, names the tables, queues and bucket (<prefix>-jobs, …), so stacks sharing
	// stand-ins do not meet; empty keeps template.yaml's names for a stack called "tidegate".
	Prefix string
	// WrapAPI, when set, wraps the API's handler: tests hold every exchange to the contract
	// (shared/dev/contract) through it.
	WrapAPI func(http.Handler) http.Handler
	// FollowDepth, when set, is how many watched jobs of a region the beat follows at once
	// (reconcile.Handler.FollowDepth), for bench/ends to find the depth where ends keep up.
	FollowDepth int
	// Meter, when set, counts the functions' AWS calls and times their invocations (`make bench`).
	Meter Meter
	// Ready, when set, is told the stack's state once it serves: `tidegate dev` saves the CLI's
	// context from it, tests learn where to send requests.
	Ready func(State)
}

// Defaults from API.md's `tidegate dev` section.
const (
	DefaultAddr = "127.0.0.1:8080"
	DefaultBeat = 5 * time.Second
)

// The dev tenant, as API.md fixes it: scripts rely on these.
const (
	DevTenant = "dev"
	DevOrg    = "dev"
)

// DevNamespaces exist in the sandbox and belong to the dev tenant.
var DevNamespaces = []string{"team-a", "team-b"}

// DevRegions run on the one sandbox cluster, or each on its own (Options.Clusters).
var DevRegions = []string{"us-east-1", "us-west-2"}

// minBeat keeps a mistyped --beat from spinning the reconcile loop.
const minBeat = 500 * time.Millisecond

// Validate reports every bad setting at once.
func (o Options) Validate() error {
	var errs []error
	if _, _, err := net.SplitHostPort(o.Addr); err != nil {
		errs = append(errs, fmt.Errorf("--addr %q is not host:port", o.Addr))
	}
	if o.Prefix != "" && !validPrefix.MatchString(o.Prefix) {
		errs = append(errs, fmt.Errorf("prefix %q must be at most 55 lowercase letters, digits and '-'", o.Prefix))
	}
	if o.Clusters < 0 || o.Clusters > len(DevRegions) {
		errs = append(errs, fmt.Errorf("--clusters %d: give 1 to run every region on one cluster, or %d to give each its own", o.Clusters, len(DevRegions)))
	}
	if o.Clusters > 1 && o.Kubeconfig != "" {
		errs = append(errs, fmt.Errorf("--clusters %d starts sandbox clusters, and --kubeconfig uses a cluster of yours instead; drop one of them", o.Clusters))
	}
	if o.Beat < minBeat {
		errs = append(errs, fmt.Errorf("--beat %s is shorter than %s", o.Beat, minBeat))
	}
	if err := o.validJobTTL(); err != nil {
		errs = append(errs, err)
	}
	if _, err := o.settings(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// validJobTTL holds --job-ttl to whole seconds from jobobjects.TTLBeats beats of --beat: a Job the
// cluster deletes before a beat has seen it end loses its result.
func (o Options) validJobTTL() error {
	if o.JobTTL == 0 {
		return nil
	}
	floor := jobobjects.TTLBeats * max(o.Beat, minBeat)
	if o.JobTTL%time.Second != 0 || o.JobTTL < floor || o.JobTTL > math.MaxInt32*time.Second {
		return fmt.Errorf("--job-ttl %s must be whole seconds, at least %d beats (--beat %s): %s; a Job deleted before a beat has seen it end loses its result",
			o.JobTTL, jobobjects.TTLBeats, o.Beat, floor.Round(time.Second))
	}
	return nil
}

func isDevRegion(r string) bool {
	for _, d := range DevRegions {
		if d == r {
			return true
		}
	}
	return false
}
