package metrics_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"acctapi/auth"
	"acctapi/db"
	"acctapi/filestore"
	"acctapi/metrics"
)

// scrape serves the registry's /metrics and parses the answer with
// Prometheus' own text parser.
func scrape(t *testing.T, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	metrics.Handler(reg, slog.New(slog.DiscardHandler)).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: status %d, body %s", rec.Code, rec.Body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return families
}

// find returns the metric of the family with exactly the labels, or nil.
func find(families map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Metric {
	f := families[name]
	if f == nil {
		return nil
	}
	for _, m := range f.Metric {
		if len(m.Label) != len(labels) {
			continue
		}
		match := true
		for _, l := range m.Label {
			if labels[l.GetName()] != l.GetValue() {
				match = false
			}
		}
		if match {
			return m
		}
	}
	return nil
}

// value returns a counter's or gauge's value, failing when it is missing.
func value(t *testing.T, families map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	m := find(families, name, labels)
	switch {
	case m == nil:
		t.Fatalf("%s%v: missing", name, labels)
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	t.Fatalf("%s%v: neither a counter nor a gauge", name, labels)
	return 0
}

func TestRequests(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.NewRequests(reg)
	for range 4 {
		m.RequestStarted()
	}
	m.RequestDone("GET", "/v1/tasks", 200, 3*time.Millisecond)
	m.RequestDone("GET", "/v1/tasks", 200, 40*time.Millisecond)
	m.RequestDone("BREW", "unmatched", 405, time.Millisecond)

	families := scrape(t, reg)
	if got := value(t, families, "acctapi_http_requests_total", map[string]string{"method": "GET", "route": "/v1/tasks", "status": "200"}); got != 2 {
		t.Errorf("GET /v1/tasks 200: got %v, want 2", got)
	}
	if got := value(t, families, "acctapi_http_requests_total", map[string]string{"method": "other", "route": "unmatched", "status": "405"}); got != 1 {
		t.Errorf("an unknown method: got %v, want 1 as method \"other\"", got)
	}
	if got := value(t, families, "acctapi_http_requests_in_flight", nil); got != 1 {
		t.Errorf("in flight: got %v, want 1", got)
	}
	h := find(families, "acctapi_http_request_duration_seconds", map[string]string{"method": "GET", "route": "/v1/tasks"}).GetHistogram()
	if h.GetSampleCount() != 2 || h.GetSampleSum() < 0.042 || h.GetSampleSum() > 0.044 {
		t.Errorf("GET /v1/tasks duration: %d samples summing to %v s, want 2 summing to 0.043", h.GetSampleCount(), h.GetSampleSum())
	}
	for _, b := range h.Bucket {
		want := uint64(0)
		switch {
		case b.GetUpperBound() >= 0.05:
			want = 2
		case b.GetUpperBound() >= 0.005:
			want = 1
		}
		if b.GetCumulativeCount() != want {
			t.Errorf("bucket le=%v: got %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want)
		}
	}

	// A request whose label set was seen before allocates nothing.
	if allocs := testing.AllocsPerRun(100, func() {
		m.RequestStarted()
		m.RequestDone("GET", "/v1/tasks", 200, time.Millisecond)
	}); allocs != 0 {
		t.Errorf("RequestDone: %v allocations, want 0", allocs)
	}
}

func BenchmarkRequestDone(b *testing.B) {
	m := metrics.NewRequests(prometheus.NewRegistry())
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.RequestStarted()
			m.RequestDone("GET", "/v1/tasks/:id", 200, time.Millisecond)
		}
	})
}

func TestWrites(t *testing.T) {
	reg := prometheus.NewRegistry()
	w := metrics.NewWrites(reg)
	for _, n := range []int{1, 3, 128} {
		w.ObserveBatch(n, time.Millisecond)
	}
	h := find(scrape(t, reg), "acctapi_db_write_batch_size", nil).GetHistogram()
	if h.GetSampleCount() != 3 || h.GetSampleSum() != 132 {
		t.Errorf("batch sizes: %d batches of %v writes, want 3 of 132", h.GetSampleCount(), h.GetSampleSum())
	}
}

func TestStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	store, err := db.Open(filepath.Join(dir, "acctapi.db"), db.Options{Now: clock, EncodeEvent: func(db.Event) ([]byte, error) { return []byte(`{}`), nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if err := store.MigrateUp(); err != nil {
		t.Fatal(err)
	}
	files, err := filestore.Open(filepath.Join(dir, "files"))
	if err != nil {
		t.Fatal(err)
	}
	limiter := auth.NewLimiter(clock)
	for range 3 {
		limiter.Allow("key:one", 1, time.Minute)
	}
	limiter.Allow("addr:10.0.0.1", 0, time.Minute)

	// A subscription and one event make one pending delivery, written an
	// hour before the scrape.
	firm, err := store.CreateFirm(ctx, "Firm")
	if err != nil {
		t.Fatal(err)
	}
	client, err := store.CreateClient(ctx, firm.ID, db.ClientCreate{Name: "Client", Type: db.ClientLegalPerson})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateWebhook(ctx, firm.ID, db.WebhookCreate{URL: "https://a.example/hook", Events: []string{"*"}, Secret: "whsec_a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateWorkspace(ctx, client.ID, "Books"); err != nil {
		t.Fatal(err)
	}
	// Two invitations queued for mailing, the older two hours before the
	// scrape; one without mail queues nothing.
	for i, inv := range []*db.Invitation{{Locale: "en"}, nil, {Locale: "de"}} {
		if _, err := store.InviteAccountantUser(ctx, firm.ID, db.AccountantUserInvite{Email: fmt.Sprintf("u%d@a.example", i),
			Role: db.RoleRef{Name: "user"}, Mail: inv}); err != nil {
			t.Fatal(err)
		}
		now = now.Add(30 * time.Minute)
	}
	now = now.Add(30 * time.Minute)

	store1 := storeFile(t, files, "cfilefilefilefilefile0001", 1000)
	reg := prometheus.NewRegistry()
	metrics.RegisterStore(reg, metrics.StoreOptions{DB: store, Files: files, Limiter: limiter, Now: clock, UsageMaxAge: time.Hour})
	families := scrape(t, reg)

	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"acctapi_db_write_queue_depth", nil, 0},
		{"acctapi_rate_limit_refusals_total", map[string]string{"scope": "key"}, 2},
		{"acctapi_rate_limit_refusals_total", map[string]string{"scope": "addr"}, 1},
		{"acctapi_webhook_outbox_pending", nil, 4}, // the workspace and the three invitations
		{"acctapi_webhook_outbox_oldest_pending_age_seconds", nil, 7200},
		{"acctapi_mail_outbox_pending", nil, 2},
		{"acctapi_mail_outbox_oldest_pending_age_seconds", nil, 7200},
		{"acctapi_analysis_queue_pending", nil, 0},
		{"acctapi_analysis_queue_oldest_pending_age_seconds", nil, 0},
		{"acctapi_filestore_files", nil, 1},
		{"acctapi_filestore_size_bytes", nil, float64(store1)},
	} {
		if got := value(t, families, c.name, c.labels); got != c.want {
			t.Errorf("%s%v: got %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	database, wal, err := store.FileSizes()
	if err != nil {
		t.Fatal(err)
	}
	if got := value(t, families, "acctapi_database_size_bytes", nil); got != float64(database) || got == 0 {
		t.Errorf("database size: got %v, want %d", got, database)
	}
	if got := value(t, families, "acctapi_database_wal_size_bytes", nil); got == 0 || got > float64(wal) {
		t.Errorf("WAL size: got %v, want above 0 and at most %d", got, wal)
	}

	// Within UsageMaxAge a scrape reuses the last walk of the file store.
	storeFile(t, files, "cfilefilefilefilefile0002", 500)
	if got := value(t, scrape(t, reg), "acctapi_filestore_files", nil); got != 1 {
		t.Errorf("files within UsageMaxAge: got %v, want the last walk's 1", got)
	}
	fresh := prometheus.NewRegistry()
	metrics.RegisterStore(fresh, metrics.StoreOptions{DB: store, Files: files, Limiter: limiter})
	if got := value(t, scrape(t, fresh), "acctapi_filestore_files", nil); got != 2 {
		t.Errorf("files with UsageMaxAge 0: got %v, want 2", got)
	}

	// Without a local store (the files in a bucket) the file figures are
	// left out, and the others stay.
	bucketed := prometheus.NewRegistry()
	metrics.RegisterStore(bucketed, metrics.StoreOptions{DB: store, Limiter: limiter})
	for name := range scrape(t, bucketed) {
		if strings.HasPrefix(name, "acctapi_filestore_") {
			t.Errorf("without a local store the scrape holds %s", name)
		}
	}
	if got := value(t, scrape(t, bucketed), "acctapi_webhook_outbox_pending", nil); got != 4 {
		t.Errorf("outbox without a local store: got %v, want 4", got)
	}
}

// storeFile puts a file of n bytes in the store and returns n.
func storeFile(t *testing.T, files *filestore.Store, id string, n int) int {
	t.Helper()
	p, err := files.Write(bytes.NewReader(make([]byte, n)), int64(n))
	if err != nil {
		t.Fatal(err)
	}
	if err := files.Commit(p, id); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestHandler(t *testing.T) {
	reg := prometheus.NewRegistry()
	metrics.RegisterRuntime(reg, "v1.2.3", "abc")
	server := httptest.NewServer(metrics.Handler(reg, slog.New(slog.DiscardHandler)))
	t.Cleanup(server.Close)
	for _, c := range []struct {
		method, path string
		status       int
		contains     string
	}{
		{"GET", "/metrics", 200, `acctapi_build_info{commit="abc",version="v1.2.3"} 1`},
		{"GET", "/metrics", 200, "go_goroutines "},
		{"GET", "/metrics", 200, "process_resident_memory_bytes "},
		{"GET", "/debug/pprof/", 200, "goroutine"},
		{"GET", "/debug/pprof/goroutine?debug=1", 200, "goroutine profile"},
		{"GET", "/debug/pprof/cmdline", 404, ""}, // a command line may hold a secret
		{"POST", "/metrics", 405, ""},
		{"GET", "/", 404, ""},
		{"GET", "/v1/me", 404, ""},
	} {
		req, err := http.NewRequest(c.method, server.URL+c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := server.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != c.status || !strings.Contains(string(body), c.contains) {
			t.Errorf("%s %s: status %d, want %d with %q in the body", c.method, c.path, res.StatusCode, c.status, c.contains)
		}
	}
}
