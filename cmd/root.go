// Package cmd wires acctapi together: flags and environment fill one Config,
// whose fields go into the constructors of db, auth and handlers.
package cmd

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"acctapi/analysis"
	"acctapi/db"
	"acctapi/durable"
	"acctapi/handlers"
	"acctapi/mail"
)

// version and commit are set at build time with -ldflags "-X acctapi/cmd.version=...".
var (
	version = "dev"
	commit  = ""
)

// Config is everything the commands are configured with.
type Config struct {
	Addr            string
	DataDir         string
	BaseURL         string
	Synchronous     string
	FirmName        string
	Demo            bool
	LogFormat       string
	ShutdownTimeout time.Duration
	MaxUploadBytes  int64
	// TrustedProxies are the reverse proxies, as addresses or CIDR
	// prefixes, whose X-Forwarded-For or Forwarded header names the caller
	// that the limits per address count.
	TrustedProxies []string
	// Storage says where the bytes of uploads are kept.
	Storage StorageConfig
	// ReadHeaderTimeout bounds how long a client may take to send a
	// request's headers; 0 means 10 s. Tests shorten it to meet a slow
	// client without waiting.
	ReadHeaderTimeout time.Duration
	// AllowPrivateWebhooks lets webhook subscriptions use http URLs and
	// reach loopback, private, link-local and metadata addresses, which
	// are refused otherwise (when a URL is set and again when delivering):
	// for development and tests only.
	AllowPrivateWebhooks bool
	// WebhookTLS is the TLS configuration of webhook deliveries; nil (the
	// only value serve sets) trusts the system's roots. For tests, which
	// trust their httptest receiver's certificate with it.
	WebhookTLS *tls.Config

	// MetricsAddr is the address of the listener of /metrics and
	// /debug/pprof/; "" serves neither.
	MetricsAddr string
	// TLSDomain is the domain whose certificate serve obtains and renews
	// over ACME, kept in the data dir's acme/; "" for none.
	TLSDomain string
	// HTTPAddr is the plain-HTTP listener that answers ACME's HTTP-01
	// challenges and redirects everything else to HTTPS: "" is :80 with
	// TLSDomain and none otherwise.
	HTTPAddr string
	// ACMEDirectory is the ACME directory URL; "" is Let's Encrypt's.
	ACMEDirectory string
	// ACMECARoot is a PEM file of roots trusted, beside the system's, for
	// the ACME directory's HTTPS: a test or private CA's.
	ACMECARoot string
	// ACMERenewBefore is how long before its expiry a certificate is
	// renewed; 0 lets autocert choose (a third of its life, at most 30
	// days). Tests force a renewal with it.
	ACMERenewBefore time.Duration
	// TLSCert and TLSKey are PEM files of the certificate chain and its key
	// to serve HTTPS with, loaded again when they change.
	TLSCert, TLSKey string
	// TLSReloadCheck is how often, at most, a TLS handshake looks at the
	// modification times of TLSCert and TLSKey; 0 means 5 s. Tests shorten it.
	TLSReloadCheck time.Duration

	// SMTPURL is the relay that sends the mails, and MailFrom their sender
	// address; both "" sends none.
	SMTPURL, MailFrom string
	// SMTPURLFile is a file holding SMTPURL, read at start.
	SMTPURLFile string
	// MailQuota is how many mails a firm may send an hour; 0 is
	// db.DefaultMailQuota.
	MailQuota int
	// SMTPRootCAs verifies the relay's certificate; nil (the only value
	// serve sets) trusts the system's roots.
	SMTPRootCAs *x509.CertPool

	// CacheDir holds what serve may rebuild (the compiled PDF reader); ""
	// is the data dir's cache/.
	CacheDir string
	// AnalysisWorkers is how many stored files are read with OCR at once;
	// 0 means the number of cores.
	AnalysisWorkers int
	// OCR is auto (the tesseract on PATH, if any; "" too), off, or the
	// path of tesseract; OCRLanguages the languages it reads.
	OCR, OCRLanguages string

	Stdout, Stderr io.Writer
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// dirs syncs the directories the commands make; tests count its calls.
	dirs durable.Syncer
}

// DatabasePath is where the SQLite file lives in the data dir.
func (c *Config) DatabasePath() string { return filepath.Join(c.DataDir, "acctapi.db") }

// FilesPath is where the file store keeps the bytes of uploads.
func (c *Config) FilesPath() string { return filepath.Join(c.DataDir, "files") }

// Execute runs the command line and returns the exit code.
func Execute(args []string, stdout, stderr io.Writer) int {
	cfg := &Config{Stdout: stdout, Stderr: stderr, Storage: StorageConfig{
		AccessKeyID: os.Getenv("AWS_ACCESS_KEY_ID"), SecretAccessKey: os.Getenv("AWS_SECRET_ACCESS_KEY"),
	}}
	root := newRootCmd(cfg)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(stderr, "acctapi:", sentence(err))
		return 1
	}
	return 0
}

// sentence is err as a person reads it: a store error's code, which the
// API's answers carry for programs, is left out.
func sentence(err error) string {
	var e *db.Error
	if errors.As(err, &e) {
		return strings.Replace(err.Error(), e.Error(), e.Message, 1)
	}
	return err.Error()
}

func newRootCmd(cfg *Config) *cobra.Command {
	root := &cobra.Command{
		Use:           "acctapi",
		Short:         "acctapi serves the accounting collaboration API on SQLite",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	flags := root.PersistentFlags()
	flags.StringVar(&cfg.DataDir, "data-dir", envOr("ACCTAPI_DATA_DIR", "./data"),
		"directory of the database and the file store (env ACCTAPI_DATA_DIR)")
	flags.StringVar(&cfg.Synchronous, "synchronous", envOr("ACCTAPI_SYNCHRONOUS", "FULL"),
		"SQLite synchronous setting: FULL (commits survive power loss), NORMAL or EXTRA (env ACCTAPI_SYNCHRONOUS)")

	root.AddCommand(newServeCmd(cfg), newMigrateCmd(cfg), newKeysCmd(cfg), newFirmCmd(cfg), newRolesCmd(cfg), newSigningCmd(cfg), newStorageCmd(cfg), newSeedCmd(cfg), newBackupCmd(cfg), newRestoreCmd(cfg), newAnalyzeCmd(cfg), newHealthCmd(cfg), newVersionCmd(cfg))
	return root
}

func envOr(name, fallback string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return fallback
}

// envList splits a comma-separated environment variable; nil when unset.
func envList(name string) []string {
	v := os.Getenv(name)
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

func envBool(name string, fallback bool) bool {
	if v, err := strconv.ParseBool(os.Getenv(name)); err == nil {
		return v
	}
	return fallback
}

func envInt(name string, fallback int64) int64 {
	if v, err := strconv.ParseInt(os.Getenv(name), 10, 64); err == nil {
		return v
	}
	return fallback
}

// openStore opens the database of the data dir, creating the dir if needed.
func openStore(cfg *Config) (*db.DB, error) { return openStoreObserved(cfg, nil) }

// openStoreObserved is openStore with the writer's batches told to observe
// (serve's metrics); nil tells no one.
func openStoreObserved(cfg *Config, observe db.BatchObserver) (*db.DB, error) {
	if err := cfg.dirs.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	return db.Open(cfg.DatabasePath(), db.Options{
		Synchronous: cfg.Synchronous, Now: cfg.Now,
		EncodeEvent: handlers.EncodeEvent, IdempotencyKey: handlers.IdempotencyKeyOf,
		ObserveBatch: observe, MailHost: mail.Domain(cfg.MailFrom), MailQuota: cfg.MailQuota,
		Teacher: analysis.Teach,
	})
}

// openExistingStore opens the database of the data dir, refusing to create
// one: a mistyped --data-dir is an error, not a new empty database. The error
// is os.ErrNotExist (errors.Is) when the database is missing.
func openExistingStore(cfg *Config) (*db.DB, error) {
	if _, err := os.Stat(cfg.DatabasePath()); err != nil {
		if os.IsNotExist(err) {
			return nil, &os.PathError{Op: "open database", Path: cfg.DatabasePath(),
				Err: fmt.Errorf("%w (check --data-dir, or run acctapi serve once to create it)", os.ErrNotExist)}
		}
		return nil, err
	}
	return openStore(cfg)
}

// openCurrentStore opens the existing database and checks that it is at this
// binary's schema, as every command but serve and migrate needs.
func openCurrentStore(cmd *cobra.Command, cfg *Config) (*db.DB, error) {
	store, err := openExistingStore(cfg)
	if err != nil {
		return nil, err
	}
	if err := store.CheckSchema(cmd.Context()); err != nil {
		store.Close()
		return nil, err
	}
	return store, nil
}

// printList prints a listing command's items: as a JSON array of their
// toJSON forms, or as a table of the header and one tab-separated row each.
func printList[T, J any](cfg *Config, asJSON bool, items []T, toJSON func(T) J, header string, row func(T) string) error {
	if asJSON {
		out := make([]J, len(items))
		for i, item := range items {
			out[i] = toJSON(item)
		}
		return json.NewEncoder(cfg.Stdout).Encode(out)
	}
	tw := tabwriter.NewWriter(cfg.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, item := range items {
		fmt.Fprintln(tw, row(item))
	}
	return tw.Flush()
}

func buildCommit() string {
	if commit != "" {
		return commit
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}

func newVersionCmd(cfg *Config) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and schema version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cfg.Stdout, "acctapi %s\ncommit %s\nschema version %d\n", version, buildCommit(), db.LatestVersion())
			return nil
		},
	}
}
