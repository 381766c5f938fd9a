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
// set (development, tests), it allows only globally reachable unicast addresses (see allowed:
// the IANA special-purpose registries, IPv4 carried in IPv6 checked as IPv4) and refuses the
// cloud-metadata ones, both when an endpoint is created (CheckURL) and when a delivery
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

// metadata are cloud instance-metadata addresses (besides those the ranges below refuse).
var metadata = []netip.Addr{netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("fd00:ec2::254"), netip.MustParseAddr("100.100.100.200")}

// notGlobal4 are the IPv4 ranges of the IANA IPv4 Special-Purpose Address Registry that are not
// globally reachable, with multicast and the reserved 240.0.0.0/4 (which holds the limited
// broadcast address). The registry's globally reachable anycast entries inside 192.0.0.0/24 are
// refused too: no webhook endpoint lives there.
var notGlobal4 = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("10.0.0.0/8"),      // private use
	netip.MustParsePrefix("100.64.0.0/10"),   // shared address space (carrier-grade NAT)
	netip.MustParsePrefix("127.0.0.0/8"),     // loopback
	netip.MustParsePrefix("169.254.0.0/16"),  // link local
	netip.MustParsePrefix("172.16.0.0/12"),   // private use
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation (TEST-NET-1)
	netip.MustParsePrefix("192.88.99.0/24"),  // 6to4 relay anycast (deprecated)
	netip.MustParsePrefix("192.168.0.0/16"),  // private use
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation (TEST-NET-2)
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation (TEST-NET-3)
	netip.MustParsePrefix("224.0.0.0/4"),     // multicast
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and 255.255.255.255
}

// globalUnicast6 is the IPv6 global unicast space (IANA IPv6 Address Space registry); an IPv6
// address outside it is refused unless it carries an IPv4 address (embedded4).
var globalUnicast6 = netip.MustParsePrefix("2000::/3")

// notGlobal6 are the ranges inside 2000::/3 of the IANA IPv6 Special-Purpose Address Registry
// that are not globally reachable (2001::/23, IETF protocol assignments, is refused whole but
// for Teredo, whose IPv4 addresses are checked; its few global anycast entries are no webhook
// endpoint).
var notGlobal6 = []netip.Prefix{
	netip.MustParsePrefix("2001::/23"),     // IETF protocol assignments (benchmarking, ORCHID, AMT, …)
	netip.MustParsePrefix("2001:db8::/32"), // documentation
	netip.MustParsePrefix("3fff::/20"),     // documentation
}

// IPv6 forms that carry an IPv4 address, which is checked as IPv4.
var (
	mapped4   = netip.MustParsePrefix("::ffff:0:0/96")   // IPv4-mapped
	siit4     = netip.MustParsePrefix("::ffff:0:0:0/96") // IPv4-translated (SIIT)
	nat64WKP  = netip.MustParsePrefix("64:ff9b::/96")    // NAT64 well-known prefix
	sixToFour = netip.MustParsePrefix("2002::/16")       // 6to4: the IPv4 address in bits 16–47
	teredo    = netip.MustParsePrefix("2001::/32")       // Teredo: server in bits 32–63, client (inverted) in 96–127
)

// embedded4 returns the IPv4 addresses an IPv6 address carries in the NAT64, SIIT, mapped, 6to4
// and Teredo forms, and whether it is one of them.
func embedded4(a netip.Addr) ([]netip.Addr, bool) {
	b := a.As16()
	last := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	switch {
	case mapped4.Contains(a), siit4.Contains(a), nat64WKP.Contains(a):
		return []netip.Addr{last}, true
	case sixToFour.Contains(a):
		return []netip.Addr{netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})}, true
	case teredo.Contains(a):
		server := netip.AddrFrom4([4]byte{b[4], b[5], b[6], b[7]})
		client := netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
		return []netip.Addr{server, client}, true
	}
	return nil, false
}

// allowed reports whether an address is a globally reachable unicast address: an IPv4 address
// outside notGlobal4, an IPv6 one in 2000::/3 outside notGlobal6, or an IPv6 form carrying IPv4
// addresses that are all allowed. Anything else (IPv4-compatible ::/96, 64:ff9b:1::/48,
// discard-only 100::/64, ULA, link- and site-local, multicast, an address with a zone) is refused.
func allowed(a netip.Addr) bool {
	if !a.IsValid() || a.Zone() != "" {
		return false
	}
	for _, m := range metadata {
		if a == m {
			return false
		}
	}
	if a.Is4() {
		for _, p := range notGlobal4 {
			if p.Contains(a) {
				return false
			}
		}
		return true
	}
	if inner, ok := embedded4(a); ok {
		for _, v4 := range inner {
			if !allowed(v4) {
				return false
			}
		}
		return true
	}
	if !globalUnicast6.Contains(a) {
		return false
	}
	for _, p := range notGlobal6 {
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
