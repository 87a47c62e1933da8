// Package metrics is acctapi's Prometheus instrumentation: the requests the
// API answers, the store's single writer, the rate limits, the webhook
// outbox and the sizes on disk, with Go's runtime and the process beside
// them, served with Go's profiles on a listener of their own. Every
// collector is registered on a registry that cmd makes and passes in, never
// on the library's global one. Labels hold only values from fixed sets
// (route templates, methods, statuses, limit scopes): never an id, a path,
// a key or a tenant.
package metrics

import (
	"log/slog"
	"net/http"
	"net/http/pprof"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// namespace prefixes every metric of ours.
const namespace = "acctapi"

// RegisterRuntime registers Go's runtime collector (goroutines, memory,
// garbage collection, scheduler), the process collector (CPU, resident
// memory, open files) and acctapi_build_info, whose labels name the
// version and commit running.
func RegisterRuntime(reg prometheus.Registerer, version, commit string) {
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace, Name: "build_info",
		Help:        "Always 1; the labels name the acctapi version and commit running.",
		ConstLabels: prometheus.Labels{"version": version, "commit": commit},
	})
	build.Set(1)
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), build)
}

// Handler serves the registry's metrics at /metrics in Prometheus' text
// format, and Go's profiles under /debug/pprof/; every other path is a 404.
// It is meant for a listener of its own that only operators reach: the
// profiles show the program's internals. /debug/pprof/cmdline is not
// served: a command line may hold a secret (--smtp-url's password). A
// collector that fails is logged and left out of the
// scrape, which goes on with the others (and counts the failure in
// promhttp_metric_handler_errors_total).
func Handler(reg *prometheus.Registry, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(log.Handler(), slog.LevelError),
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      reg,
	}))
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("POST /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	return mux
}
