package webhooks

import (
	"net/netip"
	"strings"
	"testing"
)

func TestIsPublicAddr(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"8.8.8.8", true},
		{"1.1.1.1", true},
		{"93.184.215.14", true},
		{"100.63.255.255", true},
		{"100.128.0.0", true},
		{"172.15.255.255", true},
		{"172.32.0.0", true},
		{"198.17.255.255", true},
		{"198.20.0.0", true},
		{"223.255.255.255", true},
		{"0.0.0.0", false},
		{"0.1.2.3", false},
		{"10.0.0.1", false},
		{"100.64.0.1", false},
		{"100.100.100.200", false}, // Alibaba metadata
		{"127.0.0.1", false},
		{"127.255.255.254", false},
		{"169.254.169.254", false}, // AWS, GCP, Azure metadata
		{"172.16.0.1", false},
		{"172.31.255.255", false},
		{"192.0.0.8", false},
		{"192.0.2.1", false},
		{"192.88.99.1", false},
		{"192.168.1.1", false},
		{"198.18.0.1", false},
		{"198.19.255.255", false},
		{"198.51.100.7", false},
		{"203.0.113.9", false},
		{"224.0.0.1", false},
		{"239.255.255.250", false},
		{"240.0.0.1", false},
		{"255.255.255.255", false},

		{"2606:4700:4700::1111", true},
		{"2a00:1450:4001:82a::200e", true},
		{"::", false},
		{"::1", false},
		{"::127.0.0.1", false}, // deprecated IPv4-compatible form
		{"::ffff:8.8.8.8", true},
		{"::ffff:127.0.0.1", false},
		{"::ffff:10.1.2.3", false},
		{"::ffff:169.254.169.254", false},
		{"64:ff9b::8.8.8.8", true},
		{"64:ff9b::127.0.0.1", false},
		{"64:ff9b::169.254.169.254", false},
		{"64:ff9b:1::8.8.8.8", false}, // local-use NAT64
		{"2002:808:808::1", true},     // 6to4 of 8.8.8.8
		{"2002:7f00:1::1", false},     // 6to4 of 127.0.0.1
		{"2002:a9fe:a9fe::1", false},  // 6to4 of 169.254.169.254
		{"100::1", false},
		{"2001::1", false},   // Teredo
		{"2001:2::1", false}, // benchmarking
		{"2001:db8::1", false},
		{"3fff::1", false},
		{"fc00::1", false},
		{"fd00:ec2::254", false}, // AWS metadata over IPv6
		{"fe80::1", false},
		{"fec0::1", false},
		{"ff02::1", false},
		{"5f00::1", false},
		{"2606:4700::1%eth0", false},
	} {
		if got := IsPublicAddr(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("IsPublicAddr(%s): got %v, want %v", tc.addr, got, tc.want)
		}
	}
	if IsPublicAddr(netip.Addr{}) {
		t.Error("IsPublicAddr(zero Addr): got true, want false")
	}
}

// TestDialControl checks the dial-time guard with the addresses a resolver
// may hand it, which is how a rebinding DNS name would arrive.
func TestDialControl(t *testing.T) {
	for _, tc := range []struct {
		network, address string
		want             string // "" when allowed
	}{
		{"tcp4", "8.8.8.8:443", ""},
		{"tcp6", "[2606:4700:4700::1111]:443", ""},
		{"tcp4", "127.0.0.1:443", "address not allowed: 127.0.0.1"},
		{"tcp4", "10.0.0.1:8443", "address not allowed: 10.0.0.1"},
		{"tcp4", "169.254.169.254:80", "address not allowed: 169.254.169.254"},
		{"tcp6", "[::1]:443", "address not allowed: ::1"},
		{"tcp6", "[::ffff:127.0.0.1]:443", "address not allowed: ::ffff:127.0.0.1"},
		{"tcp6", "[fd00:ec2::254]:80", "address not allowed: fd00:ec2::254"},
		{"tcp6", "[fe80::1%eth0]:443", "address not allowed: fe80::1%eth0"},
		{"udp4", "8.8.8.8:53", "address not allowed: 8.8.8.8"},
		{"tcp4", "not-an-address", "address not allowed: not-an-address"},
	} {
		err := dialControl(tc.network, tc.address, nil)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("dialControl(%s, %s): got %q, want %q", tc.network, tc.address, got, tc.want)
		}
	}
}

func TestCheckURL(t *testing.T) {
	for _, tc := range []struct {
		url          string
		allowPrivate bool
		want         string // a part of the error message; "" when accepted
	}{
		{"https://example.com/hooks", false, ""},
		{"https://hooks.example.com:8443/a/b?x=1", false, ""},
		{"https://EXAMPLE.com./x", false, ""},
		{"https://xn--80ak6aa92e.com/", false, ""},
		{"https://8.8.8.8/hook", false, ""},
		{"https://[2606:4700:4700::1111]/hook", false, ""},

		{"http://example.com/hooks", false, "absolute https URL"},
		{"ftp://example.com/", false, "absolute https URL"},
		{"example.com/hooks", false, "absolute https URL"},
		{"/hooks", false, "absolute https URL"},
		{"", false, "absolute https URL"},
		{"https:example.com", false, "must name a host"},
		{"https:///path", false, "must name a host"},
		{"https://:443/path", false, "must name a host"},
		{"https://user:pw@example.com/", false, "user name or password"},
		{"https://user@example.com/", false, "user name or password"},
		{"https://example.com/#frag", false, "fragment"},
		{"https://example.com/#", false, "fragment"},
		{"https://example.com:0/", false, "invalid port"},
		{"https://example.com:65536/", false, "invalid port"},
		{"https://example.com:https/", false, "not a valid URL"},
		{"https://exa mple.com/", false, "not a valid URL"},
		{"https://" + strings.Repeat("a", 2048) + ".com/", false, "at most 2048"},
		{"https://127.0.0.1/", false, "reserved address"},
		{"https://[::1]/", false, "reserved address"},
		{"https://[::ffff:169.254.169.254]/", false, "reserved address"},
		{"https://169.254.169.254/latest/meta-data/", false, "reserved address"},
		{"https://10.0.0.1/", false, "reserved address"},
		{"https://[fe80::1%25eth0]/", false, "IPv6 zone"},
		{"https://localhost/", false, "local host"},
		{"https://LocalHost./", false, "local host"},
		{"https://app.localhost/", false, "local host"},
		{"https://metadata.google.internal/", false, "local host"},
		{"https://printer.local/", false, "local host"},
		{"https://intranet/", false, "public DNS name"},
		{"https://127.1/", false, "public DNS name"},
		{"https://0x7f.1/", false, "public DNS name"},
		{"https://2130706433/", false, "public DNS name"},
		{"https://0177.0.0.1/", false, "public DNS name"},
		{"https://1.0x7f/", false, "public DNS name"},
		{"https://-bad.example.com/", false, "valid DNS name"},
		{"https://a..b.com/", false, "valid DNS name"},
		{"https://exämple.com/", false, "valid DNS name"},
		{"https://" + strings.Repeat("a", 64) + ".com/", false, "valid DNS name"},

		{"http://127.0.0.1:8080/hook", true, ""},
		{"https://localhost/", true, ""},
		{"http://receiver/hook", true, ""},
		{"https://[::1]:8443/", true, ""},
		{"ftp://localhost/", true, "https or http"},
		{"http://user@localhost/", true, "user name or password"},
		{"http://localhost/#x", true, "fragment"},
		{"https://[fe80::1%25eth0]/", true, "IPv6 zone"},
	} {
		err := CheckURL(tc.url, tc.allowPrivate)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckURL(%q, %v): got %v, want nil", tc.url, tc.allowPrivate, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("CheckURL(%q, %v): got %v, want an error containing %q", tc.url, tc.allowPrivate, err, tc.want)
		}
	}
}
