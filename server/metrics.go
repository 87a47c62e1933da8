package server

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"acctapi/auth"
	"acctapi/db"
	"acctapi/filestore"
	"acctapi/handlers"
	"acctapi/metrics"
)

// fileUsageMaxAge is how long a walk of the file store stands for its size
// in the metrics: a walk costs a stat per stored file (about 4 µs each), and
// the size moves only with uploads.
const fileUsageMaxAge = time.Minute

// serveMetrics is what serve measures with --metrics-addr, on a registry of
// its own (never the library's global one).
type serveMetrics struct {
	registry *prometheus.Registry
	requests *metrics.Requests
	writes   *metrics.Writes
}

// newServeMetrics makes the registry and the metrics the store and the
// handlers are given; nil without --metrics-addr, which measures nothing.
func newServeMetrics(cfg *Config) *serveMetrics {
	if cfg.MetricsAddr == "" {
		return nil
	}
	reg := prometheus.NewRegistry()
	metrics.RegisterRuntime(reg, cfg.Version, cfg.Commit)
	return &serveMetrics{registry: reg, requests: metrics.NewRequests(reg), writes: metrics.NewWrites(reg)}
}

// batchObserver is what the store's writer tells of its batches.
func (m *serveMetrics) batchObserver() db.BatchObserver {
	if m == nil {
		return nil
	}
	return m.writes.ObserveBatch
}

// requestObserver is what the handlers tell of each request.
func (m *serveMetrics) requestObserver() handlers.RequestObserver {
	if m == nil {
		return nil
	}
	return m.requests
}

// watchStore registers the figures read at each scrape.
// A bucket (files nil) is not sized: only a listing of every object could.
func (m *serveMetrics) watchStore(cfg *Config, store *db.DB, files *filestore.Store, limiter *auth.Limiter) {
	opts := metrics.StoreOptions{DB: store, Limiter: limiter, Now: cfg.Now, UsageMaxAge: fileUsageMaxAge}
	if files != nil {
		opts.Files = files
	}
	metrics.RegisterStore(m.registry, opts)
}
