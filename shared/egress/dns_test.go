package egress

import (
	"encoding/binary"
	"net"
	"testing"
)

// fakeDNS serves, on a loopback UDP port, one A record with answer for every question (and no
// AAAA records), and answers its address.
func fakeDNS(t *testing.T, answer [4]byte) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if reply := dnsReply(buf[:n], answer); reply != nil {
				_, _ = pc.WriteTo(reply, from)
			}
		}
	}()
	return pc.LocalAddr().String()
}

// dnsReply answers a one-question query: an A question gets answer, anything else no records.
func dnsReply(q []byte, answer [4]byte) []byte {
	if len(q) < 12 {
		return nil
	}
	end := 12
	for end < len(q) && q[end] != 0 {
		end += int(q[end]) + 1
	}
	end += 5 // the root label, QTYPE and QCLASS
	if end > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[end-4 : end-2])
	out := append([]byte{}, q[:end]...)
	out[2] = 0x81 // response, recursion desired
	out[3] = 0x80 // recursion available, no error
	binary.BigEndian.PutUint16(out[6:8], 0)
	binary.BigEndian.PutUint16(out[8:10], 0)
	binary.BigEndian.PutUint16(out[10:12], 0)
	if qtype != 1 {
		return out
	}
	binary.BigEndian.PutUint16(out[6:8], 1)
	out = append(out, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4)
	return append(out, answer[:]...)
}
