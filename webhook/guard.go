package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Guard decides which webhook destinations the service may connect to. Unless AllowPrivate is
// set (development, tests), it refuses loopback, private, link-local, unspecified, shared and
// cloud-metadata addresses, both when an endpoint is created (CheckURL) and when a delivery
// connects (Transport): the address is resolved, checked and then dialled as checked, so a name
// that re-resolves elsewhere (DNS rebinding) gains nothing.
type Guard struct {
	// AllowPrivate lets webhooks reach private and loopback addresses (development, tests).
	AllowPrivate bool
	// Resolver resolves host names (net.DefaultResolver when nil).
	Resolver *net.Resolver
}

// ErrForbiddenDestination is wrapped when a URL or an address may not be reached.
var ErrForbiddenDestination = errors.New("forbidden webhook destination")

// CheckURL validates an endpoint URL: absolute http(s) (https when requireHTTPS), no user
// info, and a host whose every address is allowed.
func (g Guard) CheckURL(ctx context.Context, raw string, requireHTTPS bool) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return fmt.Errorf("%w: not an absolute URL", ErrForbiddenDestination)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && !requireHTTPS:
	default:
		if requireHTTPS {
			return fmt.Errorf("%w: LIVE endpoints must use https", ErrForbiddenDestination)
		}
		return fmt.Errorf("%w: the scheme must be http or https", ErrForbiddenDestination)
	}
	if u.User != nil {
		return fmt.Errorf("%w: credentials in the URL are not allowed", ErrForbiddenDestination)
	}
	_, err = g.resolve(ctx, u.Hostname())
	return err
}

// resolve returns the allowed addresses of a host, or an error when any is forbidden.
func (g Guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if host == "" {
		return nil, fmt.Errorf("%w: no host", ErrForbiddenDestination)
	}
	if a, ok := legacyIPv4(host); ok && !g.AllowPrivate {
		// 2130706433, 0x7f000001, 0177.0.0.1, 127.1: forms some resolvers accept as addresses.
		if !allowed(a) {
			return nil, fmt.Errorf("%w: %s is %s", ErrForbiddenDestination, host, a)
		}
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		addrs = []netip.Addr{a}
	} else {
		r := g.Resolver
		if r == nil {
			r = net.DefaultResolver
		}
		ips, err := r.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, fmt.Errorf("%w: %s does not resolve", ErrForbiddenDestination, host)
		}
		addrs = ips
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%w: %s has no address", ErrForbiddenDestination, host)
	}
	if !g.AllowPrivate {
		for _, a := range addrs {
			if !allowed(a) {
				return nil, fmt.Errorf("%w: %s resolves to %s", ErrForbiddenDestination, host, a)
			}
		}
	}
	return addrs, nil
}

// metadata are cloud instance-metadata addresses.
var metadata = []netip.Addr{netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("fd00:ec2::254"), netip.MustParseAddr("100.100.100.200")}

// forbiddenRanges are ranges no webhook may target besides what netip classifies.
var forbiddenRanges = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),     // "this network"
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),  // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"), // benchmarking
	netip.MustParsePrefix("64:ff9b::/96"),  // NAT64 (can reach IPv4 internals)
	netip.MustParsePrefix("2002::/16"),     // 6to4
}

// allowed reports whether an address is a public unicast address.
func allowed(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsUnspecified() || a.IsMulticast() || a.IsInterfaceLocalMulticast() {
		return false
	}
	for _, m := range metadata {
		if a == m {
			return false
		}
	}
	for _, p := range forbiddenRanges {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// legacyIPv4 parses the inet_aton forms of an IPv4 address (decimal, octal, hex parts, one to
// four of them), which some resolvers still honour.
func legacyIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if len(parts) == 0 || len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		base := 10
		switch {
		case strings.HasPrefix(p, "0x") || strings.HasPrefix(p, "0X"):
			p, base = p[2:], 16
		case len(p) > 1 && p[0] == '0':
			p, base = p[1:], 8
		}
		if p == "" {
			if base == 16 {
				return netip.Addr{}, false
			}
			p = "0"
		}
		v, err := strconv.ParseUint(p, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var n uint64
	last := len(vals) - 1
	for i := 0; i < last; i++ {
		if vals[i] > 255 {
			return netip.Addr{}, false
		}
		n |= vals[i] << (24 - 8*i)
	}
	if vals[last] >= 1<<(8*(4-last)) {
		return netip.Addr{}, false
	}
	n |= vals[last]
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

// Transport returns an HTTP transport that checks every address it dials and dials only the
// checked address, never following a redirect's host on its own (the client should not follow
// redirects: a redirect is a failed delivery).
func (g Guard) Transport(timeout time.Duration) *http.Transport {
	dialer := &net.Dialer{Timeout: timeout}
	return &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, address string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(address)
			if err != nil {
				return nil, err
			}
			addrs, err := g.resolve(ctx, host)
			if err != nil {
				return nil, err
			}
			var last error
			for _, a := range addrs {
				conn, err := dialer.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
				if err == nil {
					return conn, nil
				}
				last = err
			}
			return nil, last
		},
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
	}
}
