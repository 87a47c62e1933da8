package webhooks

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	// DefaultTimeout bounds one delivery attempt, from dialing to the last
	// byte of the answer read.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxBody is how much of a receiver's answer an attempt keeps.
	DefaultMaxBody = 64 << 10

	userAgent      = "acctapi-webhooks/1"
	maxHeaderBytes = 64 << 10
)

// ClientOptions configures NewClient.
type ClientOptions struct {
	AllowPrivate bool          // skip the address checks (development, tests)
	Timeout      time.Duration // whole attempt; DefaultTimeout when 0
	MaxBody      int64         // bytes of a receiver's answer kept; DefaultMaxBody when 0
	TLSConfig    *tls.Config   // tests pass the httptest server's roots; nil: system roots
}

// Client makes delivery attempts. It is safe for concurrent use and keeps
// connections to receivers open between attempts.
type Client struct {
	http         *http.Client
	allowPrivate bool
	timeout      time.Duration
	maxBody      int64
}

// NewClient returns a Client. Unless opts.AllowPrivate is set, every address
// it connects to must pass IsPublicAddr, checked at dial time.
func NewClient(opts ClientOptions) *Client {
	c := &Client{allowPrivate: opts.AllowPrivate, timeout: opts.Timeout, maxBody: opts.MaxBody}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.maxBody <= 0 {
		c.maxBody = DefaultMaxBody
	}
	dialer := &net.Dialer{Timeout: c.timeout}
	if !opts.AllowPrivate {
		dialer.Control = dialControl
	}
	c.http = &http.Client{
		Transport: &http.Transport{
			// No proxy from the environment: the dial-time check must see the
			// receiver's address, not a proxy's.
			Proxy:                  nil,
			DialContext:            dialer.DialContext,
			TLSClientConfig:        opts.TLSConfig.Clone(),
			TLSHandshakeTimeout:    c.timeout,
			ForceAttemptHTTP2:      true,
			MaxIdleConnsPerHost:    4,
			IdleConnTimeout:        90 * time.Second,
			MaxResponseHeaderBytes: maxHeaderBytes,
		},
		// A 3xx is a failed delivery (Standard Webhooks): the subscriber
		// should change the URL, and a redirect could point anywhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return c
}

// Attempt is the outcome of one delivery attempt.
type Attempt struct {
	StatusCode int // 0 when no answer
	Duration   time.Duration
	Body       []byte // at most MaxBody bytes of the answer
	// Err is "" on a 2xx, else a short reason: "timeout", "connection
	// refused", "address not allowed: 10.0.0.1", "status 500", "redirect not
	// followed (302)", "canceled" (the caller's context ended: the attempt
	// says nothing about the receiver) ...
	Err string
}

// OK reports whether the receiver answered with a 2xx.
func (a Attempt) OK() bool { return a.StatusCode >= 200 && a.StatusCode <= 299 }

// Send POSTs body to url with Content-Type: application/json, User-Agent
// "acctapi-webhooks/1", webhook-id, webhook-timestamp and webhook-signature,
// which holds one "v1,..." entry per secret (during a rotation the caller
// passes the new and the previous secret). It never follows redirects, keeps
// at most MaxBody bytes of the answer, and gives up after Timeout. The URL's
// form is checked as CheckURL does; its addresses are checked when dialing.
// A 2xx status is success even if reading the answer's body fails after it.
func (c *Client) Send(ctx context.Context, url, id string, timestamp int64, body []byte, secrets ...string) Attempt {
	if _, err := parseURL(url, c.allowPrivate); err != nil {
		return Attempt{Err: "url not allowed: " + err.Error()}
	}
	if len(secrets) == 0 {
		return Attempt{Err: "no signing secret"}
	}
	sigs := make([]string, len(secrets))
	for i, s := range secrets {
		sig, err := Sign(s, id, timestamp, body)
		if err != nil {
			return Attempt{Err: "cannot sign: " + err.Error()}
		}
		sigs[i] = sig
	}

	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return Attempt{Err: "url not allowed: url is not a valid URL"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	// Set directly rather than with Header.Set so that the names go out in
	// the lower case Standard Webhooks writes them in.
	req.Header["webhook-id"] = []string{id}
	req.Header["webhook-timestamp"] = []string{strconv.FormatInt(timestamp, 10)}
	req.Header["webhook-signature"] = []string{strings.Join(sigs, " ")}

	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		return Attempt{Duration: time.Since(start), Err: reason(ctx, err)}
	}
	defer resp.Body.Close()
	// Closing the body unread when the answer is longer drops the connection
	// instead of draining an answer of any size.
	got, _ := io.ReadAll(io.LimitReader(resp.Body, c.maxBody))
	a := Attempt{StatusCode: resp.StatusCode, Duration: time.Since(start), Body: got}
	switch {
	case a.OK():
	case resp.StatusCode >= 300 && resp.StatusCode <= 399:
		a.Err = "redirect not followed (" + strconv.Itoa(resp.StatusCode) + ")"
	default:
		a.Err = "status " + strconv.Itoa(resp.StatusCode)
	}
	return a
}

// errCanceled is Attempt.Err when the caller's context ended during the
// attempt.
const errCanceled = "canceled"

// reason turns a transport error into Attempt.Err: short, and free of the
// URL and of Go's wording, since subscribers read it in delivery logs.
func reason(parent context.Context, err error) string {
	var (
		addrErr *addrError
		dnsErr  *net.DNSError
		netErr  net.Error
		cert    *tls.CertificateVerificationError
		record  tls.RecordHeaderError
		alert   tls.AlertError
	)
	switch {
	case errors.As(err, &addrErr):
		return addrErr.Error()
	case parent.Err() != nil:
		return errCanceled
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "timeout"
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return "dns: no such host"
		}
		return "dns: lookup failed"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection reset"
	case errors.As(err, &cert):
		return "tls: certificate not valid for this host"
	case errors.As(err, &record):
		return "tls: not a TLS server"
	case errors.As(err, &alert):
		return "tls: handshake failed"
	}
	return "connection failed"
}
