package server

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"acctapi/certs"
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
	// acme is closed with the server; nil for given certificate files.
	acme *certs.ACME
}

// newTLS prepares HTTPS as cfg asks: certificates obtained over ACME for
// --tls-domain, or the --tls-cert/--tls-key files.
func newTLS(cfg *Config, log *slog.Logger) (*tlsSetup, error) {
	if cfg.TLSDomain != "" {
		o := certs.ACMEOptions{Domain: cfg.TLSDomain, Directory: cfg.ACMEDirectory, CacheDir: cfg.ACMEPath(),
			RenewBefore: cfg.ACMERenewBefore, Log: log}
		if cfg.ACMECARoot != "" {
			pem, err := os.ReadFile(cfg.ACMECARoot)
			if err != nil {
				return nil, fmt.Errorf("--acme-ca-root: %w", err)
			}
			if o.Roots, err = x509.SystemCertPool(); err != nil {
				o.Roots = x509.NewCertPool()
			}
			if !o.Roots.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("--acme-ca-root: no PEM certificate in %s", cfg.ACMECARoot)
			}
		}
		a := certs.NewACME(o)
		return &tlsSetup{config: a.TLSConfig(), plain: a.HTTPHandler, acme: a}, nil
	}
	every := cfg.TLSReloadCheck
	if every <= 0 {
		every = 5 * time.Second
	}
	files, err := certs.LoadFiles(cfg.TLSCert, cfg.TLSKey, every, log)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
	}
	return &tlsSetup{config: &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: files.GetCertificate,
		NextProtos:     []string{"h2", "http/1.1"},
	}}, nil
}
