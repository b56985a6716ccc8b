// Package ec2spot reads EC2 spot prices for the spot gate (through DescribeSpotPriceHistory, or the
// dev endpoint in shared/dev/spotprices) and keeps what it heard for a minute. What the prices mean
// for a job is spotgate's to decide.
package ec2spot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/tidegate/tidegate/shared/spotgate"
)

// Describer is the one EC2 call a Reader makes.
type Describer interface {
	DescribeSpotPriceHistory(ctx context.Context, in *ec2.DescribeSpotPriceHistoryInput, opts ...func(*ec2.Options)) (*ec2.DescribeSpotPriceHistoryOutput, error)
}

var _ Describer = (*ec2.Client)(nil)

// DefaultTTL is how long a Reader reuses a known price, about a minute: the
// job record shows an observation at most once a minute and a reconcile beat in AWS is a minute,
// so a fresher read would show nobody anything, while a burst of dispatch wake-ups for a region
// shares one DescribeSpotPriceHistory call instead of spending EC2's request budget on each.
const DefaultTTL = time.Minute

// retryAfter is how long an unknown price is reused, when the read failed or EC2 had no usable
// price: long enough that the wake-ups of one burst do not each ask a failing EC2 again, short
// enough that a passing fault or a price set a moment ago holds jobs for seconds, not a minute.
const retryAfter = 5 * time.Second

// productDescription is the product every Tidegate node runs. EC2-Classic's "Linux/UNIX (Amazon
// VPC)" prices went with EC2-Classic; accounts since answer under this name.
const productDescription = "Linux/UNIX"

// typesPerCall bounds the instance types one DescribeSpotPriceHistory call asks for. EC2 answers
// one price a zone a type from a StartTime, and a region has at most six zones, so 100 types fit
// one 1,000-row page, and the request stays a few KiB.
const typesPerCall = 100

// maxPages stops a read that never ends, from an endpoint that keeps handing out new tokens. One
// page is the norm (see typesPerCall); a hundred is 100,000 prices.
const maxPages = 100

// Reader observes spot prices through EC2, caching each (region, instance type). It is safe for
// concurrent use; two callers missing the same entry at once may both ask EC2.
type Reader struct {
	// TTL is how long a known price is reused; DefaultTTL when zero. An unknown price is asked
	// again after 5 s, or TTL if shorter. `tidegate dev`, whose beat is seconds, can set it to the
	// beat so that a price set by hand shows by the next one. Set it before the first Observe.
	TTL time.Duration
	// Log receives each failed read once: the Reader is where a failure is handled, by turning
	// it into an unknown price. slog.Default() when nil.
	Log *slog.Logger

	client func(region string) Describer

	mu    sync.Mutex
	cache map[cacheKey]cached // one entry per (region, type) ever asked: a handful
}

type cacheKey struct{ region, instanceType string }

type cached struct {
	o     spotgate.Observation
	zones map[string]float64 // each zone's current price (spotgate.ByZone)
	until time.Time
}

// NewReader returns a Reader that asks client(region) for region's prices.
func NewReader(client func(region string) Describer) *Reader {
	return &Reader{client: client, cache: map[cacheKey]cached{}}
}

// Observe is the lowest current spot price of instanceType across region's zones at now (see
// Lowest), from the cache or from EC2. A failed read, or an answer without a usable price, is an
// unknown price, which holds the jobs capped on it.
func (r *Reader) Observe(ctx context.Context, region, instanceType string, now time.Time) spotgate.Observation {
	return r.ObserveMany(ctx, region, []string{instanceType}, now)[instanceType]
}

// ObserveMany observes each of instanceTypes in region as Observe does, asking EC2 once for all
// those not cached (in calls of up to 100 types).
func (r *Reader) ObserveMany(ctx context.Context, region string, instanceTypes []string, now time.Time) map[string]spotgate.Observation {
	out := make(map[string]spotgate.Observation, len(instanceTypes))
	for t, c := range r.observe(ctx, region, instanceTypes, now) {
		out[t] = c.o
	}
	return out
}

// ZonePrices is each of instanceTypes' current spot price in each of region's zones that has
// one, by type then zone, read (and cached) as ObserveMany reads them: what a finished job's cost
// is estimated at. A type whose read failed has no zones.
func (r *Reader) ZonePrices(ctx context.Context, region string, instanceTypes []string, now time.Time) map[string]map[string]float64 {
	out := make(map[string]map[string]float64, len(instanceTypes))
	for t, c := range r.observe(ctx, region, instanceTypes, now) {
		out[t] = c.zones
	}
	return out
}

// observe answers the cache entry of each of instanceTypes in region at now, asking EC2 once for
// all those not cached (in calls of up to 100 types).
func (r *Reader) observe(ctx context.Context, region string, instanceTypes []string, now time.Time) map[string]cached {
	out := make(map[string]cached, len(instanceTypes))
	var missing []string
	r.mu.Lock()
	for _, t := range instanceTypes {
		if _, seen := out[t]; seen {
			continue
		}
		c, ok := r.cache[cacheKey{region, t}]
		// An entry from after now (a caller's clock behind another's) is not reused either.
		if ok && !now.Before(c.o.CheckedAt) && now.Before(c.until) {
			out[t] = c
			continue
		}
		out[t] = cached{o: spotgate.Observation{InstanceType: t, CheckedAt: now}}
		missing = append(missing, t)
	}
	r.mu.Unlock()

	for chunk := range slices.Chunk(missing, typesPerCall) {
		points, err := r.read(ctx, region, chunk, now)
		if err != nil {
			r.log().WarnContext(ctx, "reading spot prices", "region", region, "instance_types", chunk, "err", err)
		}
		r.mu.Lock()
		for _, t := range chunk {
			c := out[t]
			if err == nil {
				c.o, c.zones = spotgate.Lowest(t, points, now), spotgate.ByZone(t, points, now)
			}
			c.until = now.Add(r.keepFor(c.o))
			out[t] = c
			r.cache[cacheKey{region, t}] = c
		}
		r.mu.Unlock()
	}
	return out
}

func (r *Reader) keepFor(o spotgate.Observation) time.Duration {
	ttl := r.TTL
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	if !o.Known {
		return min(retryAfter, ttl)
	}
	return ttl
}

func (r *Reader) log() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	return slog.Default()
}

// read asks EC2 for the Linux/UNIX prices of instanceTypes in region in effect at now: given a
// StartTime and no EndTime, EC2 answers each zone's price in effect at the start, however long
// ago it was set, and any change since.
func (r *Reader) read(ctx context.Context, region string, instanceTypes []string, now time.Time) ([]spotgate.Point, error) {
	c := r.client(region)
	if c == nil {
		return nil, errors.New("no EC2 client for the region")
	}
	in := &ec2.DescribeSpotPriceHistoryInput{
		InstanceTypes:       make([]types.InstanceType, len(instanceTypes)),
		ProductDescriptions: []string{productDescription},
		StartTime:           aws.Time(now),
	}
	for i, t := range instanceTypes {
		in.InstanceTypes[i] = types.InstanceType(t)
	}
	pages := ec2.NewDescribeSpotPriceHistoryPaginator(c, in, func(o *ec2.DescribeSpotPriceHistoryPaginatorOptions) {
		o.StopOnDuplicateToken = true
	})
	var points []spotgate.Point
	for n := 0; pages.HasMorePages(); n++ {
		if n == maxPages {
			return nil, fmt.Errorf("DescribeSpotPriceHistory still paging after %d pages", maxPages)
		}
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, sp := range page.SpotPriceHistory {
			if string(sp.ProductDescription) == productDescription {
				points = append(points, pointOf(sp))
			}
		}
	}
	return points, nil
}

// pointOf reads one row of EC2's answer. A row whose price does not parse, or that has no time,
// keeps a NaN price, so that Lowest counts its zone as without a price rather than fall back on
// an older point.
func pointOf(sp types.SpotPrice) spotgate.Point {
	p := spotgate.Point{Zone: aws.ToString(sp.AvailabilityZone), InstanceType: string(sp.InstanceType), At: aws.ToTime(sp.Timestamp)}
	price, err := strconv.ParseFloat(aws.ToString(sp.SpotPrice), 64)
	if err != nil || sp.Timestamp == nil {
		price = math.NaN()
	}
	p.Price = price
	return p
}
