package cmd

import (
	"acctapi/server/servertest"

	"acctapi/server"

	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"acctapi/auth"
)

// scrapeMetrics GETs /metrics from the metrics listener and parses it with
// Prometheus' own text parser.
func scrapeMetrics(t *testing.T, srv *server.Server) map[string]*dto.MetricFamily {
	t.Helper()
	client := servertest.Client()
	defer client.CloseIdleConnections()
	res, err := client.Get("http://" + srv.MetricsAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: status %d", res.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return families
}

// labelsOf returns a metric's labels by name.
func labelsOf(m *dto.Metric) map[string]string {
	labels := map[string]string{}
	for _, l := range m.Label {
		labels[l.GetName()] = l.GetValue()
	}
	return labels
}

// counterOf returns the value of the family's metric with the label (or the
// only metric when name is ""), 0 when there is none.
func counterOf(families map[string]*dto.MetricFamily, family, name, value string) float64 {
	for _, m := range families[family].GetMetric() {
		if name == "" || labelsOf(m)[name] == value {
			return m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return 0
}

// histogramOf returns the family's only histogram.
func histogramOf(t *testing.T, families map[string]*dto.MetricFamily, family string) *dto.Histogram {
	t.Helper()
	ms := families[family].GetMetric()
	if len(ms) != 1 || ms[0].Histogram == nil {
		t.Fatalf("%s: got %v, want one histogram", family, ms)
	}
	return ms[0].Histogram
}

// TestMetrics runs a scripted workload through the real server and checks
// its scrape: every request counted by method, route template and status,
// timed in the histogram of its route, the 429 among the rate limit's
// refusals, the writes among the group commits; the public address knows
// neither /metrics nor /debug/pprof/.
func TestMetrics(t *testing.T) {
	cfg, _, _ := testConfig(t.TempDir())
	cfg.MetricsAddr = "127.0.0.1:0"
	r := startServer(t, cfg)
	key := r.srv.FirstKey
	before := scrapeMetrics(t, r.srv)

	type series struct{ method, route, status string }
	want := map[series]float64{}
	call := func(method, path, key, clientID string, body any, status int, route string) []byte {
		t.Helper()
		var reader io.Reader
		contentType := ""
		switch b := body.(type) {
		case nil:
		case *bytes.Buffer:
			reader, contentType = b, "application/octet-stream"
		default:
			raw, err := json.Marshal(b)
			if err != nil {
				t.Fatal(err)
			}
			reader, contentType = bytes.NewReader(raw), "application/json"
		}
		got, _, res := flDo(t, method, r.base+strings.TrimPrefix(path, "/v1"), key, clientID, contentType, reader)
		if got != status {
			t.Fatalf("%s %s: status %d, want %d: %s", method, path, got, status, res)
		}
		want[series{method, route, strconv.Itoa(status)}]++
		return res
	}
	id := func(body []byte) string {
		t.Helper()
		var v struct{ ID string }
		if err := json.Unmarshal(body, &v); err != nil || v.ID == "" {
			t.Fatalf("no id in %s", body)
		}
		return v.ID
	}

	for range 3 {
		call("GET", "/v1/health", "", "", nil, 200, "/v1/health")
	}
	call("GET", "/v1/me", key, "", nil, 200, "/v1/me")
	call("GET", "/v1/me", "", "", nil, 401, "/v1/me")
	client := id(call("POST", "/v1/admin/clients", key, "", map[string]any{"name": "Metrics client", "type": "legal_person"}, 201, "/v1/admin/clients"))
	ws := id(call("POST", "/v1/workspaces", key, client, map[string]any{"name": "Books"}, 201, "/v1/workspaces"))
	task := id(call("POST", "/v1/tasks", key, client, map[string]any{"title": "Receipts", "workspaceId": ws}, 201, "/v1/tasks"))
	call("PATCH", "/v1/tasks/"+task, key, client, map[string]any{"status": "IN_PROGRESS"}, 200, "/v1/tasks/:id")
	call("PATCH", "/v1/tasks/"+task, key, client, map[string]any{"status": "LOST"}, 422, "/v1/tasks/:id")
	call("GET", "/v1/tasks?limit=5", key, client, nil, 200, "/v1/tasks")
	call("GET", "/v1/nothing-here/"+task, key, "", nil, 404, "unmatched")
	call("DELETE", "/v1/me", key, "", nil, 405, "unmatched")
	upload, contentType := flUploadBody(ws, "receipt.pdf", bytes.NewReader(make([]byte, 1000)))
	status, _, res := flDo(t, "POST", r.base+"/files", key, client, contentType, upload)
	if status != http.StatusCreated {
		t.Fatalf("POST /v1/files: %d %s", status, res)
	}
	want[series{"POST", "/v1/files", "201"}]++

	// A key allowed two requests a minute: the third is refused.
	firm := me(t, r.base, key).AccountantID
	want[series{"GET", "/v1/me", "200"}]++
	limited, _, err := auth.MintKey(context.Background(), besideStore(t, cfg), firm, auth.KeySpec{Name: "limited", RateLimitMax: 2})
	if err != nil {
		t.Fatal(err)
	}
	call("GET", "/v1/me", limited, "", nil, 200, "/v1/me")
	call("GET", "/v1/me", limited, "", nil, 200, "/v1/me")
	call("GET", "/v1/me", limited, "", nil, 429, "/v1/me")

	// Never on the public address: the API's own 404.
	for _, path := range []string{"/metrics", "/debug/pprof/", "/debug/pprof/goroutine", "/v1/metrics"} {
		status, _, body := servertest.Get(t, "http://"+r.srv.Addr()+path, "")
		if status != http.StatusNotFound || !strings.Contains(string(body), `"code":"not_found"`) {
			t.Errorf("public GET %s: %d %s, want the API's 404", path, status, body)
		}
		want[series{"GET", "unmatched", "404"}]++
	}
	// Go's profiles on the metrics address.
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap?debug=1"} {
		status, _, body := servertest.Get(t, "http://"+r.srv.MetricsAddr()+path, "")
		if status != http.StatusOK || len(body) == 0 {
			t.Errorf("metrics GET %s: %d, want 200 with a body", path, status)
		}
	}

	after := scrapeMetrics(t, r.srv)
	got := map[series]float64{}
	for _, m := range after["acctapi_http_requests_total"].GetMetric() {
		l := labelsOf(m)
		got[series{l["method"], l["route"], l["status"]}] = m.GetCounter().GetValue()
	}
	if !maps.Equal(got, want) {
		t.Errorf("acctapi_http_requests_total:\n got %v\nwant %v", got, want)
	}
	timed := map[series]uint64{}
	for _, m := range after["acctapi_http_request_duration_seconds"].GetMetric() {
		l := labelsOf(m)
		timed[series{l["method"], l["route"], ""}] = m.GetHistogram().GetSampleCount()
	}
	wantTimed := map[series]uint64{}
	for s, n := range want {
		wantTimed[series{s.method, s.route, ""}] += uint64(n)
	}
	if !maps.Equal(timed, wantTimed) {
		t.Errorf("acctapi_http_request_duration_seconds counts:\n got %v\nwant %v", timed, wantTimed)
	}
	if n := counterOf(after, "acctapi_http_requests_in_flight", "", ""); n != 0 {
		t.Errorf("requests in flight after the workload: %v, want 0", n)
	}

	refused := counterOf(after, "acctapi_rate_limit_refusals_total", "scope", "key") - counterOf(before, "acctapi_rate_limit_refusals_total", "scope", "key")
	if refused != 1 {
		t.Errorf("refusals of key limits during the workload: %v, want the one 429", refused)
	}
	// Six writes were made: the client, the workspace, the task, its change,
	// the file and the limited key.
	b, a := histogramOf(t, before, "acctapi_db_write_batch_size"), histogramOf(t, after, "acctapi_db_write_batch_size")
	if a.GetSampleCount() <= b.GetSampleCount() || a.GetSampleSum()-b.GetSampleSum() < 6 {
		t.Errorf("write batches: %d batches of %v writes before, %d of %v after, want at least 6 more writes",
			b.GetSampleCount(), b.GetSampleSum(), a.GetSampleCount(), a.GetSampleSum())
	}
	for _, name := range []string{"acctapi_db_write_queue_depth", "acctapi_webhook_outbox_pending", "acctapi_webhook_outbox_oldest_pending_age_seconds",
		"acctapi_mail_outbox_pending", "acctapi_mail_outbox_oldest_pending_age_seconds",
		"acctapi_analysis_queue_pending", "acctapi_analysis_queue_oldest_pending_age_seconds",
		"acctapi_database_wal_size_bytes", "acctapi_filestore_files", "acctapi_filestore_size_bytes",
		"acctapi_db_write_batch_duration_seconds", "acctapi_build_info", "go_goroutines", "process_resident_memory_bytes"} {
		if after[name] == nil {
			t.Errorf("%s: missing from the scrape", name)
		}
	}
	if n := counterOf(after, "acctapi_database_size_bytes", "", ""); n <= 0 {
		t.Errorf("acctapi_database_size_bytes: %v, want the database's size", n)
	}
	checkDocumentedMetrics(t, after)
}

// metricNameRE finds metric names in the documents: ours, and the runtime's.
var metricNameRE = regexp.MustCompile(`\b(?:acctapi|go|process|promhttp)_[a-z0-9_]*[a-z0-9]`)

// checkDocumentedMetrics requires every metric that the dashboard, the
// alert rules and the docs name to be in the scrape, so that none of them
// goes on naming a metric that was renamed or removed.
func checkDocumentedMetrics(t *testing.T, scrape map[string]*dto.MetricFamily) {
	t.Helper()
	dashboard, err := os.ReadFile("../docs/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(dashboard) {
		t.Errorf("docs/grafana-dashboard.json is not valid JSON")
	}
	// Every page may name metrics; the dashboard, the alert rules and the
	// table of metrics in operations.md must.
	pages, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	mustName := []string{"../docs/grafana-dashboard.json", "../docs/alerts.yml", "../docs/operations.md"}
	docs := append([]string{"../docs/grafana-dashboard.json", "../docs/alerts.yml", "../README.md"}, pages...)
	for _, doc := range docs {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		names := metricNameRE.FindAllString(string(text), -1)
		if len(names) == 0 && slices.Contains(mustName, doc) {
			t.Errorf("%s names no metric", doc)
		}
		for _, name := range names {
			family := name
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if base, ok := strings.CutSuffix(name, suffix); ok && scrape[base] != nil {
					family = base
				}
			}
			if scrape[family] == nil {
				t.Errorf("%s names %s, which the server does not serve", strings.TrimPrefix(doc, "../"), name)
			}
		}
	}
}

// TestMetricsOff: without --metrics-addr nothing listens for them.
func TestMetricsOff(t *testing.T) {
	cfg, _, _ := testConfig(t.TempDir())
	r := startServer(t, cfg)
	if addr := r.srv.MetricsAddr(); addr != "" {
		t.Errorf("MetricsAddr without --metrics-addr: %q, want none", addr)
	}
	if status, _, _ := servertest.Get(t, "http://"+r.srv.Addr()+"/metrics", ""); status != http.StatusNotFound {
		t.Errorf("public GET /metrics: %d, want 404", status)
	}
}

// TestMetricsOwnHostOnly: the metrics listener answers to its own address,
// localhost and IP addresses only, so that a page whose name was rebound to
// it (DNS rebinding) cannot read it from a browser; and it serves no
// command line, which could hold a password.
func TestMetricsOwnHostOnly(t *testing.T) {
	cfg, _, _ := testConfig(t.TempDir())
	cfg.MetricsAddr = "127.0.0.1:0"
	cfg.SMTPURL, cfg.MailFrom = "smtp://user:s3cret@127.0.0.1:1?insecure=true", "office@firm.example"
	r := startServer(t, cfg)
	_, port, _ := net.SplitHostPort(r.srv.MetricsAddr())
	for host, want := range map[string]int{
		"127.0.0.1:" + port: http.StatusOK, "localhost:" + port: http.StatusOK, "[::1]:" + port: http.StatusOK,
		"evil.example:" + port: http.StatusMisdirectedRequest, "evil.example": http.StatusMisdirectedRequest,
		"127.0.0.1.nip.io:" + port: http.StatusMisdirectedRequest,
	} {
		req, err := http.NewRequest(http.MethodGet, "http://"+r.srv.MetricsAddr()+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, res.StatusCode, want)
		}
	}
	status, _, body := servertest.Get(t, "http://"+r.srv.MetricsAddr()+"/debug/pprof/cmdline", "")
	if status != http.StatusNotFound || strings.Contains(string(body), "s3cret") {
		t.Errorf("/debug/pprof/cmdline: %d %s, want a 404 without the command line", status, body)
	}
}
