// Package servertest is test support for the tests that run the server in
// their process: a log buffer its goroutines may write to, an HTTP client
// with bounded waits, and a Run loop stopped within a bound. It imports
// nothing of ours, so that the server's own tests can use it too.
package servertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// CacheDir is the compiled PDF reader every test server shares: compiling
// it takes seconds, and minutes under the race detector.
var CacheDir = filepath.Join(os.TempDir(), "acctapi-test-cache")

// SyncBuffer is a bytes.Buffer that a server's goroutines may write to
// while the test reads it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Client is an HTTP client with bounded waits and no proxy.
func Client() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}
}

// stopWithin bounds the wait for Run after its context ended.
const stopWithin = 15 * time.Second

// Running is a Run going on in a goroutine: Cancel ends its context, and
// Done receives what it returned.
type Running struct {
	Cancel context.CancelFunc
	Done   chan error
	close  func() error
	once   sync.Once
	err    error
}

// Start calls run in a goroutine; close runs after it returned, at Stop.
// The test's cleanup stops it if the test did not.
func Start(t testing.TB, run func(context.Context) error, close func() error) *Running {
	ctx, cancel := context.WithCancel(context.Background())
	r := &Running{Cancel: cancel, Done: make(chan error, 1), close: close}
	go func() { r.Done <- run(ctx) }()
	t.Cleanup(func() { r.Stop() })
	return r
}

// Stop cancels Run's context, waits (bounded) for Run to return and calls
// close. It returns Run's error joined with close's, the same at every call.
func (r *Running) Stop() error {
	r.once.Do(func() {
		r.Cancel()
		select {
		case err := <-r.Done:
			r.err = err
		case <-time.After(stopWithin):
			r.err = fmt.Errorf("the server's Run did not return within %v of its context being cancelled", stopWithin)
		}
		if err := r.close(); err != nil {
			r.err = errors.Join(r.err, fmt.Errorf("close the server: %w", err))
		}
	})
	return r.err
}

// Get sends GET url with the key (if any) and returns the status, header and body.
func Get(t testing.TB, url, key string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	client := Client()
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", url, err)
	}
	return resp.StatusCode, resp.Header, body
}
