package cmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"acctapi/analysis"
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

func newServeCmd(cfg *Config) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the API",
		Long: `Serve the API. On an empty data dir it creates the database, the firm and
one accountant key, printed once to stderr. It refuses a database whose schema
differs from this binary's: run acctapi migrate first.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			// After the first signal, a second one stops the process at once.
			context.AfterFunc(ctx, stop)
			defaultToHTTPS(cmd, cfg)
			srv, err := OpenServer(ctx, cfg)
			if err != nil {
				return err
			}
			return errors.Join(srv.Run(ctx), srv.Close())
		},
	}
	flags := cmd.Flags()
	flags.StringVar(&cfg.Addr, "addr", envOr("ACCTAPI_ADDR", "127.0.0.1:8080"), "address to listen on; :443 by default with --tls-domain (env ACCTAPI_ADDR)")
	flags.StringVar(&cfg.BaseURL, "base-url", envOr("ACCTAPI_BASE_URL", ""),
		"public address including /v1, used in download links and the OpenAPI document; default derived from --addr (env ACCTAPI_BASE_URL)")
	flags.StringVar(&cfg.FirmName, "firm-name", envOr("ACCTAPI_FIRM_NAME", ""),
		`name of the firm created on first start, "`+defaultFirmName+`" by default; an existing firm keeps its name: change it with acctapi firm set (env ACCTAPI_FIRM_NAME)`)
	flags.BoolVar(&cfg.Demo, "demo", false, "seed a demo client, workspace and users when the firm has no clients")
	flags.StringVar(&cfg.LogFormat, "log-format", envOr("ACCTAPI_LOG_FORMAT", "json"), "request log format: json or text (env ACCTAPI_LOG_FORMAT)")
	flags.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", 15*time.Second, "how long in-flight requests may take to finish on SIGTERM")
	flags.Int64Var(&cfg.MaxUploadBytes, "max-upload-bytes", envInt("ACCTAPI_MAX_UPLOAD_BYTES", defaultMaxUpload),
		"largest file an upload may hold, in bytes (env ACCTAPI_MAX_UPLOAD_BYTES)")
	flags.BoolVar(&cfg.AllowPrivateWebhooks, "allow-private-webhooks", envBool("ACCTAPI_ALLOW_PRIVATE_WEBHOOKS", false),
		"for development and tests only: let webhook URLs use http and reach loopback and private addresses (env ACCTAPI_ALLOW_PRIVATE_WEBHOOKS)")
	flags.StringSliceVar(&cfg.TrustedProxies, "trusted-proxies", envList("ACCTAPI_TRUSTED_PROXIES"),
		"reverse proxies (addresses or CIDR prefixes, comma-separated) whose X-Forwarded-For or Forwarded header names the caller; "+
			"no other peer's is believed (env ACCTAPI_TRUSTED_PROXIES)")
	addOperationsFlags(cmd, cfg)
	addStorageFlags(cmd, &cfg.Storage)
	addSweepFlag(cmd, &cfg.Storage)
	addMailFlags(cmd, cfg)
	addAnalysisFlags(cmd, cfg)
	return cmd
}

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

// defaultMaxUpload is the largest upload when none is configured: 100 MiB.
const defaultMaxUpload = 100 << 20

// Server is the running program: a test starts it on port 0 with a temp data
// dir, calls it, and stops it by cancelling Run's context.
type Server struct {
	cfg      *Config
	store    *db.DB
	files    fileStore
	listener net.Listener
	http     *http.Server
	log      *slog.Logger
	// side are the plain-HTTP and metrics listeners, when configured;
	// metrics is what --metrics-addr measures; acme caches certificates.
	side    []sideServer
	metrics *serveMetrics
	acme    *certs.ACME
	// dispatcher delivers the webhook outbox while Run runs.
	dispatcher *webhooks.Dispatcher
	// sender sends the mail outbox while Run runs; nil when mail is off.
	sender *mail.Sender
	// analysis reads the stored files while Run runs, with reader.
	analysis *analysis.Worker
	reader   *docread.Reader
	// matching imports stored statements and matches bank transactions
	// while Run runs.
	matching *banking.Worker
	// exports writes the queued DATEV exports while Run runs.
	exports *exports.Worker
	// baseURL is the API's address, with its /v1.
	baseURL string
	// FirstKey is the accountant key minted on first start, if this start made one.
	FirstKey string
}

// OpenServer opens the data dir, listens on cfg.Addr, then bootstraps an
// empty data dir and checks the schema.
func OpenServer(ctx context.Context, cfg *Config) (*Server, error) {
	logger, err := newLogger(cfg)
	if err != nil {
		return nil, err
	}
	if err := checkTLS(cfg); err != nil {
		return nil, err
	}
	relay, mailFrom, err := mailRelay(cfg)
	if err != nil {
		return nil, err
	}
	if err := checkMailQuota(cfg); err != nil {
		return nil, err
	}
	maxUpload := cfg.MaxUploadBytes
	switch {
	case maxUpload == 0:
		maxUpload = defaultMaxUpload
	case maxUpload < 0:
		return nil, fmt.Errorf("--max-upload-bytes must be positive")
	}
	proxies, err := parseTrustedProxies(cfg.TrustedProxies)
	if err != nil {
		return nil, err
	}
	measured := newServeMetrics(cfg)
	s := &Server{cfg: cfg, log: logger, metrics: measured}
	// Listen before anything is written: a start that cannot listen (the
	// address is taken) then leaves no database, no file store and no key
	// behind. Connections that arrive meanwhile wait in the backlog.
	if err := s.listen(); err != nil {
		return nil, err
	}
	store, err := openStoreObserved(cfg, measured.batchObserver())
	if err != nil {
		s.closeListeners()
		return nil, err
	}
	s.store = store
	files, err := openFiles(ctx, cfg.Storage, cfg.FilesPath(), maxUpload, cfg.Now)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.files = files
	baseURL := cfg.BaseURL
	if baseURL == "" {
		baseURL = defaultBaseURL(s.listener.Addr().(*net.TCPAddr), cfg.https(), cfg.TLSDomain)
	}
	s.baseURL = baseURL
	if err := s.bootstrap(ctx); err != nil {
		s.Close()
		return nil, err
	}
	limiter := auth.NewLimiter(cfg.Now)
	if measured != nil {
		local, _ := files.(*filestore.Store)
		measured.watchStore(cfg, store, local, limiter)
	}
	h, err := handlers.New(handlers.Config{
		Store:   store,
		Auth:    auth.NewAuthenticator(store, cfg.Now),
		Limiter: limiter,
		Logger:  logger,
		BaseURL: baseURL,
		Version: version,
		Files:   files,
		Signer:  auth.NewSigner(store, cfg.Now),

		MaxUploadBytes:       maxUpload,
		AllowPrivateWebhooks: cfg.AllowPrivateWebhooks,
		HTTPS:                cfg.https(),
		Observer:             measured.requestObserver(),
		Now:                  cfg.Now,
		Mail:                 relay != nil,
		TrustedProxies:       proxies,
	})
	if err != nil {
		s.Close()
		return nil, err
	}
	readHeaderTimeout := cfg.ReadHeaderTimeout
	if readHeaderTimeout <= 0 {
		readHeaderTimeout = 10 * time.Second
	}
	s.http = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       5 * time.Minute,
		WriteTimeout:      5 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10, // past it net/http answers 431 itself, in plain text: docs/security.md, section 4
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	s.dispatcher = webhooks.NewDispatcher(webhooks.DispatcherOptions{
		Store:  store,
		Client: webhooks.NewClient(webhooks.ClientOptions{AllowPrivate: cfg.AllowPrivateWebhooks, TLSConfig: cfg.WebhookTLS}),
		Now:    cfg.Now, // the store's clock, as the dispatcher requires
		Logger: logger,
	})
	if relay != nil {
		s.sender = mail.NewSender(mail.Options{Store: store, Relay: relay, From: mailFrom,
			Now:    cfg.Now, // the store's clock, as the sender requires
			Logger: logger})
		logger.Info("mail is sent", "relay", relay.Addr(), "from", mailFrom)
	} else {
		logger.Info("mail is off: no --smtp-url; collect links and invitations are not mailed")
	}
	if s.analysis, s.reader, err = openAnalysis(ctx, cfg, s); err != nil {
		s.Close()
		return nil, err
	}
	s.matching = banking.New(banking.Options{Store: store, Files: s.files,
		Now:    cfg.Now, // the store's clock, as the worker requires
		Logger: logger})
	s.exports = exports.New(exports.Options{Store: store, Files: s.files,
		Now:    cfg.Now, // the store's clock, as the worker requires
		Logger: logger})
	if cfg.AllowPrivateWebhooks {
		logger.Warn("webhooks may use http and reach loopback and private addresses (--allow-private-webhooks): for development and tests only")
	}
	logger.Info("listening", "addr", s.listener.Addr().String(), "base_url", baseURL,
		"database", cfg.DatabasePath(), "version", version)
	logger.Info("API reference", "url", baseURL+"/docs")
	return s, nil
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
	firm, key, stored, err := auth.FirstFirm(ctx, s.store, cmp.Or(s.cfg.FirmName, defaultFirmName))
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
// in-flight requests finish within the shutdown timeout. The webhook
// dispatcher runs beside the server and stops after it has drained, so that
// the events of the last requests are in the outbox: attempts still under
// way are cut off unrecorded, and every pending delivery goes out after the
// next start.
func (s *Server) Run(ctx context.Context) error {
	dispatchCtx, stopDispatch := context.WithCancel(context.WithoutCancel(ctx))
	defer stopDispatch()
	dispatched := make(chan error, 1)
	go func() { dispatched <- s.dispatcher.Run(dispatchCtx) }()
	mailed := make(chan error, 1)
	if s.sender != nil {
		go func() { mailed <- s.sender.Run(dispatchCtx) }()
	} else {
		mailed <- nil
	}
	var sweeping sync.WaitGroup
	if bucket, ok := s.files.(*filestore.Bucket); ok {
		sweeping.Go(func() { bucket.SweepEvery(dispatchCtx, s.cfg.Storage.SweepAfter, s.knownFiles(dispatchCtx), s.log) })
	}
	// The reading of files stops with the server: a reading cut off is
	// given back, to be done after the next start.
	reading := make(chan error, 1)
	go func() { reading <- s.analysis.Run(dispatchCtx) }()
	// The PDF engine compiles (seconds on a first start) while the server
	// already answers; a PDF read meanwhile waits for it.
	go s.warmReader(dispatchCtx)
	matching := make(chan error, 1)
	go func() { matching <- s.matching.Run(dispatchCtx) }()
	// An export cut off by the stop is queued again, written after the
	// next start.
	exporting := make(chan error, 1)
	go func() { exporting <- s.exports.Run(dispatchCtx) }()
	err := s.serve(ctx)
	stopDispatch()
	sweeping.Wait()
	err = errors.Join(err, <-reading, <-matching, <-exporting)
	return errors.Join(err, <-dispatched, <-mailed)
}

// warmReader compiles the PDF engine and says how long it took; an engine
// that does not start leaves the PDFs unread and is logged, unless the
// server stopped meanwhile.
func (s *Server) warmReader(ctx context.Context) {
	start := time.Now()
	if err := s.reader.Warm(); err != nil && ctx.Err() == nil {
		s.log.Error("the PDF reader does not start: PDFs are not read", "error", err)
		return
	}
	if ctx.Err() != nil {
		return
	}
	s.log.Info("the PDF reader is ready", "took", time.Since(start).Round(time.Millisecond).String())
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
	return errors.Join(s.closeListeners(), reader, s.store.Close())
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
