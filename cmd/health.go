package cmd

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"acctapi/server"
)

// newHealthCmd asks a running server for GET /v1/health: the HEALTHCHECK of
// the distroless image, which has no curl or shell.
func newHealthCmd(cfg *Config) *cobra.Command {
	var url string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "health",
		Short: "Ask the running server whether it is healthy; exit 0 if so, 1 if not",
		Long: `Ask the server listening on --addr (on this machine: an address of all
interfaces is asked on 127.0.0.1) for GET /v1/health over plain HTTP, or
the address --url names. It exits 0 when the server answers that its
database and file store answer, and 1 with the reason otherwise: the
HEALTHCHECK of the Docker image, which has no curl.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if url == "" {
				u, err := server.LocalHealthURL(cfg.Addr)
				if err != nil {
					return err
				}
				url = u
			}
			version, err := server.Healthy(cmd.Context(), url, timeout)
			if err != nil {
				return err
			}
			fmt.Fprintf(cfg.Stdout, "ok: acctapi %s at %s\n", version, url)
			return nil
		},
	}
	flags := cmd.Flags()
	flags.StringVar(&cfg.Addr, "addr", envOr("ACCTAPI_ADDR", "127.0.0.1:8080"), "the address serve listens on (env ACCTAPI_ADDR)")
	flags.StringVar(&url, "url", "", "the health route to ask instead, e.g. https://acct.example.net/v1/health")
	flags.DurationVar(&timeout, "timeout", 5*time.Second, "how long to wait for the answer")
	return cmd
}
