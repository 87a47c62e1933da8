package server

import (
	"acctapi/server/servertest"

	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestTLSFiles(t *testing.T) {
	dir := t.TempDir()
	certPath, keyPath := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	first := servertest.NewCert(t, nil, false, "127.0.0.1", "api.example.test")
	first.Write(t, certPath, keyPath, time.Now().Add(-time.Hour))

	cfg, stderr := testConfig(filepath.Join(dir, "data"))
	cfg.TLSCert, cfg.TLSKey = certPath, keyPath
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.TLSReloadCheck = 20 * time.Millisecond
	r := startServer(t, cfg)
	base := "https://" + r.srv.Addr() + "/v1"

	t.Run("serves HTTPS with the files' certificate and HSTS", func(t *testing.T) {
		res, err := servertest.HTTPSClient(first.Cert).Get(base + "/openapi.json")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var doc struct{ Servers []struct{ URL string } }
		if err := json.NewDecoder(res.Body).Decode(&doc); err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != http.StatusOK || len(doc.Servers) != 1 || doc.Servers[0].URL != base {
			t.Errorf("GET /v1/openapi.json: %d, servers %+v, want 200 and the https base URL %s", res.StatusCode, doc.Servers, base)
		}
		if got := res.Header.Get("Strict-Transport-Security"); got != "max-age=31536000" {
			t.Errorf("Strict-Transport-Security: %q, want max-age=31536000", got)
		}
		if res.TLS == nil || !res.TLS.PeerCertificates[0].Equal(first.Cert) {
			t.Errorf("the server did not present the --tls-cert certificate")
		}
		h2 := servertest.HTTPSClient(first.Cert)
		h2.Transport.(*http.Transport).ForceAttemptHTTP2 = true
		res, err = h2.Get(base + "/health")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK || res.ProtoMajor != 2 {
			t.Errorf("GET /v1/health from an HTTP/2 client: %d over %s, want 200 over HTTP/2", res.StatusCode, res.Proto)
		}
	})

	t.Run("plain HTTP redirects to HTTPS", func(t *testing.T) {
		_, port, _ := net.SplitHostPort(r.srv.Addr())
		for _, c := range []struct {
			method, host, path string
			status             int
			location           string
		}{
			{"GET", "", "/v1/tasks?limit=5&sort=title", 301, "https://127.0.0.1:" + port + "/v1/tasks?limit=5&sort=title"},
			{"POST", "", "/v1/tasks", 301, "https://127.0.0.1:" + port + "/v1/tasks"},
			{"GET", "api.example.test", "/", 301, "https://api.example.test:" + port + "/"},
			{"GET", "api.example.test:80", "/v1/health", 301, "https://api.example.test:" + port + "/v1/health"},
			{"GET", "[::1]:80", "/v1/me", 301, "https://[::1]:" + port + "/v1/me"},
			{"GET", "user@evil.test", "/", 400, ""},
		} {
			req, err := http.NewRequest(c.method, "http://"+r.srv.HTTPAddr()+c.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if c.host != "" {
				req.Host = c.host
			}
			res, err := servertest.HTTPSClient().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != c.status || res.Header.Get("Location") != c.location {
				t.Errorf("%s http://%s%s: %d to %q, want %d to %q", c.method, c.host, c.path, res.StatusCode, res.Header.Get("Location"), c.status, c.location)
			}
		}
	})

	t.Run("the files are loaded again when they change", func(t *testing.T) {
		// A certificate whose key is not written yet does not load: the
		// server goes on with the one it has.
		second := servertest.NewCert(t, nil, false, "127.0.0.1")
		if err := os.WriteFile(certPath, second.CertPEM, 0o600); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(stderr.String(), "changed but do not load") {
			if time.Now().After(deadline) {
				t.Fatal("a certificate without its key was not reported")
			}
			if got := servertest.ServedCert(t, r.srv.Addr(), ""); !got.Equal(first.Cert) {
				t.Fatal("the server dropped its certificate for one whose key it does not have")
			}
			time.Sleep(10 * time.Millisecond)
		}
		second.Write(t, certPath, keyPath, time.Now())
		for !servertest.ServedCert(t, r.srv.Addr(), "").Equal(second.Cert) {
			if time.Now().After(deadline) {
				t.Fatal("the new certificate was not served within 10 s")
			}
			time.Sleep(10 * time.Millisecond)
		}
		res, err := servertest.HTTPSClient(second.Cert).Get(base + "/health")
		if err != nil {
			t.Fatalf("GET /v1/health with the new certificate: %v", err)
		}
		res.Body.Close()
	})
}

func TestTLSConfigRefused(t *testing.T) {
	dir := t.TempDir()
	certPath, keyPath := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	servertest.NewCert(t, nil, false, "127.0.0.1").Write(t, certPath, keyPath, time.Now())
	for _, c := range []struct {
		what      string
		configure func(*Config)
		want      string
	}{
		{"a certificate without its key", func(c *Config) { c.TLSCert = certPath }, "--tls-key"},
		{"both ways to a certificate", func(c *Config) { c.TLSCert, c.TLSKey, c.TLSDomain = certPath, keyPath, "api.example.test" }, "not both"},
		{"an ACME directory without a domain", func(c *Config) { c.ACMEDirectory = "https://127.0.0.1:14000/dir" }, "--tls-domain"},
		{"a redirect without HTTPS", func(c *Config) { c.HTTPAddr = "127.0.0.1:0" }, "--http-addr"},
		{"a domain with a port", func(c *Config) { c.TLSDomain = "api.example.test:443" }, "--tls-domain"},
		{"a name that is no domain", func(c *Config) { c.TLSDomain = "localhost" }, "--tls-domain"},
		{"a key that does not match", func(c *Config) { c.TLSCert, c.TLSKey = certPath, certPath }, "--tls-cert"},
		{"an unreadable CA root", func(c *Config) { c.TLSDomain, c.ACMECARoot = "api.example.test", filepath.Join(dir, "none.pem") }, "--acme-ca-root"},
		{"a CA root without a certificate", func(c *Config) { c.TLSDomain, c.ACMECARoot = "api.example.test", keyPath }, "--acme-ca-root"},
	} {
		t.Run(c.what, func(t *testing.T) {
			cfg, _ := testConfig(filepath.Join(dir, "data"))
			c.configure(cfg)
			srv, err := Open(context.Background(), cfg)
			if err == nil {
				srv.Close()
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("OpenServer: got %v, want an error naming %s", err, c.want)
			}
		})
	}
}
