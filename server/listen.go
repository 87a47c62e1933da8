package server

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"acctapi/metrics"
)

// sideServer is a listener beside the API's, with the server answering on
// it: the plain-HTTP redirect (and ACME challenges), or the metrics.
type sideServer struct {
	name     string
	listener net.Listener
	http     *http.Server
}

// listen opens the API's listener, over TLS when configured, then the
// plain-HTTP listener that HTTPS asks for and the metrics listener when
// --metrics-addr names one. On an error it closes what it opened.
func (s *Server) listen() (err error) {
	defer func() {
		if err != nil {
			s.closeListeners()
		}
	}()
	cfg := s.cfg
	var setup *tlsSetup
	if cfg.https() {
		if setup, err = newTLS(cfg, s.log); err != nil {
			return err
		}
		s.acme = setup.acme
	}
	tcp, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	s.listener = tcp
	if setup != nil {
		s.listener = tls.NewListener(tcp, setup.config)
		httpAddr := cfg.HTTPAddr
		if httpAddr == "" && cfg.TLSDomain != "" {
			httpAddr = ":80"
		}
		if httpAddr != "" {
			var handler http.Handler = redirectToHTTPS(cfg.TLSDomain, tcp.Addr().(*net.TCPAddr).Port)
			if setup.plain != nil {
				handler = setup.plain(handler)
			}
			if err := s.listenSide("http", httpAddr, handler, 30*time.Second); err != nil {
				return err
			}
		}
	}
	if s.metrics != nil {
		// The write timeout leaves room for a 30 s CPU profile or trace.
		return s.listenSide("metrics", cfg.MetricsAddr, ownHostOnly(cfg.MetricsAddr, metrics.Handler(s.metrics.registry, s.log)), 5*time.Minute)
	}
	return nil
}

// ownHostOnly refuses, with 421 Misdirected Request, a request whose Host
// names the listener by another name than addr's host, localhost or an IP
// address: a web page whose name was rebound to the listener's address
// (DNS rebinding) sends its own name, and must not read the metrics or the
// profiles from a browser inside the network.
func ownHostOnly(addr string, next http.Handler) http.Handler {
	own, _, _ := net.SplitHostPort(addr)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		if _, err := netip.ParseAddr(host); err != nil && !strings.EqualFold(host, "localhost") && (own == "" || !strings.EqualFold(host, own)) {
			http.Error(w, "this listener answers to its own address only", http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// listenSide opens a side listener and its server.
func (s *Server) listenSide(name, addr string, handler http.Handler, writeTimeout time.Duration) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	readHeaderTimeout := s.cfg.ReadHeaderTimeout
	if readHeaderTimeout <= 0 {
		readHeaderTimeout = 10 * time.Second
	}
	s.side = append(s.side, sideServer{name: name, listener: l, http: &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       time.Minute,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}})
	s.log.Info("listening", "what", name, "addr", l.Addr().String())
	return nil
}

// sideAddr returns the address of the named side listener, or "".
func (s *Server) sideAddr(name string) string {
	for _, side := range s.side {
		if side.name == name {
			return side.listener.Addr().String()
		}
	}
	return ""
}

// HTTPAddr returns the address of the plain-HTTP listener that redirects to
// HTTPS, or "" when there is none.
func (s *Server) HTTPAddr() string { return s.sideAddr("http") }

// MetricsAddr returns the address of the metrics listener, or "" when
// there is none.
func (s *Server) MetricsAddr() string { return s.sideAddr("metrics") }

// closeListeners closes every listener, and stops the ACME cache.
func (s *Server) closeListeners() error {
	var err error
	for _, l := range s.listeners() {
		if cerr := l.Close(); cerr != nil && !errors.Is(cerr, net.ErrClosed) {
			err = errors.Join(err, cerr)
		}
	}
	if s.acme != nil {
		s.acme.Close()
	}
	return err
}

// listeners lists the open listeners, the API's first.
func (s *Server) listeners() []net.Listener {
	var ls []net.Listener
	if s.listener != nil {
		ls = append(ls, s.listener)
	}
	for _, side := range s.side {
		ls = append(ls, side.listener)
	}
	return ls
}

// redirectToHTTPS answers every request with a 301 to the same path and
// query over HTTPS on the API's port: on the domain with --tls-domain (the
// only name its certificate holds), else on the host the request named.
func redirectToHTTPS(domain string, port int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := domain
		if host == "" {
			host = r.Host
			if h, _, err := net.SplitHostPort(host); err == nil {
				host = h
			}
			host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
			if !validHost(host) {
				http.Error(w, "a Host header naming this server is required", http.StatusBadRequest)
				return
			}
		}
		hostport := net.JoinHostPort(host, strconv.Itoa(port))
		if port == 443 {
			hostport = strings.TrimSuffix(hostport, ":443")
		}
		http.Redirect(w, r, "https://"+hostport+r.URL.RequestURI(), http.StatusMovedPermanently)
	})
}

// validHost accepts a host name or IP address (without a port) and nothing
// that would change the meaning of a URL built around it.
func validHost(host string) bool {
	if host == "" || len(host) > 253 {
		return false
	}
	for _, c := range []byte(host) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == ':') {
			return false
		}
	}
	return true
}
