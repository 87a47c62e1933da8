package cmd

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"acctapi/server"
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
			cfg.CompilePDFReaderArgs = compilePDFReaderArgs
			srv, err := server.Open(ctx, &cfg.Config)
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
		`name of the firm created on first start, "`+server.DefaultFirmName+`" by default; an existing firm keeps its name: change it with acctapi firm set (env ACCTAPI_FIRM_NAME)`)
	flags.BoolVar(&cfg.Demo, "demo", false, "seed a demo client, workspace and users when the firm has no clients")
	flags.StringVar(&cfg.LogFormat, "log-format", envOr("ACCTAPI_LOG_FORMAT", "json"), "request log format: json or text (env ACCTAPI_LOG_FORMAT)")
	flags.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", 15*time.Second, "how long in-flight requests may take to finish on SIGTERM")
	flags.Int64Var(&cfg.MaxUploadBytes, "max-upload-bytes", envInt("ACCTAPI_MAX_UPLOAD_BYTES", server.DefaultMaxUpload),
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

// addOperationsFlags adds serve's flags of metrics and HTTPS.
func addOperationsFlags(cmd *cobra.Command, cfg *Config) {
	flags := cmd.Flags()
	flags.StringVar(&cfg.MetricsAddr, "metrics-addr", envOr("ACCTAPI_METRICS_ADDR", ""),
		"address of a second listener with Prometheus metrics at /metrics and Go's profiles at /debug/pprof/; off when empty. Keep it private: loopback or an internal network (env ACCTAPI_METRICS_ADDR)")
	flags.StringVar(&cfg.TLSDomain, "tls-domain", envOr("ACCTAPI_TLS_DOMAIN", ""),
		"serve HTTPS for this domain with a certificate obtained and renewed over ACME (Let's Encrypt by default), kept in <data-dir>/acme (env ACCTAPI_TLS_DOMAIN)")
	flags.StringVar(&cfg.HTTPAddr, "http-addr", envOr("ACCTAPI_HTTP_ADDR", ""),
		"plain-HTTP listener answering ACME HTTP-01 challenges and redirecting everything else to HTTPS; default :80 with --tls-domain, none otherwise (env ACCTAPI_HTTP_ADDR)")
	flags.StringVar(&cfg.ACMEDirectory, "acme-directory", envOr("ACCTAPI_ACME_DIRECTORY", ""),
		"ACME directory URL of another CA than Let's Encrypt (env ACCTAPI_ACME_DIRECTORY)")
	flags.StringVar(&cfg.ACMECARoot, "acme-ca-root", envOr("ACCTAPI_ACME_CA_ROOT", ""),
		"PEM file of a root certificate to trust, beside the system's, for the ACME directory's HTTPS: a test or private CA (env ACCTAPI_ACME_CA_ROOT)")
	flags.StringVar(&cfg.TLSCert, "tls-cert", envOr("ACCTAPI_TLS_CERT", ""),
		"PEM file of the certificate chain to serve HTTPS with, loaded again when it changes (env ACCTAPI_TLS_CERT)")
	flags.StringVar(&cfg.TLSKey, "tls-key", envOr("ACCTAPI_TLS_KEY", ""),
		"PEM file of the --tls-cert certificate's private key (env ACCTAPI_TLS_KEY)")
}

// defaultToHTTPS makes :443 the default --addr with --tls-domain: the
// address a certificate for a domain is served on.
func defaultToHTTPS(cmd *cobra.Command, cfg *Config) {
	if cfg.TLSDomain != "" && !cmd.Flags().Changed("addr") && os.Getenv("ACCTAPI_ADDR") == "" {
		cfg.Addr = ":443"
	}
}
