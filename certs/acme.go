// Package certs owns the certificates HTTPS is served with: obtained and
// renewed over ACME and kept in a cache directory, or loaded from PEM files
// and loaded again when they change.
package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"
)

// ACMEOptions configures NewACME.
type ACMEOptions struct {
	// Domain is the one name certificates are obtained for.
	Domain string
	// Directory is the ACME directory URL; "" is Let's Encrypt's.
	Directory string
	// Roots verify the directory's HTTPS; nil trusts the system's.
	Roots *x509.CertPool
	// CacheDir keeps the account key and the certificates.
	CacheDir string
	// RenewBefore is how long before its expiry a certificate is renewed;
	// 0 lets autocert choose.
	RenewBefore time.Duration
	Log         *slog.Logger
}

// ACME obtains the domain's certificate at the first handshake that names
// it, keeps it in the cache directory, and renews it in the background
// before it expires. The CA's terms of service are accepted, as asking for
// its certificates means to.
type ACME struct {
	manager *autocert.Manager
	cache   *cache
}

// NewACME returns the certificates of the domain over ACME.
func NewACME(o ACMEOptions) *ACME {
	directory := o.Directory
	if directory == "" {
		directory = autocert.DefaultACMEDirectory
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if o.Roots != nil {
		transport.TLSClientConfig = &tls.Config{RootCAs: o.Roots, MinVersion: tls.VersionTLS12}
	}
	c := &cache{dir: autocert.DirCache(o.CacheDir), log: o.Log}
	return &ACME{cache: c, manager: &autocert.Manager{
		Prompt:      autocert.AcceptTOS,
		Cache:       c,
		HostPolicy:  onlyDomain(o.Domain),
		RenewBefore: o.RenewBefore,
		Client:      &acme.Client{DirectoryURL: directory, HTTPClient: &http.Client{Transport: &transportUntilClosed{base: transport, cache: c}}},
	}}
}

// TLSConfig is the configuration of the listener the certificates serve.
func (a *ACME) TLSConfig() *tls.Config {
	config := a.manager.TLSConfig()
	config.MinVersion = tls.VersionTLS12
	return config
}

// HTTPHandler answers ACME's HTTP-01 challenges and passes every other
// request to fallback.
func (a *ACME) HTTPHandler(fallback http.Handler) http.Handler {
	return a.manager.HTTPHandler(fallback)
}

// Close stops the cache and the requests to the CA: autocert's renewal
// timers cannot be stopped, and one that fires after Close must neither
// write into a directory that may belong to another process by then (a
// restore, the next start) nor ask the CA for anything.
func (a *ACME) Close() { a.cache.closed.Store(true) }

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
			return fmt.Errorf("acme/autocert: host %q is not %q", host, domain)
		}
		return nil
	}
}

// errClosed refuses the cache's use after Close.
var errClosed = errors.New("the certificates are closed")

// cache is autocert's cache in the cache directory, which logs what it
// stores and stops at Close. Files are written by autocert.DirCache, mode
// 0600 in a 0700 directory, and not synced: a certificate lost to a power
// cut is obtained again.
type cache struct {
	dir    autocert.DirCache
	log    *slog.Logger
	closed atomic.Bool
}

func (c *cache) Get(ctx context.Context, name string) ([]byte, error) {
	if c.closed.Load() {
		return nil, errClosed
	}
	return c.dir.Get(ctx, name)
}

func (c *cache) Put(ctx context.Context, name string, data []byte) error {
	if c.closed.Load() {
		return errClosed
	}
	if err := c.dir.Put(ctx, name, data); err != nil {
		c.log.Error("ACME cache: could not store", "name", name, "error", err)
		return err
	}
	c.log.Info("ACME cache: stored", "name", name)
	return nil
}

func (c *cache) Delete(ctx context.Context, name string) error {
	if c.closed.Load() {
		return errClosed
	}
	return c.dir.Delete(ctx, name)
}

// transportUntilClosed carries the requests to the CA until Close.
type transportUntilClosed struct {
	base  http.RoundTripper
	cache *cache
}

func (t *transportUntilClosed) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.cache.closed.Load() {
		return nil, errClosed
	}
	return t.base.RoundTrip(req)
}
