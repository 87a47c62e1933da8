package cmd

import (
	"acctapi/server"

	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testCert is a certificate and key made for a test, in PEM and parsed.
type testCert struct {
	certPEM, keyPEM []byte
	cert            *x509.Certificate
	key             *ecdsa.PrivateKey
}

// newTestCert makes a certificate for the names (IP addresses or DNS
// names), signed by parent, or self-signed when parent is nil; isCA makes
// one that signs others.
func newTestCert(t *testing.T, parent *testCert, isCA bool, names ...string) *testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "acctapi test " + serial.String()},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if isCA {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	}
	for _, name := range names {
		if ip := net.ParseIP(name); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, name)
		}
	}
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &testCert{
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		cert:    cert, key: key,
	}
}

// write puts the certificate and key in the files, and moves their
// modification time to at, as a renewal tool writing them would.
func (c *testCert) write(t *testing.T, certPath, keyPath string, at time.Time) {
	t.Helper()
	for path, data := range map[string][]byte{certPath: c.certPEM, keyPath: c.keyPEM} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
}

// httpsClient trusts only the roots, and follows no redirect.
func httpsClient(roots ...*x509.Certificate) *http.Client {
	pool := x509.NewCertPool()
	for _, r := range roots {
		pool.AddCert(r)
	}
	return &http.Client{
		Timeout:       10 * time.Second,
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// servedCert makes a TLS handshake with addr for the server name and
// returns the leaf certificate the server sent (unverified).
func servedCert(t *testing.T, addr, serverName string) *x509.Certificate {
	t.Helper()
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{ServerName: serverName, InsecureSkipVerify: true})
	if err != nil {
		t.Fatalf("TLS handshake with %s: %v", addr, err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0]
}

func TestTLSFiles(t *testing.T) {
	dir := t.TempDir()
	certPath, keyPath := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	first := newTestCert(t, nil, false, "127.0.0.1", "api.example.test")
	first.write(t, certPath, keyPath, time.Now().Add(-time.Hour))

	cfg, _, stderr := testConfig(filepath.Join(dir, "data"))
	cfg.TLSCert, cfg.TLSKey = certPath, keyPath
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.TLSReloadCheck = 20 * time.Millisecond
	r := startServer(t, cfg)
	base := "https://" + r.srv.Addr() + "/v1"

	t.Run("serves HTTPS with the files' certificate and HSTS", func(t *testing.T) {
		res, err := httpsClient(first.cert).Get(base + "/openapi.json")
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
		if res.TLS == nil || !res.TLS.PeerCertificates[0].Equal(first.cert) {
			t.Errorf("the server did not present the --tls-cert certificate")
		}
		h2 := httpsClient(first.cert)
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
			res, err := httpsClient().Do(req)
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
		second := newTestCert(t, nil, false, "127.0.0.1")
		if err := os.WriteFile(certPath, second.certPEM, 0o600); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(stderr.String(), "changed but do not load") {
			if time.Now().After(deadline) {
				t.Fatal("a certificate without its key was not reported")
			}
			if got := servedCert(t, r.srv.Addr(), ""); !got.Equal(first.cert) {
				t.Fatal("the server dropped its certificate for one whose key it does not have")
			}
			time.Sleep(10 * time.Millisecond)
		}
		second.write(t, certPath, keyPath, time.Now())
		for !servedCert(t, r.srv.Addr(), "").Equal(second.cert) {
			if time.Now().After(deadline) {
				t.Fatal("the new certificate was not served within 10 s")
			}
			time.Sleep(10 * time.Millisecond)
		}
		res, err := httpsClient(second.cert).Get(base + "/health")
		if err != nil {
			t.Fatalf("GET /v1/health with the new certificate: %v", err)
		}
		res.Body.Close()
	})
}

func TestTLSConfigRefused(t *testing.T) {
	dir := t.TempDir()
	certPath, keyPath := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	newTestCert(t, nil, false, "127.0.0.1").write(t, certPath, keyPath, time.Now())
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
			cfg, _, _ := testConfig(filepath.Join(dir, "data"))
			c.configure(cfg)
			srv, err := server.Open(context.Background(), &cfg.Config)
			if err == nil {
				srv.Close()
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("OpenServer: got %v, want an error naming %s", err, c.want)
			}
		})
	}
}

func TestHTTPSDefaults(t *testing.T) {
	t.Setenv("ACCTAPI_ADDR", "")
	for _, c := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--tls-domain", "api.example.test"}, "", ":443"},
		{[]string{"--tls-domain", "api.example.test", "--addr", ":8443"}, "", ":8443"},
		{[]string{"--tls-domain", "api.example.test"}, "0.0.0.0:9443", "0.0.0.0:9443"},
		{[]string{"--tls-cert", "c.pem", "--tls-key", "k.pem"}, "", "127.0.0.1:8080"},
	} {
		t.Setenv("ACCTAPI_ADDR", c.env)
		cfg := &Config{}
		cmd := newServeCmd(cfg)
		if err := cmd.ParseFlags(c.args); err != nil {
			t.Fatal(err)
		}
		defaultToHTTPS(cmd, cfg)
		if cfg.Addr != c.want {
			t.Errorf("%v with ACCTAPI_ADDR=%q: --addr %q, want %q", c.args, c.env, cfg.Addr, c.want)
		}
	}
}
