package egress

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// Time bounds of one delivery attempt. Fifteen seconds is the most a receiver is given, for the
// connect, for the TLS handshake and for the whole request alike: Standard Webhooks senders allow
// 15 s, and the webhook function (60 s, batches of five) stays within its own timeout.
const (
	ConnectTimeout   = 15 * time.Second
	HandshakeTimeout = 15 * time.Second
	RequestTimeout   = 15 * time.Second
)

// MaxResponseBytes is how much of a receiver's answer is read: its status is what counts, and a
// receiver streaming without end must not hold a worker.
const MaxResponseBytes = 64 << 10

// RefusedError is a dial refused because the address is not a public one.
type RefusedError struct {
	Addr   netip.Addr
	Reason string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("refusing to connect to %s: %s address", e.Addr, e.Reason)
}

// Options change the client for dev and tests.
type Options struct {
	// AllowPrivate lets the client reach any address, loopback and private included: dev and
	// tests only (TIDEGATE_WEBHOOKS_ALLOW_PRIVATE). It is the only way past the address filter.
	AllowPrivate bool
	// Resolver replaces the system's DNS resolver; nil is the system's.
	Resolver *net.Resolver
}

// control refuses a connection whose resolved address is not public. It runs after DNS, on the
// address about to be connected, so a name that resolves (or rebinds) to a private address is
// refused as surely as the address itself.
func control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refusing to connect to %q: not an IP address and port", address)
	}
	if reason := Refusal(ap.Addr()); reason != "" {
		return &RefusedError{Addr: ap.Addr(), Reason: reason}
	}
	return nil
}

// NewClient returns the delivery client: dial-time address filtering (unless opts.AllowPrivate),
// no redirects (a 3xx answers as itself, to be judged a failed attempt), no proxy from the
// environment, and the time bounds above.
func NewClient(opts Options) *http.Client {
	d := &net.Dialer{Timeout: ConnectTimeout, Resolver: opts.Resolver}
	if !opts.AllowPrivate {
		d.Control = control
	}
	t := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		TLSHandshakeTimeout:   HandshakeTimeout,
		ResponseHeaderTimeout: RequestTimeout,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
	}
	return &http.Client{
		Transport: t,
		Timeout:   RequestTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// Drain reads at most MaxResponseBytes of body and closes it, so the connection can be reused
// when the receiver answered briefly.
func Drain(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, MaxResponseBytes))
	_ = body.Close()
}

// IsRefused reports whether err is, or wraps, a dial the filter refused.
func IsRefused(err error) bool {
	var r *RefusedError
	return errors.As(err, &r)
}
