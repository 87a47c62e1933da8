package handlers

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/ksuid"

	"acctapi/auth"
)

// securityHeaders go on every answer, which holds tenants' data: no cache
// may keep it, no browser may guess another type for it or frame it. The
// value slices are shared by all answers, which only ever replace them.
var securityHeaders = http.Header{
	"Cache-Control":           {"no-store"},
	"X-Content-Type-Options":  {"nosniff"},
	"Content-Security-Policy": {"default-src 'none'; frame-ancestors 'none'"},
	"X-Frame-Options":         {"DENY"},
}

// ServeHTTP gives each request an id (X-Request-Id), logs it and tells the
// observer when done, and turns a panic into a 500 so that the server goes
// on serving.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if h.observer != nil {
		h.observer.RequestStarted()
	}
	st := &requestState{id: ksuid.New().String()}
	r = r.WithContext(context.WithValue(r.Context(), stateKey{}, st))
	header := w.Header()
	header.Set("X-Request-Id", st.id)
	for name, value := range securityHeaders {
		header[name] = value
	}
	if h.hsts {
		header["Strict-Transport-Security"] = hstsHeader
	}
	rec := &statusRecorder{ResponseWriter: w, state: st}
	if r.ProtoMajor == 1 && r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
		// Until its key is known, a request's body has a few seconds.
		rec.body = &bodyWatch{ReadCloser: r.Body}
		r.Body = rec.body
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(UnkeyedBodyTimeout))
	}

	h.router.ServeHTTP(rec, r)

	status := st.status
	switch {
	case status == 0 && st.canceled:
		status = statusClientClosedRequest
	case status == 0:
		status = http.StatusOK
	}
	route := st.route
	if route == "" {
		route = "unmatched"
	}
	elapsed := time.Since(start)
	if h.observer != nil {
		h.observer.RequestDone(r.Method, route, status, elapsed)
	}
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelError
	}
	h.log.LogAttrs(r.Context(), level, "request",
		slog.String("request_id", st.id),
		slog.String("method", r.Method),
		slog.String("route", route),
		slog.Int("status", status),
		slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
		slog.String("key_id", st.keyID),
		slog.Bool("canceled", st.canceled),
	)
}

// statusClientClosedRequest is logged (never sent) for a request whose caller
// hung up before the answer, as nginx logs it.
const statusClientClosedRequest = 499

// The deadlines of a request's body, from the end of its headers (which
// the server's ReadHeaderTimeout bounds). A request refused before its
// body was read to the end, as every 401, 413 and 429 is, holds its
// connection for its answer and refusedDrain more: see statusRecorder.
const (
	// UnkeyedBodyTimeout bounds the body of a request without a valid key:
	// a collect link's JSON, or a body that comes before its 401. A collect
	// link's upload goes on as long as it keeps the minimum upload rate.
	UnkeyedBodyTimeout = 10 * time.Second
	// KeyedBodyTimeout bounds the body of a request whose key was
	// accepted, as the server's ReadTimeout does; an upload goes on as
	// long as it keeps the minimum upload rate.
	KeyedBodyTimeout = 5 * time.Minute
)

// statusRecorder remembers the status a handler wrote. An error answer
// begun before the request's body was read to its end closes the
// connection without waiting for the rest: net/http would otherwise read
// up to 256 KiB of it first, before the answer, waiting on a client that
// sends a byte every few seconds until the body's deadline.
type statusRecorder struct {
	http.ResponseWriter
	state *requestState
	body  *bodyWatch // nil for a request without a body, or HTTP/2's
}

func (s *statusRecorder) WriteHeader(status int) {
	s.answer(status)
	s.ResponseWriter.WriteHeader(status)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.answer(http.StatusOK)
	return s.ResponseWriter.Write(b)
}

// answer records the status of the answer's first write, and closes the
// connection after a refusal whose body was left unread.
func (s *statusRecorder) answer(status int) {
	if s.state.wroteHeader {
		return
	}
	s.state.status, s.state.wroteHeader = status, true
	if status >= 400 && s.body != nil && !s.body.eof {
		s.Header().Set("Connection", "close")
		// The answer goes out first; then what of the body has already
		// come is read for refusedDrain at most, so that a client that
		// sent it all sees the connection end cleanly rather than reset.
		_ = http.NewResponseController(s.ResponseWriter).SetReadDeadline(time.Now().Add(refusedDrain))
	}
}

// refusedDrain is how long the rest of a refused request's body is read
// after the answer before the connection closes.
const refusedDrain = 250 * time.Millisecond

// bodyWatch tells whether a request's body was read to its end.
type bodyWatch struct {
	io.ReadCloser
	eof bool
}

func (b *bodyWatch) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.eof = true
	}
	return n, err
}

// Unwrap lets http.ResponseController reach the connection.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// failedAuthLimit bounds the requests with a bad key that one address may
// make per minute, so that guessing keys costs the guesser, not the database.
const failedAuthLimit = 600

// authenticate checks the bearer key and counts the request against its rate
// limit, writing the RateLimit-* headers either way.
func (h *Handler) authenticate(w http.ResponseWriter, r *http.Request) (*auth.Principal, error) {
	key, ok := bearerKey(r.Header)
	addr := "addr:" + h.clientHost(r)
	// An address that has spent its failed attempts is refused before its key
	// is looked up, so that a guess costs no database read and takes as long
	// for an id that exists as for one that does not. Only a key the server
	// has found before, sent with its secret, goes on: callers behind the
	// same proxy as a guesser keep working.
	if _, spent := h.limiter.Spent(addr, failedAuthLimit, time.Minute); spent && !(ok && h.auth.Known(key)) {
		// Allow refuses it as Spent did, and counts the refusal.
		return nil, rateLimited(w, h.limiter.Allow(addr, failedAuthLimit, time.Minute))
	}
	var principal *auth.Principal
	var err error = errUnauthorized
	if ok {
		principal, err = h.auth.Authenticate(r.Context(), key)
		if errors.Is(err, auth.ErrUnauthorized) {
			err = errUnauthorized
		}
	}
	var d auth.Decision
	if err == nil {
		d = h.limiter.Allow("key:"+principal.KeyID, principal.RateLimitMax, principal.RateLimitWindow)
	} else {
		d = h.limiter.Allow(addr, failedAuthLimit, time.Minute)
	}
	if limited := rateLimited(w, d); limited != nil {
		return nil, limited
	}
	if err != nil {
		return nil, err
	}
	stateOf(r).keyID = principal.KeyID
	if r.ContentLength != 0 {
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(KeyedBodyTimeout))
	}
	return principal, nil
}

// rateLimited writes the RateLimit-* headers of d, and returns the 429 when
// d refuses the request.
func rateLimited(w http.ResponseWriter, d auth.Decision) error {
	reset := int((d.Reset + time.Second - 1) / time.Second)
	w.Header().Set("RateLimit-Limit", strconv.Itoa(d.Limit))
	w.Header().Set("RateLimit-Remaining", strconv.Itoa(d.Remaining))
	w.Header().Set("RateLimit-Reset", strconv.Itoa(reset))
	if !d.Allowed {
		w.Header().Set("Retry-After", strconv.Itoa(reset))
		return errRateLimited(reset)
	}
	return nil
}

// bearerKey returns the key of the request's one Authorization header. Two
// headers are no key at all: servers and proxies differ in which one they
// use, so a request that sends several is refused as a bad key is (the same
// 401, counted against the address's failed-attempt budget).
func bearerKey(header http.Header) (string, bool) {
	values := header.Values("Authorization")
	if len(values) != 1 {
		return "", false
	}
	return bearer(values[0])
}

// bearer returns the key of an Authorization header of the Bearer scheme,
// whose name is case-insensitive.
func bearer(header string) (string, bool) {
	const prefix = "Bearer "
	if len(header) <= len(prefix) || !asciiEqualFold(header[:len(prefix)], prefix) {
		return "", false
	}
	return header[len(prefix):], true
}

// asciiEqualFold compares ASCII text case-insensitively, without the Unicode
// folding of strings.EqualFold.
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i]|0x20, b[i]|0x20
		if x != y {
			return false
		}
	}
	return true
}

// clientHost is the caller's address without its port, which the limits
// per address count. It is the peer's, unless the peer is one of the
// trusted proxies: then it is the right-most address of X-Forwarded-For
// (or, without that header, of Forwarded) that is not itself a trusted
// proxy, as addresses left of it were written by whoever sent them.
func (h *Handler) clientHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if !h.trustedProxy(host) {
		return host
	}
	hops := forwardedFor(r.Header)
	for i := len(hops) - 1; i >= 0; i-- {
		addr, err := netip.ParseAddr(hops[i])
		if err != nil {
			// A hop that is no address (a proxy's obfuscated name, a
			// forgery) ends what can be believed: the proxy behind it is
			// the caller.
			break
		}
		if !h.trustedProxy(addr.String()) {
			return addr.Unmap().String()
		}
		host = addr.Unmap().String()
	}
	return host
}

// trustedProxy says whether host is an address of the trusted proxies.
func (h *Handler) trustedProxy(host string) bool {
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	addr = addr.Unmap()
	for _, p := range h.trustedProxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// forwardedFor lists the client addresses a request's proxies reported,
// from the first hop to the last: those of every X-Forwarded-For header, or
// when there is none, the for= parameters of every Forwarded header (RFC
// 7239), without ports or brackets.
func forwardedFor(header http.Header) []string {
	var hops []string
	if values := header.Values("X-Forwarded-For"); len(values) > 0 {
		for _, v := range values {
			for hop := range strings.SplitSeq(v, ",") {
				hops = append(hops, hostOf(strings.TrimSpace(hop)))
			}
		}
		return hops
	}
	for _, v := range header.Values("Forwarded") {
		for element := range strings.SplitSeq(v, ",") {
			for pair := range strings.SplitSeq(element, ";") {
				name, value, ok := strings.Cut(strings.TrimSpace(pair), "=")
				if ok && asciiEqualFold(name, "for") {
					hops = append(hops, hostOf(strings.Trim(value, `"`)))
				}
			}
		}
	}
	return hops
}

// hostOf drops the port and the brackets of a forwarded address.
func hostOf(hop string) string {
	if host, _, err := net.SplitHostPort(hop); err == nil {
		return host
	}
	return strings.TrimSuffix(strings.TrimPrefix(hop, "["), "]")
}

// resolveClient checks x-client-id and returns the id of the client it
// names. A client of another firm, or not the client key's own, is not
// found: the same answer as for a client that does not exist.
func (h *Handler) resolveClient(r *http.Request, p *auth.Principal) (string, error) {
	if len(r.Header.Values("x-client-id")) > 1 {
		var v validator
		v.add(severalHeaders("x-client-id", []any{"headers", "x-client-id"}))
		return "", v.err()
	}
	header := r.Header.Get("x-client-id")
	if header == "" {
		return "", errMissingClientID
	}
	var v validator
	id, ok := checkID(&v, []any{"headers", "x-client-id"}, header)
	if !ok {
		return "", v.err()
	}
	if p.Kind == auth.Client && id != p.ClientID {
		return "", errNotFound("client not found")
	}
	if h.clients.known(p.FirmID, id) {
		return id, nil
	}
	if _, err := h.store.FindClient(r.Context(), p.FirmID, id); err != nil {
		return "", err
	}
	h.clients.add(p.FirmID, id)
	return id, nil
}

// clientCache remembers for a second the clients found in their firm, so
// that client-scoped requests do not each read the client's row. The API
// deletes no client; the second bounds how long one removed by hand is
// still reached. Only clients that exist are kept, so it holds no more than
// the firms' clients.
type clientCache struct {
	mu    sync.Mutex
	found map[[2]string]time.Time
}

const clientCacheTTL = time.Second

func (c *clientCache) known(firmID, clientID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.found[[2]string{firmID, clientID}]
	return ok && time.Since(at) < clientCacheTTL
}

func (c *clientCache) add(firmID, clientID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.found == nil {
		c.found = map[[2]string]time.Time{}
	}
	c.found[[2]string{firmID, clientID}] = time.Now()
}
