package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// Healthy asks the server at url, a GET /v1/health, whether its database
// and file store answer, within timeout, and returns its version; or the
// reason it is not healthy.
func Healthy(ctx context.Context, url string, timeout time.Duration) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	res, err := (&http.Client{Timeout: timeout}).Do(req)
	if err != nil {
		return "", fmt.Errorf("no answer from %s: %w", url, err)
	}
	defer res.Body.Close()
	// The health answer, or the error body of a 503 with its reason.
	var body struct{ Status, Version, Message string }
	if err := json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&body); err != nil {
		body.Message = http.StatusText(res.StatusCode)
	}
	if res.StatusCode != http.StatusOK || body.Status != "ok" {
		return "", fmt.Errorf("%s answered %d: %s", url, res.StatusCode, body.Message)
	}
	return body.Version, nil
}

// LocalHealthURL is the health route of a server listening on addr, asked
// from the same machine.
func LocalHealthURL(addr string) (string, error) {
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
