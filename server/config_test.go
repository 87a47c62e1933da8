package server

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMailQuota(t *testing.T) {
	for quota, ok := range map[int]bool{0: true, 99: false, 100: true, 5000: true, -1: false} {
		if err := checkMailQuota(&Config{MailQuota: quota}); (err == nil) != ok || (err != nil && !strings.Contains(err.Error(), "--mail-quota")) {
			t.Errorf("--mail-quota %d: got %v", quota, err)
		}
	}
}

func TestSMTPURLFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "smtp-url")
	if err := os.WriteFile(file, []byte("smtps://user:s3cret@mail.example:465\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	relay, from, err := mailRelay(&Config{SMTPURLFile: file, MailFrom: "office@firm.example"})
	if err != nil || relay.Addr() != "mail.example:465" || from != "office@firm.example" {
		t.Fatalf("from the file: %v, %q, %v", relay, from, err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]*Config{
		"both":    {SMTPURL: "smtps://user:s3cret@mail.example", SMTPURLFile: file, MailFrom: "office@firm.example"},
		"missing": {SMTPURLFile: filepath.Join(dir, "none"), MailFrom: "office@firm.example"},
		"empty":   {SMTPURLFile: empty, MailFrom: "office@firm.example"},
	} {
		if _, _, err := mailRelay(cfg); err == nil || !strings.Contains(err.Error(), "--smtp-url") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: got %v, want an error naming the flag and not the password", name, err)
		}
	}
}

func TestTrustedProxies(t *testing.T) {
	got, err := parseTrustedProxies([]string{"10.0.0.0/8", " 192.0.2.7 ", "2001:db8::/32", "::ffff:198.51.100.1", ""})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"10.0.0.0/8", "192.0.2.7/32", "2001:db8::/32", "198.51.100.1/32"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, bad := range []string{"proxy.example", "10.0.0.0/33"} {
		if _, err := parseTrustedProxies([]string{bad}); err == nil || !strings.Contains(err.Error(), "--trusted-proxies") {
			t.Errorf("%q: got %v, want an error naming the flag", bad, err)
		}
	}
}

func TestDefaultBaseURL(t *testing.T) {
	for _, c := range []struct {
		addr   string
		https  bool
		domain string
		want   string
	}{
		{"127.0.0.1:8080", false, "", "http://127.0.0.1:8080/v1"},
		{"0.0.0.0:443", true, "api.example.test", "https://api.example.test/v1"},
		{"0.0.0.0:8443", true, "api.example.test", "https://api.example.test:8443/v1"},
		{"127.0.0.1:8443", true, "", "https://127.0.0.1:8443/v1"},
		{"[::]:443", true, "", "https://localhost/v1"},
		{"[::1]:443", true, "", "https://[::1]/v1"},
	} {
		addr, err := net.ResolveTCPAddr("tcp", c.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := defaultBaseURL(addr, c.https, c.domain); got != c.want {
			t.Errorf("base URL of %s (https %v, domain %q): %q, want %q", c.addr, c.https, c.domain, got, c.want)
		}
	}
}
