package webhooks

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
)

const maxURLLen = 2048

// notPublic4 lists the IPv4 ranges that are not an ordinary Internet host,
// from the IANA special-purpose registry: these reach the server itself, its
// network or its cloud provider (the metadata services at 169.254.169.254 and
// Alibaba's 100.100.100.200 are inside 169.254/16 and 100.64/10).
var notPublic4 = prefixes(
	"0.0.0.0/8",       // "this network"
	"10.0.0.0/8",      // private
	"100.64.0.0/10",   // carrier-grade NAT
	"127.0.0.0/8",     // loopback
	"169.254.0.0/16",  // link-local, cloud metadata
	"172.16.0.0/12",   // private
	"192.0.0.0/24",    // IETF protocol assignments
	"192.0.2.0/24",    // documentation
	"192.88.99.0/24",  // deprecated 6to4 relays
	"192.168.0.0/16",  // private
	"198.18.0.0/15",   // benchmarking
	"198.51.100.0/24", // documentation
	"203.0.113.0/24",  // documentation
	"224.0.0.0/4",     // multicast
	"240.0.0.0/4",     // reserved, and the broadcast address
)

// notPublic6 lists the IPv6 ranges inside global unicast (2000::/3) that are
// not an ordinary Internet host; everything outside 2000::/3 is refused
// anyway (loopback, unspecified, unique local fc00::/7 with AWS's metadata
// fd00:ec2::254, link-local, site-local, multicast, discard, SRv6).
var notPublic6 = prefixes(
	"2001::/23",     // IETF protocol assignments: Teredo, benchmarking, ORCHID
	"2001:db8::/32", // documentation
	"3fff::/20",     // documentation
)

var (
	global6 = netip.MustParsePrefix("2000::/3")
	// Addresses that carry an IPv4 address inside are judged by that address,
	// so that a NAT64 or 6to4 gateway cannot be used to reach 127.0.0.1.
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour  = netip.MustParsePrefix("2002::/16")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
)

func prefixes(ss ...string) []netip.Prefix {
	ps := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		ps[i] = netip.MustParsePrefix(s)
	}
	return ps
}

// IsPublicAddr reports whether a delivery may connect to ip: an ordinary
// Internet host, not loopback, private (RFC 1918, fc00::/7), link-local,
// unspecified, multicast, broadcast, carrier-grade NAT (100.64/10),
// 0.0.0.0/8, 192.0.0.0/24, benchmarking (198.18/15), documentation, the
// cloud metadata addresses (169.254.169.254, fd00:ec2::254, 100.100.100.200),
// nor any of those in IPv4-mapped, NAT64 (64:ff9b::/96) or 6to4 (2002::/16)
// form. An address with an IPv6 zone is refused: only link-local ones have
// a use for it.
func IsPublicAddr(ip netip.Addr) bool {
	if !ip.IsValid() || ip.Zone() != "" {
		return false
	}
	ip = ip.Unmap()
	if ip.Is4() {
		for _, p := range notPublic4 {
			if p.Contains(ip) {
				return false
			}
		}
		return true
	}
	b := ip.As16()
	switch {
	case nat64.Contains(ip) && !nat64Local.Contains(ip):
		return IsPublicAddr(netip.AddrFrom4([4]byte(b[12:16])))
	case sixToFour.Contains(ip):
		return IsPublicAddr(netip.AddrFrom4([4]byte(b[2:6])))
	case !global6.Contains(ip):
		return false
	}
	for _, p := range notPublic6 {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// addrError is the dial-time refusal of an address; its text is what
// Attempt.Err reports.
type addrError struct{ addr string }

func (e *addrError) Error() string { return "address not allowed: " + e.addr }

// dialControl is the net.Dialer Control of deliveries: it runs after name
// resolution with the address about to be connected to, so a name that
// passed CheckURL and now resolves to a private address (DNS rebinding)
// is refused before any byte is sent.
func dialControl(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &addrError{addr: address}
	}
	if network != "tcp4" && network != "tcp6" || !IsPublicAddr(ap.Addr()) {
		return &addrError{addr: ap.Addr().String()}
	}
	return nil
}

// CheckURL validates a subscription URL when it is created or changed: an
// absolute https URL with a host, no user info and no fragment. Unless
// allowPrivate is set, a literal IP host must pass IsPublicAddr, and a name
// must be a dotted DNS name whose last label starts with a letter (which
// rules out numeric spellings of addresses such as 127.1 or 2130706433) and
// is not localhost or under .localhost, .internal or .local. With
// allowPrivate, http is accepted too. The error's message is written for
// API users.
func CheckURL(raw string, allowPrivate bool) error {
	u, err := parseURL(raw, allowPrivate)
	if err != nil {
		return err
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.Zone() != "" {
			return errors.New("url must not name an IPv6 zone")
		}
		if !allowPrivate && !IsPublicAddr(ip) {
			return fmt.Errorf("url must not point to a loopback, private, link-local or otherwise reserved address (%s)", ip)
		}
		return nil
	}
	return checkHostName(host, allowPrivate)
}

// parseURL checks the form of a URL, the part of CheckURL that Send also
// applies; the addresses are left to the dial-time check.
func parseURL(raw string, allowHTTP bool) (*url.URL, error) {
	if len(raw) > maxURLLen {
		return nil, fmt.Errorf("url must be at most %d characters", maxURLLen)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("url is not a valid URL")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && allowHTTP:
	case allowHTTP:
		return nil, errors.New("url must be an absolute https or http URL")
	default:
		return nil, errors.New("url must be an absolute https URL")
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return nil, errors.New("url must name a host (https://host/path)")
	}
	if u.User != nil {
		return nil, errors.New("url must not contain a user name or password")
	}
	if strings.Contains(raw, "#") {
		return nil, errors.New("url must not contain a fragment (#...)")
	}
	// url.Parse has checked that a port is digits, not that it is in range.
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, errors.New("url has an invalid port")
		}
	}
	return u, nil
}

// checkHostName checks a host that is not a literal IP address.
func checkHostName(host string, allowPrivate bool) error {
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	if len(name) > 253 {
		return errors.New("url host is longer than 253 characters")
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if !validLabel(l) {
			return errors.New("url host is not a valid DNS name (letters, digits and '-' in dot-separated labels; write an internationalized name in its xn-- form)")
		}
	}
	if allowPrivate {
		return nil
	}
	last := labels[len(labels)-1]
	switch {
	case last == "localhost" || last == "internal" || last == "local":
		return errors.New("url must not name a local host (localhost, .localhost, .internal, .local)")
	case len(labels) < 2 || last[0] < 'a' || last[0] > 'z':
		return errors.New("url host must be a public DNS name or IP address")
	}
	return nil
}

func validLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
