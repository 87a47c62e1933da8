package server

import (
	"acctapi/server/servertest"

	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"acctapi/testprog"
)

// pebbleVersion is the Pebble release the ACME test runs against; .ci/run
// installs the same.
const pebbleVersion = "v2.10.1"

// pebbleInstall is how to install Pebble and its DNS server.
const pebbleInstall = "go install github.com/letsencrypt/pebble/v2/cmd/pebble@" + pebbleVersion +
	" github.com/letsencrypt/pebble/v2/cmd/pebble-challtestsrv@" + pebbleVersion

// pebbleBinaries finds pebble and pebble-challtestsrv: without them the
// test is skipped, or fails under CI=true, where they must be installed.
func pebbleBinaries(t *testing.T) (pebble, challtestsrv string) {
	t.Helper()
	return testprog.Find(t, "pebble", pebbleInstall), testprog.Find(t, "pebble-challtestsrv", pebbleInstall)
}

// freePort returns a port of 127.0.0.1 that was free a moment ago, for a
// program that cannot be told to listen on port 0 and report it; with udp,
// free for both TCP and UDP (a DNS server).
func freePort(t *testing.T, udp bool) int {
	t.Helper()
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		if !udp {
			l.Close()
			return port
		}
		p, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(port))
		l.Close()
		if err == nil {
			p.Close()
			return port
		}
	}
	t.Fatal("no free port")
	return 0
}

// pebbleProcess is a program of Pebble's, run until the test ends.
type pebbleProcess struct {
	out    *servertest.SyncBuffer
	exited chan struct{}
}

// startPebbleProcess starts the program, its output kept for the test and
// for a failure's message.
func startPebbleProcess(t *testing.T, env []string, name string, args ...string) *pebbleProcess {
	t.Helper()
	p := &pebbleProcess{out: &servertest.SyncBuffer{}, exited: make(chan struct{})}
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.exited
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(name), p.out)
		}
	})
	return p
}

// running fails the test when the program has exited.
func (p *pebbleProcess) running(t *testing.T) {
	t.Helper()
	select {
	case <-p.exited:
		t.Fatalf("exited early:\n%s", p.out)
	default:
	}
}

// listenerPort returns the port of the API's listener ("api") or of a side
// listener.
func listenerPort(t *testing.T, s *Server, name string) int {
	t.Helper()
	addr := map[string]string{"api": s.Addr(), "http": s.HTTPAddr(), "metrics": s.MetricsAddr()}[name]
	tcp, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		t.Fatalf("%s listener %q: %v", name, addr, err)
	}
	return tcp.Port
}

// waitUntil polls ok every 50 ms until it is true, failing after timeout.
func waitUntil(t *testing.T, timeout time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestACMEWithPebble obtains a certificate from Pebble, Let's Encrypt's
// test CA, run on loopback: pebble-challtestsrv is its DNS server and
// answers 127.0.0.1 for every name, and Pebble validates HTTP-01 on the
// server's --http-addr port. Its TLS-ALPN-01 port is a closed one, so that
// autocert, which tries TLS-ALPN-01 first, must fall back to HTTP-01.
// Certificates live 20 s and ACMERenewBefore is 17 s, so the first is
// renewed within about 4 s. A second server on the same data dir then
// serves the cached certificate with the CA gone.
func TestACMEWithPebble(t *testing.T) {
	pebble, challtestsrv := pebbleBinaries(t)
	start := time.Now()
	dir := t.TempDir()
	const domain = "api.acctapi.test"

	// Pebble's own HTTPS listener gets a certificate of a CA made here,
	// which serve trusts through --acme-ca-root.
	ca := servertest.NewCert(t, nil, true)
	listener := servertest.NewCert(t, ca, false, "127.0.0.1", "localhost")
	caPath, certPath, keyPath := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "pebble-cert.pem"), filepath.Join(dir, "pebble-key.pem")
	listener.Write(t, certPath, keyPath, time.Now())
	if err := os.WriteFile(caPath, ca.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	acmePort, managementPort := freePort(t, false), freePort(t, false)

	cfg, stderr := testConfig(filepath.Join(dir, "data"))
	cfg.TLSDomain = domain
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.ACMEDirectory = fmt.Sprintf("https://127.0.0.1:%d/dir", acmePort)
	cfg.ACMECARoot = caPath
	cfg.ACMERenewBefore = 17 * time.Second
	r := startServer(t, cfg)
	httpPort := listenerPort(t, r.srv, "http")
	apiPort := strconv.Itoa(listenerPort(t, r.srv, "api"))

	dnsPort, dnsManagement := freePort(t, true), freePort(t, false)
	dns := startPebbleProcess(t, nil, challtestsrv,
		"-dnsserver", fmt.Sprintf("127.0.0.1:%d", dnsPort), "-management", fmt.Sprintf("127.0.0.1:%d", dnsManagement),
		"-defaultIPv4", "127.0.0.1", "-defaultIPv6", "",
		"-http01", "", "-https01", "", "-tlsalpn01", "", "-doh", "")
	config, err := json.Marshal(map[string]any{"pebble": map[string]any{
		"listenAddress":           fmt.Sprintf("127.0.0.1:%d", acmePort),
		"managementListenAddress": fmt.Sprintf("127.0.0.1:%d", managementPort),
		"certificate":             certPath,
		"privateKey":              keyPath,
		"httpPort":                httpPort,
		"tlsPort":                 freePort(t, false),
		"retryAfter":              map[string]int{"authz": 1, "order": 1},
		"keyAlgorithm":            "ecdsa",
		"profiles":                map[string]any{"default": map[string]any{"description": "short-lived", "validityPeriod": 20}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	configPath := filepath.Join(dir, "pebble.json")
	if err := os.WriteFile(configPath, config, 0o600); err != nil {
		t.Fatal(err)
	}
	pebbleOut := startPebbleProcess(t, []string{"PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0", "PEBBLE_AUTHZREUSE=0"},
		pebble, "-config", configPath, "-dnsserver", fmt.Sprintf("127.0.0.1:%d", dnsPort), "-strict=false")

	// Pebble's root, from its management interface: the issued chains
	// must verify against it.
	pebbleClient := servertest.HTTPSClient(ca.Cert)
	var rootPEM []byte
	waitUntil(t, 20*time.Second, "Pebble's management interface", func() bool {
		dns.running(t)
		pebbleOut.running(t)
		res, err := pebbleClient.Get(fmt.Sprintf("https://127.0.0.1:%d/roots/0", managementPort))
		if err != nil {
			return false
		}
		defer res.Body.Close()
		rootPEM, _ = io.ReadAll(res.Body)
		return res.StatusCode == http.StatusOK
	})
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(rootPEM) {
		t.Fatalf("Pebble's root: no certificate in %q", rootPEM)
	}
	// The client dials the server for the domain, as DNS would.
	client := &http.Client{
		Timeout: time.Minute,
		Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: roots},
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, network, r.srv.Addr())
			},
			DisableKeepAlives: true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	base := "https://" + domain + ":" + apiPort + "/v1"
	// get answers GET path over HTTPS with a chain verified against
	// Pebble's root, and returns the leaf.
	get := func(path string) (*x509.Certificate, []byte) {
		t.Helper()
		res, err := client.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK || res.Header.Get("Strict-Transport-Security") != "max-age=31536000" {
			t.Fatalf("GET %s: %d, HSTS %q, want 200 with HSTS", path, res.StatusCode, res.Header.Get("Strict-Transport-Security"))
		}
		chain := res.TLS.VerifiedChains[0]
		if len(chain) < 3 || !slices.Contains(chain[0].DNSNames, domain) {
			t.Fatalf("GET %s: chain %v, want the domain's certificate, Pebble's intermediate and its root", path, chain)
		}
		return chain[0], body
	}

	first, doc := get("/openapi.json")
	issued := time.Since(start)
	var openapi struct{ Servers []struct{ URL string } }
	if err := json.Unmarshal(doc, &openapi); err != nil || len(openapi.Servers) != 1 || openapi.Servers[0].URL != base {
		t.Errorf("OpenAPI servers %+v (%v), want the https base URL on the domain %s", openapi.Servers, err, base)
	}
	if !strings.Contains(pebbleOut.out.String(), fmt.Sprintf("validate w/ HTTP: http://%s:%d/.well-known", domain, httpPort)+"/acme-challenge/") {
		t.Errorf("Pebble did not validate over HTTP-01 on --http-addr")
	}
	for _, name := range []string{domain, "acme_account+key"} {
		if _, err := os.Stat(filepath.Join(cfg.ACMEPath(), name)); err != nil {
			t.Errorf("ACME cache: %v", err)
		}
	}

	// Everything else on --http-addr goes to HTTPS on the domain.
	req, err := http.NewRequest(http.MethodGet, "http://"+r.srv.HTTPAddr()+"/v1/me?x=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = domain
	res, err := servertest.HTTPSClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if want := base + "/me?x=1"; res.StatusCode != http.StatusMovedPermanently || res.Header.Get("Location") != want {
		t.Errorf("GET http://%s/v1/me?x=1: %d to %q, want 301 to %s", domain, res.StatusCode, res.Header.Get("Location"), want)
	}

	// Within RenewBefore of its expiry the certificate is renewed, and the
	// server serves the new one.
	var renewed *x509.Certificate
	waitUntil(t, 30*time.Second, "renewal", func() bool {
		renewed, _ = get("/health")
		return renewed.SerialNumber.Cmp(first.SerialNumber) != 0
	})
	if !renewed.NotAfter.After(first.NotAfter) {
		t.Errorf("renewed certificate expires %v, want after the first's %v", renewed.NotAfter, first.NotAfter)
	}
	if !strings.Contains(stderr.String(), `"msg":"ACME cache: stored","name":"`+domain+`"`) {
		t.Errorf("the server did not log storing the certificate")
	}
	renewedAfter := time.Since(start)

	// The cache serves a restarted server with the CA unreachable.
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	cfg2, _ := testConfig(cfg.DataDir)
	cfg2.TLSDomain, cfg2.HTTPAddr, cfg2.ACMECARoot = domain, "127.0.0.1:0", caPath
	cfg2.ACMEDirectory = fmt.Sprintf("https://127.0.0.1:%d/dir", freePort(t, false))
	r = startServer(t, cfg2)
	apiPort = strconv.Itoa(listenerPort(t, r.srv, "api"))
	base = "https://" + domain + ":" + apiPort + "/v1"
	get("/health")
	t.Logf("issued after %v, renewed after %v, whole test %v", issued.Round(time.Millisecond), renewedAfter.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}
