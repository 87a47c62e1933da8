package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"
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
				u, err := localHealthURL(cfg.Addr)
				if err != nil {
					return err
				}
				url = u
			}
			client := &http.Client{Timeout: timeout}
			res, err := client.Get(url)
			if err != nil {
				return fmt.Errorf("no answer from %s: %w", url, err)
			}
			defer res.Body.Close()
			// The health answer, or the error body of a 503 with its reason.
			var body struct{ Status, Version, Message string }
			if err := json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&body); err != nil {
				body.Message = http.StatusText(res.StatusCode)
			}
			if res.StatusCode != http.StatusOK || body.Status != "ok" {
				return fmt.Errorf("%s answered %d: %s", url, res.StatusCode, body.Message)
			}
			fmt.Fprintf(cfg.Stdout, "ok: acctapi %s at %s\n", body.Version, url)
			return nil
		},
	}
	flags := cmd.Flags()
	flags.StringVar(&cfg.Addr, "addr", envOr("ACCTAPI_ADDR", "127.0.0.1:8080"), "the address serve listens on (env ACCTAPI_ADDR)")
	flags.StringVar(&url, "url", "", "the health route to ask instead, e.g. https://acct.example.net/v1/health")
	flags.DurationVar(&timeout, "timeout", 5*time.Second, "how long to wait for the answer")
	return cmd
}

// localHealthURL is the health route of a server listening on addr, asked
// from the same machine.
func localHealthURL(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--addr %q is not host:port: %w", addr, err)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip != nil && ip.To4() == nil {
			host = "::1"
		}
	}
	return "http://" + net.JoinHostPort(host, port) + "/v1/health", nil
}
