package egress

import (
	"net/netip"
	"strings"
	"testing"
)

// within is raw's address with the leading bits of p forced to p's: an address inside p that
// the fuzzer chose the rest of.
func within(p netip.Prefix, raw [16]byte) netip.Addr {
	base := p.Addr().AsSlice()
	out := raw[:len(base)]
	for i := range p.Bits() {
		mask := byte(0x80) >> (i % 8)
		out[i/8] = out[i/8]&^mask | base[i/8]&mask
	}
	a, _ := netip.AddrFromSlice(out)
	return a
}

// FuzzRefusal checks the guard's invariants on any address and any dial target: it never
// panics; every address inside a refused range is refused, whatever its other bits; an IPv4
// address and its IPv4-mapped, NAT64 and 6to4 forms are judged alike; a zone changes nothing;
// IPv6 outside the global unicast block is refused unless it carries an IPv4 address; and the dial-time check lets through exactly
// the IP:port targets whose address Refusal allows.
func FuzzRefusal(f *testing.F) {
	for _, seed := range []struct {
		ip     string
		target string
	}{
		{"127.0.0.1", "127.0.0.1:443"},
		{"10.1.2.3", "[::ffff:10.1.2.3]:443"},
		{"169.254.169.254", "169.254.169.254:80"},
		{"8.8.8.8", "8.8.8.8:443"},
		{"::1", "[::1]:443"},
		{"fe80::1", "[fe80::1%eth0]:443"},
		{"64:ff9b::7f00:1", "[64:ff9b::7f00:1]:443"},
		{"2002:7f00:1::", "[2002:c0a8:101::1]:443"},
		{"2606:4700:4700::1111", "[2606:4700:4700::1111]:443"},
		{"::ffff:0.0.0.0", "hooks.example.com:443"},
		{"0.0.0.0", ""},
	} {
		a := netip.MustParseAddr(seed.ip).As16()
		f.Add(a[:], seed.target)
	}
	f.Fuzz(func(t *testing.T, b []byte, target string) {
		var raw [16]byte
		copy(raw[:], b)
		v6 := netip.AddrFrom16(raw)
		v4 := netip.AddrFrom4([4]byte(raw[12:16]))
		refused := func(a netip.Addr) bool { return Refusal(a) != "" }

		for _, r := range blockedV4 {
			if a := within(r.prefix, raw); !refused(a) {
				t.Errorf("Refusal(%s) allows an address in %s (%s)", a, r.prefix, r.reason)
			}
		}
		for _, r := range blockedV6 {
			if a := within(r.prefix, raw); !refused(a) {
				t.Errorf("Refusal(%s) allows an address in %s (%s)", a, r.prefix, r.reason)
			}
		}
		mapped := netip.AddrFrom16(v4.As16())
		nat := within(nat64, [16]byte(append(make([]byte, 12), v4.AsSlice()...)))
		var six [16]byte
		copy(six[6:], raw[6:])
		copy(six[2:6], v4.AsSlice())
		sixTo4 := within(sixToFour, six)
		for _, form := range []netip.Addr{mapped, nat, sixTo4} {
			if refused(form) != refused(v4) {
				t.Errorf("Refusal(%s) = %q but Refusal(%s) = %q: an IPv4 address and its IPv6 form disagree", form, Refusal(form), v4, Refusal(v4))
			}
		}
		if zoned := v6.WithZone("eth0"); refused(zoned) != refused(v6) {
			t.Errorf("Refusal(%s) = %q but Refusal(%s) = %q: the zone changed the answer", zoned, Refusal(zoned), v6, Refusal(v6))
		}
		if !v6.Is4In6() && !nat64.Contains(v6) && !globalV6.Contains(v6) && !refused(v6) {
			t.Errorf("Refusal(%s) allows an address outside 2000::/3 that carries no IPv4 address", v6)
		}

		err := control("tcp", target, nil)
		ap, perr := netip.ParseAddrPort(target)
		switch {
		case perr != nil && err == nil:
			t.Errorf("control(%q) let through a target that is not an IP address and port", target)
		case perr == nil && (err == nil) == refused(ap.Addr()):
			t.Errorf("control(%q) = %v, but Refusal(%s) = %q", target, err, ap.Addr(), Refusal(ap.Addr()))
		case err != nil && perr == nil && !IsRefused(err):
			t.Errorf("control(%q) = %v, want a RefusedError", target, err)
		case err != nil && !strings.Contains(err.Error(), "refusing"):
			t.Errorf("control(%q) = %q, want an error that says the connection was refused", target, err)
		}
	})
}
