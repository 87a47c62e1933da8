// Package server is the running program: it opens the data dir and the
// stores, listens (over TLS when configured, beside the plain-HTTP
// redirect and the metrics), readies the database on a first start, and
// runs the API with the background workers beside it until it is stopped.
package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"acctapi/auth"
	"acctapi/banking"
	"acctapi/certs"
	"acctapi/db"
	"acctapi/db/seed"
	"acctapi/docread"
	"acctapi/exports"
	"acctapi/filestore"
	"acctapi/handlers"
	"acctapi/mail"
	"acctapi/webhooks"
)

// DefaultFirmName names the firm of a first start without a name.
const DefaultFirmName = "Accounting firm"

// parseTrustedProxies reads --trusted-proxies: each an address (one host)
// or a CIDR prefix.
func parseTrustedProxies(list []string) ([]netip.Prefix, error) {
	var prefixes []netip.Prefix
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if addr, err := netip.ParseAddr(s); err == nil {
			addr = addr.Unmap()
			prefixes = append(prefixes, netip.PrefixFrom(addr, addr.BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("--trusted-proxies: %q is neither an address nor a CIDR prefix", s)
		}
		prefixes = append(prefixes, p.Masked())
	}
	return prefixes, nil
}

// DefaultMaxUpload is the largest upload when none is configured: 100 MiB.
const DefaultMaxUpload = 100 << 20

// Server is the running program: a test starts it on port 0 with a temp data
// dir, calls it, and stops it by cancelling Run's context.
type Server struct {
	cfg      *Config
	store    *db.DB
	files    FileStore
	listener net.Listener
	http     *http.Server
	log      *slog.Logger
	// side are the plain-HTTP and metrics listeners, when configured;
	// metrics is what MetricsAddr measures; acme caches certificates.
	side    []sideServer
	metrics *serveMetrics
	acme    *certs.ACME
	// reader reads the documents of the analysis; Run warms it.
	reader *docread.Reader
	// workers run beside the API while Run runs.
	workers []worker
	// baseURL is the API's address, with its /v1.
	baseURL string
	// FirstKey is the accountant key minted on first start, if this start made one.
	FirstKey string
}

// worker is a loop Run starts beside the API, and stops once the API has
// drained, so that the events of the last requests are in the outboxes:
// attempts still under way are cut off unrecorded, and every job left goes
// out after the next start.
type worker struct {
	name string
	run  func(ctx context.Context) error
}

// checked is what Open reads from the configuration before it listens, so
// that a configuration that cannot work leaves nothing behind.
type checked struct {
	relay     *mail.Relay
	mailFrom  string
	maxUpload int64
	proxies   []netip.Prefix
}

func check(cfg *Config) (c checked, err error) {
	if err := checkTLS(cfg); err != nil {
		return c, err
	}
	if c.relay, c.mailFrom, err = mailRelay(cfg); err != nil {
		return c, err
	}
	if err := checkMailQuota(cfg); err != nil {
		return c, err
	}
	switch c.maxUpload = cfg.MaxUploadBytes; {
	case c.maxUpload == 0:
		c.maxUpload = DefaultMaxUpload
	case c.maxUpload < 0:
		return c, fmt.Errorf("--max-upload-bytes must be positive")
	}
	c.proxies, err = parseTrustedProxies(cfg.TrustedProxies)
	return c, err
}

// Open opens the data dir, listens on cfg.Addr, then bootstraps an empty
// data dir and checks the schema.
func Open(ctx context.Context, cfg *Config) (*Server, error) {
	logger, err := newLogger(cfg)
	if err != nil {
		return nil, err
	}
	c, err := check(cfg)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: logger, metrics: newServeMetrics(cfg)}
	// Listen before anything is written: a start that cannot listen (the
	// address is taken) then leaves no database, no file store and no key
	// behind. Connections that arrive meanwhile wait in the backlog.
	if err := s.listen(); err != nil {
		return nil, err
	}
	if err := s.open(ctx, c); err != nil {
		// The start's error is the one to report; closing what it opened
		// is best effort.
		s.Close()
		return nil, err
	}
	if cfg.AllowPrivateWebhooks {
		logger.Warn("webhooks may use http and reach loopback and private addresses (--allow-private-webhooks): for development and tests only")
	}
	logger.Info("listening", "addr", s.listener.Addr().String(), "base_url", s.baseURL,
		"database", cfg.DatabasePath(), "version", cfg.Version)
	logger.Info("API reference", "url", s.baseURL+"/docs")
	return s, nil
}

// open opens the store and the file store, readies the database, and makes
// the API's handler and the workers.
func (s *Server) open(ctx context.Context, c checked) error {
	store, err := OpenStore(s.cfg, s.metrics.batchObserver())
	if err != nil {
		return err
	}
	s.store = store
	if s.files, err = OpenFiles(ctx, s.cfg.Storage, s.cfg.FilesPath(), c.maxUpload, s.cfg.Now); err != nil {
		return err
	}
	s.baseURL = s.cfg.BaseURL
	if s.baseURL == "" {
		s.baseURL = defaultBaseURL(s.listener.Addr().(*net.TCPAddr), s.cfg.https(), s.cfg.TLSDomain)
	}
	if err := s.bootstrap(ctx); err != nil {
		return err
	}
	if err := s.newHTTP(c); err != nil {
		return err
	}
	return s.newWorkers(ctx, c)
}

// newHTTP makes the API's handler and its HTTP server.
func (s *Server) newHTTP(c checked) error {
	cfg := s.cfg
	limiter := auth.NewLimiter(cfg.Now)
	if s.metrics != nil {
		local, _ := s.files.(*filestore.Store)
		s.metrics.watchStore(cfg, s.store, local, limiter)
	}
	h, err := handlers.New(handlers.Config{
		Store: s.store, Auth: auth.NewAuthenticator(s.store, cfg.Now), Limiter: limiter, Logger: s.log,
		BaseURL: s.baseURL, Version: cfg.Version, Files: s.files, Signer: auth.NewSigner(s.store, cfg.Now),

		MaxUploadBytes:       c.maxUpload,
		AllowPrivateWebhooks: cfg.AllowPrivateWebhooks,
		HTTPS:                cfg.https(),
		Observer:             s.metrics.requestObserver(),
		Now:                  cfg.Now,
		Mail:                 c.relay != nil,
		TrustedProxies:       c.proxies,
	})
	if err != nil {
		return err
	}
	s.http = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: cmp.Or(max(cfg.ReadHeaderTimeout, 0), 10*time.Second),
		ReadTimeout:       5 * time.Minute,
		WriteTimeout:      5 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10, // past it net/http answers 431 itself, in plain text: docs/security.md, section 4
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	return nil
}

// newWorkers makes the loops Run starts beside the API, each on the
// store's clock, as they require: a new background job is a line of the
// list.
func (s *Server) newWorkers(ctx context.Context, c checked) error {
	cfg := s.cfg
	dispatcher := webhooks.NewDispatcher(webhooks.DispatcherOptions{Store: s.store, Now: cfg.Now, Logger: s.log,
		Client: webhooks.NewClient(webhooks.ClientOptions{AllowPrivate: cfg.AllowPrivateWebhooks, TLSConfig: cfg.WebhookTLS})})
	s.workers = []worker{{"webhooks", dispatcher.Run}}
	if c.relay != nil {
		sender := mail.NewSender(mail.Options{Store: s.store, Relay: c.relay, From: c.mailFrom, Now: cfg.Now, Logger: s.log})
		s.workers = append(s.workers, worker{"mail", sender.Run})
		s.log.Info("mail is sent", "relay", c.relay.Addr(), "from", c.mailFrom)
	} else {
		s.log.Info("mail is off: no --smtp-url; collect links and invitations are not mailed")
	}
	reading, err := openAnalysis(ctx, cfg, s)
	if err != nil {
		return err
	}
	bankWorker := banking.New(banking.Options{Store: s.store, Now: cfg.Now, Logger: s.log})
	exporting := exports.New(exports.Options{Store: s.store, Files: s.files, Now: cfg.Now, Logger: s.log})
	s.workers = append(s.workers,
		// A reading cut off by the stop is given back, to be done after
		// the next start.
		worker{"analysis", reading.Run},
		// The PDF engine compiles (seconds on a first start) while the
		// server already answers; a PDF read meanwhile waits for it.
		worker{"pdf reader", s.warmReader},
		worker{"banking", bankWorker.Run},
		// An export cut off by the stop is queued again, written after
		// the next start.
		worker{"exports", exporting.Run},
	)
	if bucket, ok := s.files.(*filestore.Bucket); ok {
		s.workers = append(s.workers, worker{"bucket sweep", func(ctx context.Context) error {
			bucket.SweepEvery(ctx, cfg.Storage.SweepAfter, s.knownFiles(ctx), s.log)
			return nil
		}})
	}
	return nil
}

// bootstrap readies the database: an empty one is migrated to the newest
// schema; a firm is created, with its first key, when there is none; any
// other schema than this binary's is refused.
func (s *Server) bootstrap(ctx context.Context) error {
	state, err := s.store.Schema(ctx)
	if err != nil {
		return err
	}
	if state.Empty {
		if err := s.store.MigrateUp(); err != nil {
			return err
		}
	}
	if err := s.store.CheckSchema(ctx); err != nil {
		return err
	}
	firm, err := s.store.DeploymentFirm(ctx)
	switch {
	case db.ErrorCode(err) == db.ENOTFOUND:
		firm, err = s.createFirm(ctx)
	case err == nil && s.cfg.FirmName != "" && s.cfg.FirmName != firm.Name:
		// The name may have been changed since over the API: a flag or an
		// environment variable left in place would undo that at every start.
		s.log.Warn("--firm-name names the firm on the first start only: the firm keeps its name; change it with acctapi firm set --name or PATCH /v1/firm",
			"firm", firm.Name, "firm_name_flag", s.cfg.FirmName)
	}
	if err != nil {
		return err
	}
	if err := s.store.InitLinkSigningSecret(ctx, auth.NewSecret()); err != nil {
		return err
	}
	// A crash between writing an upload's bytes and recording it leaves bytes
	// nobody can see: they go now.
	if err := filestore.Sweep(s.files, s.knownFiles(ctx), s.log); err != nil {
		return err
	}
	if s.cfg.Demo {
		return s.seedDemo(ctx, firm.ID)
	}
	return nil
}

// knownFiles asks the store which of the ids a file's row records, for the
// sweeps of the file store.
func (s *Server) knownFiles(ctx context.Context) filestore.Known {
	return func(ids []string) (map[string]bool, error) { return s.store.KnownFileIDs(ctx, ids) }
}

func (s *Server) createFirm(ctx context.Context) (*db.Firm, error) {
	firm, key, stored, err := auth.FirstFirm(ctx, s.store, cmp.Or(s.cfg.FirmName, DefaultFirmName))
	if err != nil {
		return nil, err
	}
	s.FirstKey = key
	fmt.Fprintf(s.cfg.Stderr, `
acctapi: created the firm %q (%s) in %s.
Its first accountant key (id %s) holds every permission. It is shown
this once and stored only as a hash: keep it now.

    %s

`, firm.Name, firm.ID, s.cfg.DatabasePath(), stored.ID, key)
	return firm, nil
}

func (s *Server) seedDemo(ctx context.Context, firmID string) error {
	clock := time.Now
	if s.cfg.Now != nil {
		clock = s.cfg.Now
	}
	demo, err := seed.Demo(ctx, s.store, s.files, firmID, clock())
	if err != nil || demo == nil {
		return err
	}
	demo.Print(s.cfg.Stderr, collectPageURL(s.baseURL, demo.CollectToken))
	return nil
}

// collectPageURL is the address of a collect session's upload page: on the
// public address, the base URL without its /v1.
func collectPageURL(baseURL, token string) string {
	return strings.TrimSuffix(baseURL, "/v1") + "/collect/" + token
}

// Addr returns the address the server listens on.
func (s *Server) Addr() string { return s.listener.Addr().String() }

// Run serves until ctx is done, then stops accepting connections and lets
// in-flight requests finish within the shutdown timeout. The workers run
// beside the API and stop after it has drained.
func (s *Server) Run(ctx context.Context) error {
	workCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	stopped := make(chan error, len(s.workers))
	for _, w := range s.workers {
		go func() {
			if err := w.run(workCtx); err != nil {
				stopped <- fmt.Errorf("%s: %w", w.name, err)
				return
			}
			stopped <- nil
		}()
	}
	err := s.serve(ctx)
	stop()
	for range s.workers {
		err = errors.Join(err, <-stopped)
	}
	return err
}

// warmReader compiles the PDF engine and says how long it took; an engine
// that does not start leaves the PDFs unread and is logged, unless the
// server stopped meanwhile.
func (s *Server) warmReader(ctx context.Context) error {
	start := time.Now()
	if err := s.reader.Warm(); err != nil && ctx.Err() == nil {
		s.log.Error("the PDF reader does not start: PDFs are not read", "error", err)
		return nil
	}
	if ctx.Err() == nil {
		s.log.Info("the PDF reader is ready", "took", time.Since(start).Round(time.Millisecond).String())
	}
	return nil
}

// serve runs the HTTP servers (the API's, and the plain-HTTP and metrics
// ones when configured) until ctx is done, or one of them fails, and they
// have all shut down.
func (s *Server) serve(ctx context.Context) error {
	servers := append([]sideServer{{name: "api", listener: s.listener, http: s.http}}, s.side...)
	served := make(chan error, len(servers))
	for _, srv := range servers {
		go func() { served <- srv.http.Serve(srv.listener) }()
	}
	running := len(servers)
	var err error
	select {
	case err = <-served:
		running--
	case <-ctx.Done():
	}
	s.log.Info("shutting down", "timeout", s.cfg.ShutdownTimeout.String())
	timeout := s.cfg.ShutdownTimeout
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	stopped := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, srv := range servers {
		wg.Go(func() {
			if err := srv.http.Shutdown(shutdownCtx); err != nil {
				// Requests still running past the timeout are cut off, so
				// that Close does not close the database under them.
				stopped[i] = errors.Join(err, srv.http.Close())
			}
		})
	}
	wg.Wait()
	err = errors.Join(append(stopped, err)...)
	for ; running > 0; running-- {
		if serveErr := <-served; !errors.Is(serveErr, http.ErrServerClosed) {
			err = errors.Join(err, serveErr)
		}
	}
	return err
}

// Close releases the listeners and the document reader, and closes the
// database cleanly.
func (s *Server) Close() error {
	var reader error
	if s.reader != nil {
		reader = s.reader.Close()
	}
	var store error
	if s.store != nil {
		store = s.store.Close()
	}
	return errors.Join(s.closeListeners(), reader, store)
}

// defaultBaseURL is the base URL of a server listening on addr: on the
// domain with ACME, and with the https scheme (and no :443) with HTTPS.
func defaultBaseURL(addr *net.TCPAddr, https bool, domain string) string {
	scheme, host := "http", addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "localhost"
	}
	if domain != "" {
		host = domain
	}
	hostport := net.JoinHostPort(host, fmt.Sprint(addr.Port))
	if https {
		scheme, hostport = "https", strings.TrimSuffix(hostport, ":443")
	}
	return scheme + "://" + hostport + "/v1"
}

func newLogger(cfg *Config) (*slog.Logger, error) {
	switch cfg.LogFormat {
	case "json", "":
		return slog.New(slog.NewJSONHandler(cfg.Stderr, nil)), nil
	case "text":
		return slog.New(slog.NewTextHandler(cfg.Stderr, nil)), nil
	}
	return nil, fmt.Errorf("--log-format must be json or text, not %q", cfg.LogFormat)
}
