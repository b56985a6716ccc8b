// Package spotprices serves an EC2-compatible DescribeSpotPriceHistory endpoint whose prices are
// set by hand, for local development and tests.
package spotprices

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"time"
)

// minPrice is the smallest price EC2's answer can show: it writes spot prices with six decimals
// ("0.420000"), so anything smaller would read back as a free instance.
const minPrice = 0.000001

// zoneLetters are the zones every region gets. Three mirrors the three-AZ regions most of AWS
// has; us-east-1 really has six, which nothing here needs.
var zoneLetters = []string{"a", "b", "c"}

// Price is one hand-set spot price: the price of an instance type in every zone of a region, as
// of SetAt. Its JSON form is what GET /prices answers and what a book's file holds.
type Price struct {
	Region       string    `json:"region"`
	InstanceType string    `json:"instance_type"`
	Price        float64   `json:"price"`
	SetAt        time.Time `json:"set_at"`
}

// FieldError says which field of a price is invalid and why. Field is the JSON name, so the admin
// route and the book's file can report it as is.
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string { return e.Field + " " + e.Reason }

// Book holds the current spot prices, keyed by region and instance type. It is safe for
// concurrent use; the zero value is an empty book kept in memory only, and OpenFile makes one that
// also writes every change to a file.
type Book struct {
	mu     sync.Mutex
	prices map[bookKey]Price
	path   string // empty for a book kept in memory only
}

type bookKey struct{ region, instanceType string }

// Set makes price the spot price of instanceType in every zone of region, as of at. The price
// must be finite and at least 0.000001 (EC2's precision); region and instance type must be given.
func (b *Book) Set(region, instanceType string, price float64, at time.Time) error {
	p := Price{Region: region, InstanceType: instanceType, Price: price, SetAt: at.UTC()}
	if err := validate(p); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	next := maps.Clone(b.prices)
	if next == nil {
		next = make(map[bookKey]Price)
	}
	next[bookKey{region, instanceType}] = p
	if b.path != "" {
		// The file is written before the change is kept, so a price that could not be saved is
		// not answered either, and a restart never loses a price a caller was told was set.
		if err := writeFile(b.path, sorted(next)); err != nil {
			return fmt.Errorf("setting %s %s: %w", region, instanceType, err)
		}
	}
	b.prices = next
	return nil
}

// Prices is every price in the book, ordered by region and instance type.
func (b *Book) Prices() []Price {
	b.mu.Lock()
	defer b.mu.Unlock()
	return sorted(b.prices)
}

// validate checks one price as Set, the admin route and a book's file all need it checked.
func validate(p Price) error {
	switch {
	case p.Region == "":
		return &FieldError{"region", "is required"}
	case !isRegionName(p.Region):
		return &FieldError{"region", fmt.Sprintf("%q is not a region name (lowercase letters, digits and hyphens, like us-east-1)", p.Region)}
	case p.InstanceType == "":
		return &FieldError{"instance_type", "is required"}
	case !isPrintable(p.InstanceType):
		return &FieldError{"instance_type", fmt.Sprintf("%q has spaces or control characters", p.InstanceType)}
	case math.IsNaN(p.Price) || math.IsInf(p.Price, 0):
		return &FieldError{"price", fmt.Sprintf("must be a finite number, got %v", p.Price)}
	case p.Price < minPrice:
		return &FieldError{"price", fmt.Sprintf("must be at least %.6f (EC2 shows six decimals), got %v", minPrice, p.Price)}
	case p.SetAt.IsZero():
		return &FieldError{"set_at", "is required"}
	}
	return nil
}

// isRegionName keeps a region to the characters AWS uses, because it also becomes zone names and
// is read back out of a SigV4 credential scope, where a slash or space could never arrive.
func isRegionName(s string) bool {
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return true
}

func isPrintable(s string) bool {
	for _, r := range s {
		if r <= ' ' || r == 0x7f {
			return false
		}
	}
	return true
}

// zones are the availability zones of region that every price of the region covers.
func zones(region string) []string {
	zs := make([]string, len(zoneLetters))
	for i, l := range zoneLetters {
		zs[i] = region + l
	}
	return zs
}

func sorted(m map[bookKey]Price) []Price {
	ps := make([]Price, 0, len(m))
	for _, p := range m {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b Price) int {
		return cmp.Or(cmp.Compare(a.Region, b.Region), cmp.Compare(a.InstanceType, b.InstanceType))
	})
	return ps
}
