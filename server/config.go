package server

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"io"
	"path/filepath"
	"time"

	"acctapi/durable"
)

// Config is everything a server is configured with; cmd fills it from the
// flags and the environment.
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
	// CompilePDFReaderArgs, when set, are the arguments that make this
	// binary compile the PDF reader (CompilePDFReader) into the directory
	// given after them: serve compiles it in such a child, so that the
	// server never holds the compiler's memory. nil compiles in the
	// server's process.
	CompilePDFReaderArgs []string
	// AnalysisWorkers is how many stored files are read with OCR at once;
	// 0 means the number of cores.
	AnalysisWorkers int
	// OCR is auto (the tesseract on PATH, if any; "" too), off, or the
	// path of tesseract; OCRLanguages the languages it reads.
	OCR, OCRLanguages string

	// Stderr gets the log and the messages of a first start.
	Stderr io.Writer
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Dirs syncs the directories the server makes; tests count its calls.
	Dirs durable.Syncer
	// Version and Commit name the build in the log, the API and the
	// metrics.
	Version, Commit string
}

// DatabasePath is where the SQLite file lives in the data dir.
func (c *Config) DatabasePath() string { return filepath.Join(c.DataDir, "acctapi.db") }

// FilesPath is where the file store keeps the bytes of uploads.
func (c *Config) FilesPath() string { return filepath.Join(c.DataDir, "files") }

// CachePath is where serve keeps what it may rebuild: the compiled PDF
// reader. --cache-dir, else the data dir's cache/.
func (c *Config) CachePath() string { return cmp.Or(c.CacheDir, filepath.Join(c.DataDir, "cache")) }

// StorageConfig says where the bytes of uploads are kept.
type StorageConfig struct {
	// Location is "local" (the data dir's files/) or s3://BUCKET[/PREFIX].
	Location string
	// Endpoint, Region and PathStyle say how to reach the bucket
	// (filestore.BucketOptions).
	Endpoint, Region string
	PathStyle        bool
	// AccessKeyID and SecretAccessKey sign the bucket's requests: the
	// standard AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
	AccessKeyID, SecretAccessKey string
	// SweepAfter is how old an object without a row must be before a sweep
	// removes it.
	SweepAfter time.Duration
}

// DefaultSweepAfter leaves alone what a second server on the bucket, such
// as the old one of a rolling restart, may still be writing.
const DefaultSweepAfter = time.Hour
