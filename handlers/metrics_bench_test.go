package handlers

import (
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"acctapi/metrics"
)

// BenchmarkServeMeMetrics is BenchmarkServeMe with the request metrics that
// --metrics-addr turns on: the two compared give the metrics' cost on the
// cheapest request (go test ./handlers -run '^$' -bench 'ServeMe').
func BenchmarkServeMeMetrics(b *testing.B) {
	s := newHPServer(b, func(c *Config) { c.Observer = metrics.NewRequests(prometheus.NewRegistry()) })
	b.Run("serial", func(b *testing.B) { s.bench(b, http.MethodGet, "/v1/me", nil, http.StatusOK) })
	b.Run("parallel", func(b *testing.B) { s.benchParallel(b, http.MethodGet, "/v1/me", nil, http.StatusOK) })
}
