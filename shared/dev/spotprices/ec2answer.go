package spotprices

import (
	"cmp"
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"time"
)

// productDescription is the one product every price is for. Linux/UNIX is what Karpenter and
// Tidegate's spot gate ask for; EC2 itself answers VPC-era accounts under this name too, so a
// caller asking for "Linux/UNIX (Amazon VPC)" or Windows finds nothing, as it would in a new
// account.
const productDescription = "Linux/UNIX"

// spotItem is one row of the answer: the price of an instance type in one zone.
type spotItem struct {
	Zone         string
	InstanceType string
	Description  string
	SpotPrice    string // as EC2 writes it: six decimals
	Timestamp    time.Time
}

func (it spotItem) attr(name string) string {
	switch name {
	case attrZone:
		return it.Zone
	case attrInstanceType:
		return it.InstanceType
	case attrDescription:
		return it.Description
	}
	return ""
}

func (it spotItem) key() pageKey { return pageKey{it.Zone, it.InstanceType} }

// pageKey orders the answer and says, in a NextToken, where the last page ended. Resuming after a
// key rather than at an offset means a price set between two pages neither repeats nor skips a row.
type pageKey struct{ zone, instanceType string }

func (k pageKey) compare(o pageKey) int {
	return cmp.Or(cmp.Compare(k.zone, o.zone), cmp.Compare(k.instanceType, o.instanceType))
}

// answer is the page of prices q asks for out of the book's prices, and the NextToken for the
// page after it ("" when this page is the last). Numbers in, rows out: it touches nothing.
func answer(prices []Price, q query) (page []spotItem, next string) {
	var rows []spotItem
	for _, p := range prices {
		if p.Region != q.region || (!q.end.IsZero() && p.SetAt.After(q.end)) {
			continue
		}
		for _, z := range zones(p.Region) {
			it := spotItem{
				Zone:         z,
				InstanceType: p.InstanceType,
				Description:  productDescription,
				SpotPrice:    strconv.FormatFloat(p.Price, 'f', 6, 64),
				Timestamp:    p.SetAt,
			}
			if q.matches(it) {
				rows = append(rows, it)
			}
		}
	}
	slices.SortFunc(rows, func(a, b spotItem) int { return a.key().compare(b.key()) })
	if q.after != (pageKey{}) {
		rows = slices.DeleteFunc(rows, func(it spotItem) bool { return it.key().compare(q.after) <= 0 })
	}
	if len(rows) > q.maxResults {
		rows = rows[:q.maxResults]
		next = encodeToken(rows[len(rows)-1].key())
	}
	return rows, next
}

func (q query) matches(it spotItem) bool {
	for _, c := range q.conds {
		if !slices.Contains(c.values, it.attr(c.attr)) {
			return false
		}
	}
	return true
}

// A NextToken is the last row's zone and instance type, which the book keeps free of control
// characters, joined by a newline and base64url-encoded so the caller treats it as opaque.
const tokenSep = "\n"

func encodeToken(k pageKey) string {
	return base64.RawURLEncoding.EncodeToString([]byte(k.zone + tokenSep + k.instanceType))
}

func decodeToken(s string) (pageKey, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return pageKey{}, false
	}
	zone, instanceType, ok := strings.Cut(string(raw), tokenSep)
	if !ok || zone == "" || instanceType == "" {
		return pageKey{}, false
	}
	return pageKey{zone, instanceType}, true
}
