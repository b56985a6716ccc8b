package spotprices

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// What the EC2 Query protocol calls the parameters this endpoint reads. The SDK sends lists
// flattened, one key per member counting from 1: InstanceType.1, ProductDescription.1,
// Filter.1.Name, Filter.1.Value.1.
const (
	paramAction         = "Action"
	paramVersion        = "Version"
	paramZone           = "AvailabilityZone"
	paramZoneID         = "AvailabilityZoneId"
	paramDryRun         = "DryRun"
	paramStartTime      = "StartTime"
	paramEndTime        = "EndTime"
	paramMaxResults     = "MaxResults"
	paramNextToken      = "NextToken"
	paramInstanceType   = "InstanceType"
	paramDescription    = "ProductDescription"
	paramFilter         = "Filter"
	actionDescribePrice = "DescribeSpotPriceHistory"
)

// EC2 answers at most 1000 spot prices a page, and that many when MaxResults is not given.
const maxResultsLimit = 1000

// The attributes a spot price is filtered on, named as EC2's filters name them. EC2 also filters
// on availability-zone-id, spot-price and timestamp; this endpoint says Unsupported to those
// rather than ignore them and answer prices the caller did not ask for.
const (
	attrZone         = "availability-zone"
	attrInstanceType = "instance-type"
	attrDescription  = "product-description"
)

// query is one parsed DescribeSpotPriceHistory request: numbers in, no I/O.
type query struct {
	region     string
	conds      []cond    // all must hold
	end        time.Time // zero when not given; the start never excludes a current price
	maxResults int
	after      pageKey // from NextToken: answer only what sorts after it
	dryRun     bool
}

// cond holds when an item's attr is one of values.
type cond struct {
	attr   string
	values []string
}

// parseQuery reads a DescribeSpotPriceHistory request made in region. It rejects a parameter it
// does not know, so that a caller never mistakes an ignored filter for one that matched.
func parseQuery(region string, form url.Values) (query, *apiError) {
	q := query{region: region, maxResults: maxResultsLimit}
	lists := map[string]map[int]string{paramInstanceType: {}, paramDescription: {}}
	filters := map[int]*rawFilter{}
	// Sorted, so that a request with two faults is always told of the same one.
	for _, key := range slices.Sorted(maps.Keys(form)) {
		vals := form[key]
		if len(vals) != 1 {
			return query{}, invalidValue("%s is given %d times; give it once", key, len(vals))
		}
		if err := q.setParam(key, vals[0], lists, filters); err != nil {
			return query{}, err
		}
	}
	if err := q.checkWindow(form); err != nil {
		return query{}, err
	}
	q.addCond(attrInstanceType, ordered(lists[paramInstanceType]))
	q.addCond(attrDescription, ordered(lists[paramDescription]))
	for _, n := range slices.Sorted(maps.Keys(filters)) {
		c, err := filters[n].cond(n)
		if err != nil {
			return query{}, err
		}
		q.conds = append(q.conds, c)
	}
	return q, nil
}

// setParam reads one form key into q, or into lists and filters for the indexed ones.
func (q *query) setParam(key, v string, lists map[string]map[int]string, filters map[int]*rawFilter) *apiError {
	switch key {
	case paramAction, paramVersion, paramStartTime, paramEndTime:
		return nil // the handler checked the first two; checkWindow reads the times
	case paramZone:
		if !slices.Contains(zones(q.region), v) {
			return invalidValue("Invalid availability zone: [%s]; the zones of %s are %s",
				v, q.region, strings.Join(zones(q.region), ", "))
		}
		q.addCond(attrZone, []string{v})
	case paramZoneID:
		return &apiError{codeUnsupported, "AvailabilityZoneId is not supported by this endpoint; use AvailabilityZone"}
	case paramDryRun:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return invalidValue("DryRun must be true or false, got %q", v)
		}
		q.dryRun = b
	case paramMaxResults:
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxResultsLimit {
			return invalidValue("MaxResults must be a whole number from 1 to %d, got %q", maxResultsLimit, v)
		}
		q.maxResults = n
	case paramNextToken:
		k, ok := decodeToken(v)
		if !ok {
			return &apiError{codeBadToken, fmt.Sprintf("The NextToken %q was not issued by this endpoint", v)}
		}
		q.after = k
	default:
		return setIndexed(key, v, lists, filters)
	}
	return nil
}

// setIndexed reads InstanceType.N, ProductDescription.N, Filter.N.Name and Filter.N.Value.M.
func setIndexed(key, v string, lists map[string]map[int]string, filters map[int]*rawFilter) *apiError {
	for name, list := range lists {
		if n, rest, ok := index(key, name); ok && rest == "" {
			list[n] = v
			return nil
		}
	}
	n, rest, ok := index(key, paramFilter)
	if !ok {
		return &apiError{codeUnknownParameter, fmt.Sprintf("The parameter %s is not recognized", key)}
	}
	f := filters[n]
	if f == nil {
		f = &rawFilter{values: map[int]string{}}
		filters[n] = f
	}
	if rest == "Name" {
		f.name = v
		return nil
	}
	if m, tail, ok := index(rest, "Value"); ok && tail == "" {
		f.values[m] = v
		return nil
	}
	return &apiError{codeUnknownParameter, fmt.Sprintf("The parameter %s is not recognized", key)}
}

// checkWindow reads StartTime and EndTime. Only the end can exclude a price: the book keeps the
// current price alone, and EC2 answers the price in effect at the start even when it was set before.
func (q *query) checkWindow(form url.Values) *apiError {
	var start time.Time
	for _, p := range []struct {
		name string
		to   *time.Time
	}{{paramStartTime, &start}, {paramEndTime, &q.end}} {
		v := form.Get(p.name)
		if v == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return invalidValue("%s must be a UTC date and time like 2026-01-01T00:00:00Z, got %q", p.name, v)
		}
		*p.to = t
	}
	if !start.IsZero() && !q.end.IsZero() && q.end.Before(start) {
		return invalidValue("EndTime %s is before StartTime %s", q.end.Format(time.RFC3339), start.Format(time.RFC3339))
	}
	return nil
}

func (q *query) addCond(attr string, values []string) {
	if len(values) > 0 {
		q.conds = append(q.conds, cond{attr, values})
	}
}

// rawFilter is Filter.N as the form gave it, before it is checked.
type rawFilter struct {
	name   string
	values map[int]string
}

func (f *rawFilter) cond(n int) (cond, *apiError) {
	switch {
	case f.name == "":
		return cond{}, &apiError{codeMissingParameter, fmt.Sprintf("Filter.%d.Name is required", n)}
	case len(f.values) == 0:
		return cond{}, &apiError{codeMissingParameter, fmt.Sprintf("Filter.%d (%s) has no Value", n, f.name)}
	case f.name != attrZone && f.name != attrInstanceType && f.name != attrDescription:
		return cond{}, &apiError{codeUnsupported, fmt.Sprintf("The filter '%s' is not supported by this endpoint; it filters on %s, %s and %s",
			f.name, attrZone, attrInstanceType, attrDescription)}
	}
	return cond{f.name, ordered(f.values)}, nil
}

// index splits "Prefix.N" or "Prefix.N.rest" into N (from 1) and rest.
func index(key, prefix string) (n int, rest string, ok bool) {
	s, found := strings.CutPrefix(key, prefix+".")
	if !found {
		return 0, "", false
	}
	num, rest, _ := strings.Cut(s, ".")
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 || strconv.Itoa(n) != num {
		return 0, "", false
	}
	return n, rest, true
}

// ordered is a list's values in the order of their indexes.
func ordered(m map[int]string) []string {
	var vs []string
	for _, n := range slices.Sorted(maps.Keys(m)) {
		vs = append(vs, m[n])
	}
	return vs
}

func invalidValue(format string, args ...any) *apiError {
	return &apiError{codeInvalidValue, fmt.Sprintf(format, args...)}
}
