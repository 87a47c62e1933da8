package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// requestBuckets are the latency histogram's bounds in seconds: from the
// 0.06 ms of a cached GET /v1/me to the minutes of a large upload, closest
// together where the API's answers are (1 to 50 ms).
var requestBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// Requests counts and times the requests the API answers. It is the
// handlers' RequestObserver: NewRequests's value goes into
// handlers.Config.Observer.
type Requests struct {
	total    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight prometheus.Gauge

	// series keeps each label set's counter and histogram, so that a
	// request finds them with one map read and allocates nothing.
	mu     sync.RWMutex
	series map[seriesKey]series
}

type seriesKey struct {
	method, route string
	status        int
}

type series struct {
	total    prometheus.Counter
	duration prometheus.Observer
}

// NewRequests registers the request metrics on reg:
// acctapi_http_requests_total{method,route,status},
// acctapi_http_request_duration_seconds{method,route} and
// acctapi_http_requests_in_flight.
func NewRequests(reg prometheus.Registerer) *Requests {
	m := &Requests{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "http", Name: "requests_total",
			Help: "Requests answered, by method, route template (\"unmatched\" when no route took the request) and status.",
		}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Subsystem: "http", Name: "request_duration_seconds",
			Help:    "Time from a request's arrival to the end of its answer, by method and route template.",
			Buckets: requestBuckets,
		}, []string{"method", "route"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Subsystem: "http", Name: "requests_in_flight",
			Help: "Requests being answered.",
		}),
		series: map[seriesKey]series{},
	}
	reg.MustRegister(m.total, m.duration, m.inFlight)
	return m
}

// RequestStarted counts a request in flight.
func (m *Requests) RequestStarted() { m.inFlight.Inc() }

// RequestDone counts an answered request and its duration. route must be a
// route template or "unmatched", as handlers gives it; a method outside
// HTTP's own is counted as "other", so that callers cannot make labels.
func (m *Requests) RequestDone(method, route string, status int, took time.Duration) {
	key := seriesKey{knownMethod(method), route, status}
	m.mu.RLock()
	s, ok := m.series[key]
	m.mu.RUnlock()
	if !ok {
		s = m.add(key)
	}
	s.total.Inc()
	s.duration.Observe(took.Seconds())
	m.inFlight.Dec()
}

// add makes the series of a label set seen for the first time.
func (m *Requests) add(key seriesKey) series {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.series[key]; ok {
		return s
	}
	s := series{
		total:    m.total.WithLabelValues(key.method, key.route, strconv.Itoa(key.status)),
		duration: m.duration.WithLabelValues(key.method, key.route),
	}
	m.series[key] = s
	return s
}

// knownMethod returns the method as a constant string when HTTP defines
// it, and "other" when not: the label set stays fixed, and no request's
// text is kept.
func knownMethod(method string) string {
	for _, m := range httpMethods {
		if method == m {
			return m
		}
	}
	return "other"
}

// httpMethods are the methods HTTP defines.
var httpMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace}
