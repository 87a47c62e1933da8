package server

import (
	"acctapi/server/servertest"

	"net/http"
	"path/filepath"
	"testing"
	"time"
)

// TestFirstStartListensAtOnce starts a server on a fresh data dir with no
// compiled PDF reader, as a container with a fresh volume does: /v1/health
// answers while the engine still compiles, which it does in the background.
// The restart, with the compile cached, is timed beside it.
func TestFirstStartListensAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the PDF reader; skipped with -short")
	}
	dir := t.TempDir()
	cfg, stderr := testConfig(filepath.Join(dir, "data"))
	cfg.CacheDir = filepath.Join(dir, "cache")
	timeToHealth := func() (*running, time.Duration) {
		t.Helper()
		start := time.Now()
		r := startServer(t, cfg)
		client := servertest.Client()
		for {
			res, err := client.Get(r.base + "/health")
			if err == nil {
				res.Body.Close()
				if res.StatusCode == http.StatusOK {
					return r, time.Since(start)
				}
			}
			if time.Since(start) > time.Minute {
				t.Fatalf("no healthy answer within a minute: %v; stderr:\n%s", err, stderr)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	began := time.Now()
	r, first := timeToHealth()
	select {
	case <-r.srv.reader.Warmed():
		t.Errorf("the PDF reader had compiled before /v1/health answered (%s): the start waited for it", first)
	default:
	}
	select {
	case <-r.srv.reader.Warmed():
	case <-time.After(5 * time.Minute):
		t.Fatal("the PDF reader did not compile within 5 minutes")
	}
	compiled := time.Since(began)
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}

	r, again := timeToHealth()
	<-r.srv.reader.Warmed()
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("time to /v1/health: first start %s, restart %s (the compile done %s after the first start)", first, again, compiled)
}
