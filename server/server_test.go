package server

import (
	"acctapi/server/servertest"

	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// testConfig is the Config of an in-process server on a free port of the
// loopback interface, with its log captured.
func testConfig(dir string) (cfg *Config, stderr *servertest.SyncBuffer) {
	stderr = &servertest.SyncBuffer{}
	return &Config{
		Addr:            "127.0.0.1:0",
		DataDir:         dir,
		Synchronous:     "FULL",
		FirmName:        "Test firm",
		LogFormat:       "json",
		ShutdownTimeout: 5 * time.Second,
		CacheDir:        servertest.CacheDir,
		Stderr:          stderr,
		Version:         "test",
	}, stderr
}

// running is a server started with Run in a goroutine.
type running struct {
	*servertest.Running
	srv  *Server
	base string // http://<addr>/v1
}

// openServer calls Open and fails the test on error.
func openServer(t *testing.T, cfg *Config) *Server {
	t.Helper()
	srv, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return srv
}

// startServer opens and runs a server; the test's cleanup stops it if the
// test did not.
func startServer(t *testing.T, cfg *Config) *running {
	t.Helper()
	return runServer(t, openServer(t, cfg))
}

func runServer(t *testing.T, srv *Server) *running {
	t.Helper()
	return &running{Running: servertest.Start(t, srv.Run, srv.Close), srv: srv, base: "http://" + srv.Addr() + "/v1"}
}

// stop stops the server; see servertest.Running.Stop.
func (r *running) stop() error { return r.Stop() }

// holdingServer opens a server whose handler holds requests that carry the
// X-Test-Hold header until release is called, and reports on entered when
// such a request reached the handler and on shuttingDown when Shutdown began
// (after the listener closed).
func holdingServer(t *testing.T, cfg *Config) (srv *Server, entered <-chan struct{}, release func(), shuttingDown <-chan struct{}) {
	t.Helper()
	srv = openServer(t, cfg)
	in, rel, down := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var once, releaseOnce sync.Once
	release = func() { releaseOnce.Do(func() { close(rel) }) }
	t.Cleanup(release) // never leave a handler held when the test fails
	inner := srv.http.Handler
	srv.http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Test-Hold") != "" {
			once.Do(func() { close(in) })
			<-rel
		}
		inner.ServeHTTP(w, r)
	})
	srv.http.RegisterOnShutdown(func() { close(down) })
	return srv, in, release, down
}

type result struct {
	status int
	header http.Header
	body   []byte
	err    error
}

// heldRequest sends GET /v1/health with X-Test-Hold in a goroutine.
func heldRequest(base string) <-chan result {
	done := make(chan result, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, base+"/health", nil)
		req.Header.Set("X-Test-Hold", "1")
		client := servertest.Client()
		client.Timeout = 30 * time.Second
		defer client.CloseIdleConnections()
		resp, err := client.Do(req)
		if err != nil {
			done <- result{err: err}
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		done <- result{status: resp.StatusCode, header: resp.Header, body: body, err: err}
	}()
	return done
}

func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func TestServerGracefulShutdown(t *testing.T) {
	t.Run("in-flight request finishes", func(t *testing.T) {
		cfg, stderr := testConfig(t.TempDir())
		srv, entered, release, shuttingDown := holdingServer(t, cfg)
		r := runServer(t, srv)

		res := heldRequest(r.base)
		waitFor(t, entered, "the request to reach the handler")
		r.Cancel()
		waitFor(t, shuttingDown, "Shutdown to begin")

		// Shutdown has closed the listener and waits for the request.
		select {
		case err := <-r.Done:
			t.Fatalf("Run returned %v while a request was in flight", err)
		default:
		}
		if conn, err := net.DialTimeout("tcp", srv.Addr(), 2*time.Second); err == nil {
			conn.Close()
			t.Error("the server still accepts connections after shutdown began")
		}

		release()
		var got result
		select {
		case got = <-res:
		case <-time.After(10 * time.Second):
			t.Fatal("the in-flight request did not finish")
		}
		if got.err != nil || got.status != http.StatusOK || !bytes.Contains(got.body, []byte(`"status":"ok"`)) {
			t.Fatalf("in-flight request: err %v, status %d, body %s", got.err, got.status, got.body)
		}
		if got.header.Get("X-Request-Id") == "" {
			t.Error("in-flight response lacks X-Request-Id")
		}
		if err := r.stop(); err != nil {
			t.Fatalf("Run/Close after a graceful shutdown: %v", err)
		}
		if !strings.Contains(stderr.String(), `"msg":"shutting down"`) {
			t.Errorf("no shutting down log line:\n%s", stderr.String())
		}
	})

	t.Run("shutdown timeout bounds the wait", func(t *testing.T) {
		cfg, _ := testConfig(t.TempDir())
		cfg.ShutdownTimeout = 300 * time.Millisecond
		srv, entered, release, _ := holdingServer(t, cfg)
		r := runServer(t, srv)
		res := heldRequest(r.base)
		waitFor(t, entered, "the request to reach the handler")

		start := time.Now()
		r.Cancel()
		var runErr error
		select {
		case runErr = <-r.Done:
		case <-time.After(10 * time.Second):
			release()
			t.Fatal("Run did not return after the shutdown timeout")
		}
		if elapsed := time.Since(start); elapsed < cfg.ShutdownTimeout {
			t.Errorf("Run returned after %v, before the shutdown timeout %v with a request in flight", elapsed, cfg.ShutdownTimeout)
		}
		if !errors.Is(runErr, context.DeadlineExceeded) {
			t.Errorf("Run = %v, want the shutdown deadline exceeded", runErr)
		}
		r.Done <- runErr // for stop
		release()
		select {
		case <-res:
		case <-time.After(10 * time.Second):
			t.Error("the held request never finished")
		}
		if err := r.stop(); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("stop = %v", err)
		}
	})

	t.Run("sequential requests", func(t *testing.T) {
		cfg, _ := testConfig(t.TempDir())
		r := startServer(t, cfg)

		type outcome struct {
			ok   int
			errs []error
			bad  []string
		}
		stopClient := make(chan struct{})
		warm := make(chan struct{})
		done := make(chan outcome, 1)
		go func() {
			var o outcome
			client := servertest.Client()
			defer client.CloseIdleConnections()
			defer func() { done <- o }()
			for {
				select {
				case <-stopClient:
					return
				default:
				}
				resp, err := client.Get(r.base + "/health")
				if err != nil {
					o.errs = append(o.errs, err)
					return // the server is gone: every further request fails to connect
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"status":"ok"`)) {
					o.bad = append(o.bad, fmt.Sprintf("status %d, body %q, read error %v", resp.StatusCode, body, err))
					continue
				}
				if o.ok++; o.ok == 20 {
					close(warm)
				}
			}
		}()
		waitFor(t, warm, "20 successful requests")
		r.Cancel()
		select {
		case err := <-r.Done:
			if err != nil {
				t.Errorf("Run = %v, want nil", err)
			}
			r.Done <- err
		case <-time.After(cfg.ShutdownTimeout + 5*time.Second):
			t.Fatal("Run did not return within the shutdown timeout")
		}
		var o outcome
		select {
		case o = <-done:
		case <-time.After(10 * time.Second):
			close(stopClient)
			o = <-done
			t.Error("requests still succeed after Run returned")
		}
		if err := r.stop(); err != nil {
			t.Error(err)
		}
		t.Logf("%d requests succeeded, then: %v", o.ok, o.errs)
		for _, b := range o.bad {
			t.Errorf("a request got a broken answer: %s", b)
		}
		for _, err := range o.errs {
			var opErr *net.OpError
			if !errors.As(err, &opErr) || opErr.Op != "dial" {
				t.Errorf("a request failed other than by failing to connect: %v", err)
			}
		}
		if o.ok < 20 {
			t.Errorf("only %d requests succeeded", o.ok)
		}
	})
}

// TestServerBadConfig checks that Open refuses bad settings before
// touching the data dir.
func TestServerBadConfig(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	cfg, _ := testConfig(dir)
	cfg.LogFormat = "xml"
	if srv, err := Open(context.Background(), cfg); err == nil {
		srv.Close()
		t.Error("Open accepted --log-format xml")
	}
	cfg, _ = testConfig(dir)
	cfg.Synchronous = "OFF"
	if srv, err := Open(context.Background(), cfg); err == nil {
		srv.Close()
		t.Error("Open accepted synchronous OFF")
	}
	cfg, _ = testConfig(dir)
	cfg.MaxUploadBytes = -1
	if srv, err := Open(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "--max-upload-bytes") {
		if srv != nil {
			srv.Close()
		}
		t.Errorf("Open with --max-upload-bytes -1: got %v, want an error naming the flag", err)
	}
	// A taken address: the error is reported and the store closed.
	cfg, _ = testConfig(dir)
	r := startServer(t, cfg)
	cfg2, _ := testConfig(dir)
	cfg2.Addr = r.srv.Addr()
	if srv, err := Open(context.Background(), cfg2); err == nil {
		srv.Close()
		t.Error("Open listened on an address already in use")
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "acctapi.db")); err != nil {
		t.Errorf("database missing: %v", err)
	}
}
