package egress

import (
	"net/netip"
	"testing"
)

func TestRefusal(t *testing.T) {
	tests := []struct {
		addr    string
		refused bool
	}{
		{"0.0.0.0", true},
		{"0.1.2.3", true},
		{"10.0.0.1", true},
		{"10.255.255.255", true},
		{"100.64.0.1", true},
		{"100.127.255.255", true},
		{"100.128.0.1", false},
		{"127.0.0.1", true},
		{"127.255.255.254", true},
		{"169.254.169.254", true},
		{"169.254.0.1", true},
		{"172.16.0.1", true},
		{"172.31.255.255", true},
		{"172.32.0.1", false},
		{"192.0.0.8", true},
		{"192.0.2.10", true},
		{"192.88.99.1", true},
		{"192.168.1.1", true},
		{"198.18.0.1", true},
		{"198.19.255.255", true},
		{"198.20.0.1", false},
		{"198.51.100.7", true},
		{"203.0.113.9", true},
		{"224.0.0.251", true},
		{"239.255.255.250", true},
		{"240.0.0.1", true},
		{"255.255.255.255", true},
		{"1.1.1.1", false},
		{"8.8.8.8", false},
		{"93.184.216.34", false},

		{"::", true},
		{"::1", true},
		{"::127.0.0.1", true},
		{"::ffff:127.0.0.1", true},
		{"::ffff:10.1.2.3", true},
		{"::ffff:169.254.169.254", true},
		{"::ffff:192.168.0.1", true},
		{"::ffff:8.8.8.8", false},
		{"64:ff9b::127.0.0.1", true},
		{"64:ff9b::a9fe:a9fe", true}, // 169.254.169.254
		{"64:ff9b::8.8.8.8", false},
		{"64:ff9b:1::1", true},
		{"2002:7f00:1::", true},    // 6to4 of 127.0.0.1
		{"2002:c0a8:101::1", true}, // 6to4 of 192.168.1.1
		{"2002:808:808::1", false}, // 6to4 of 8.8.8.8
		{"100::1", true},
		{"2001::1", true},
		{"2001:2::1", true},
		{"2001:db8::1", true},
		{"2001:10::1", true},
		{"fc00::1", true},
		{"fd12:3456::1", true},
		{"fe80::1", true},
		{"fe80::1%eth0", true},
		{"fec0::1", true},
		{"ff02::1", true},
		{"ff0e::1", true},
		{"4000::1", true},
		{"2606:4700:4700::1111", false},
		{"2a00:1450:4001::200e", false},
	}
	for _, tt := range tests {
		got := Refusal(netip.MustParseAddr(tt.addr))
		if (got != "") != tt.refused {
			t.Errorf("Refusal(%s) = %q, want refused=%v", tt.addr, got, tt.refused)
		}
	}
}
