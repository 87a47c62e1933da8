package cmd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"
)

// https says whether serve answers over HTTPS.
func (c *Config) https() bool { return c.TLSDomain != "" || c.TLSCert != "" }

// ACMEPath is where the ACME account key and certificates are kept.
func (c *Config) ACMEPath() string { return filepath.Join(c.DataDir, "acme") }

// checkTLS refuses the combinations of the HTTPS flags that cannot work.
func checkTLS(cfg *Config) error {
	switch {
	case (cfg.TLSCert == "") != (cfg.TLSKey == ""):
		return errors.New("--tls-cert and --tls-key go together")
	case cfg.TLSDomain != "" && cfg.TLSCert != "":
		return errors.New("--tls-domain obtains its own certificate: give it or --tls-cert/--tls-key, not both")
	case cfg.TLSDomain == "" && (cfg.ACMEDirectory != "" || cfg.ACMECARoot != ""):
		return errors.New("--acme-directory and --acme-ca-root need --tls-domain")
	case cfg.TLSDomain != "" && (strings.ContainsAny(cfg.TLSDomain, ":/ ") || !strings.Contains(strings.Trim(cfg.TLSDomain, "."), ".")):
		return fmt.Errorf("--tls-domain must be a domain name such as api.example.com, not %q", cfg.TLSDomain)
	case cfg.HTTPAddr != "" && !cfg.https():
		return errors.New("--http-addr redirects to HTTPS: it needs --tls-domain or --tls-cert")
	}
	return nil
}

// tlsSetup is how serve answers HTTPS: the API listener's TLS configuration
// and the handler of the plain-HTTP listener (ACME's HTTP-01 challenges,
// then a redirect to HTTPS).
type tlsSetup struct {
	config *tls.Config
	// plain wraps the redirect in ACME's challenge answers; nil for given
	// certificate files.
	plain func(redirect http.Handler) http.Handler
	// cache is the ACME cache, closed with the server.
	cache *acmeCache
}

// newTLS prepares HTTPS as cfg asks: certificates obtained over ACME for
// --tls-domain, or the --tls-cert/--tls-key files.
func newTLS(cfg *Config, log *slog.Logger) (*tlsSetup, error) {
	if cfg.TLSDomain != "" {
		return newACME(cfg, log)
	}
	every := cfg.TLSReloadCheck
	if every <= 0 {
		every = 5 * time.Second
	}
	files, err := loadCertFiles(cfg.TLSCert, cfg.TLSKey, every, log)
	if err != nil {
		return nil, err
	}
	return &tlsSetup{config: &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: files.certificate,
		NextProtos:     []string{"h2", "http/1.1"},
	}}, nil
}

// newACME sets up autocert for the domain: the certificate is obtained at
// the first handshake that names the domain, kept in the data dir, and
// renewed in the background before it expires. The CA's terms of service
// are accepted, as --tls-domain asks for its certificates.
func newACME(cfg *Config, log *slog.Logger) (*tlsSetup, error) {
	directory := cfg.ACMEDirectory
	if directory == "" {
		directory = autocert.DefaultACMEDirectory
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.ACMECARoot != "" {
		pem, err := os.ReadFile(cfg.ACMECARoot)
		if err != nil {
			return nil, fmt.Errorf("--acme-ca-root: %w", err)
		}
		roots, err := x509.SystemCertPool()
		if err != nil {
			roots = x509.NewCertPool()
		}
		if !roots.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--acme-ca-root: no PEM certificate in %s", cfg.ACMECARoot)
		}
		transport.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	}
	cache := &acmeCache{dir: autocert.DirCache(cfg.ACMEPath()), log: log}
	client := &acme.Client{DirectoryURL: directory, HTTPClient: &http.Client{Transport: &acmeTransport{base: transport, cache: cache}}}
	m := &autocert.Manager{
		Prompt:      autocert.AcceptTOS,
		Cache:       cache,
		HostPolicy:  onlyDomain(cfg.TLSDomain),
		RenewBefore: cfg.ACMERenewBefore,
		Client:      client,
	}
	config := m.TLSConfig()
	config.MinVersion = tls.VersionTLS12
	return &tlsSetup{config: config, plain: m.HTTPHandler, cache: cache}, nil
}

// onlyDomain lets autocert obtain a certificate for the domain alone, so
// that a handshake naming another host cannot spend the CA's rate limits.
// Unlike autocert.HostWhitelist it ignores a port in the host: an HTTP-01
// request's Host carries one when the CA validates on another port than 80
// (a test CA).
func onlyDomain(domain string) autocert.HostPolicy {
	return func(_ context.Context, host string) error {
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if !strings.EqualFold(host, domain) {
			return fmt.Errorf("acme/autocert: host %q is not --tls-domain", host)
		}
		return nil
	}
}

// errServerClosed refuses the ACME cache's use after Close.
var errServerClosed = errors.New("the server is closed")

// acmeCache is autocert's cache in the data dir, which logs what it
// stores and stops once the server is closed: autocert's renewal timers
// outlive the server (they cannot be stopped), and one that fires after
// Close must not write into a data dir that may belong to another process
// by then (a restore, the next start). Files are written by
// autocert.DirCache, mode 0600 in a 0700 directory, and not synced: a
// certificate lost to a power cut is obtained again.
type acmeCache struct {
	dir    autocert.DirCache
	log    *slog.Logger
	closed atomic.Bool
}

func (c *acmeCache) Get(ctx context.Context, name string) ([]byte, error) {
	if c.closed.Load() {
		return nil, errServerClosed
	}
	return c.dir.Get(ctx, name)
}

func (c *acmeCache) Put(ctx context.Context, name string, data []byte) error {
	if c.closed.Load() {
		return errServerClosed
	}
	if err := c.dir.Put(ctx, name, data); err != nil {
		c.log.Error("ACME cache: could not store", "name", name, "error", err)
		return err
	}
	c.log.Info("ACME cache: stored", "name", name)
	return nil
}

func (c *acmeCache) Delete(ctx context.Context, name string) error {
	if c.closed.Load() {
		return errServerClosed
	}
	return c.dir.Delete(ctx, name)
}

// close stops the cache, and the requests to the CA with it.
func (c *acmeCache) close() { c.closed.Store(true) }

// acmeTransport carries the requests to the CA until the server is closed:
// a renewal timer that fires after Close asks the CA for nothing.
type acmeTransport struct {
	base  http.RoundTripper
	cache *acmeCache
}

func (t *acmeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.cache.closed.Load() {
		return nil, errServerClosed
	}
	return t.base.RoundTrip(req)
}

// certFiles serves the certificate of a pair of PEM files and loads them
// again when they change: a handshake looks at the files' modification
// times and sizes, at most once per check interval (two stats). A pair that
// does not load, such as a new certificate whose key is not written yet,
// leaves the last good one in place until the next look.
type certFiles struct {
	certPath, keyPath string
	every             time.Duration
	log               *slog.Logger

	mu      sync.Mutex
	cert    *tls.Certificate
	stamp   [2]fileStamp // of the files cert was loaded from
	checked time.Time
}

// fileStamp is what tells a file changed.
type fileStamp struct {
	mod  time.Time
	size int64
}

func loadCertFiles(certPath, keyPath string, every time.Duration, log *slog.Logger) (*certFiles, error) {
	c := &certFiles{certPath: certPath, keyPath: keyPath, every: every, log: log}
	stamp, err := c.stamps()
	if err != nil {
		return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
	}
	cert, err := tls.LoadX509KeyPair(certPath, keyPath)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
	}
	c.cert, c.stamp, c.checked = &cert, stamp, time.Now()
	return c, nil
}

// certificate is the tls.Config's GetCertificate.
func (c *certFiles) certificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := time.Now(); now.Sub(c.checked) >= c.every {
		c.checked = now
		c.reload()
	}
	return c.cert, nil
}

// reload loads the files again if they changed since the last load.
func (c *certFiles) reload() {
	stamp, err := c.stamps()
	if err != nil {
		c.log.Warn("TLS certificate files cannot be read; serving the last certificate loaded", "error", err)
		return
	}
	if stamp == c.stamp {
		return
	}
	cert, err := tls.LoadX509KeyPair(c.certPath, c.keyPath)
	if err != nil {
		c.log.Warn("TLS certificate files changed but do not load; serving the last certificate loaded", "error", err)
		return
	}
	c.cert, c.stamp = &cert, stamp
	c.log.Info("TLS certificate loaded again", "cert", c.certPath, "not_after", cert.Leaf.NotAfter)
}

func (c *certFiles) stamps() ([2]fileStamp, error) {
	var stamp [2]fileStamp
	for i, path := range []string{c.certPath, c.keyPath} {
		info, err := os.Stat(path)
		if err != nil {
			return stamp, err
		}
		stamp[i] = fileStamp{info.ModTime(), info.Size()}
	}
	return stamp, nil
}
