package webhooks_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"acctapi/db"
	"acctapi/webhooks"
)

// wait bounds every wait of these tests for something the dispatcher does
// in the background: generous, since only a broken dispatcher reaches it.
const wait = 10 * time.Second

// clock is a clock the tests move by hand instead of sleeping.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

func (c *clock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// encodeEvent writes the events these tests make with their records' id
// and name: the API's form of them is the handlers' business and tested
// there.
func encodeEvent(e db.Event) ([]byte, error) {
	var data map[string]string
	switch r := e.Record.(type) {
	case *db.Task:
		data = map[string]string{"id": r.ID, "title": r.Title}
	case *db.Workspace:
		data = map[string]string{"id": r.ID, "name": r.Name}
	case *db.Client:
		data = map[string]string{"id": r.ID, "name": r.Name}
	default:
		return nil, fmt.Errorf("no test rendering for %T", e.Record)
	}
	return json.Marshal(map[string]any{"id": e.ID, "type": e.Type, "createdAt": e.CreatedAt,
		"clientId": e.ClientID, "data": data})
}

// fixture is a migrated store on a temp file with a firm, a client and a
// workspace, on a clock of the test's.
type fixture struct {
	path   string
	store  *db.DB
	clock  *clock
	firm   *db.Firm
	client *db.Client
	ws     string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	fx := &fixture{path: filepath.Join(t.TempDir(), "acct.db"), clock: newClock()}
	store, err := db.Open(fx.path, db.Options{Now: fx.clock.Now, EncodeEvent: encodeEvent})
	if err != nil {
		t.Fatalf("Open: got %v, want nil", err)
	}
	t.Cleanup(func() {
		if err := store.Close(); err != nil {
			t.Errorf("Close: got %v, want nil", err)
		}
	})
	if err := store.MigrateUp(); err != nil {
		t.Fatalf("MigrateUp: got %v, want nil", err)
	}
	fx.store = store
	if fx.firm, err = store.CreateFirm(ctx, "Firm"); err != nil {
		t.Fatal(err)
	}
	if fx.client, err = store.CreateClient(ctx, fx.firm.ID, db.ClientCreate{Name: "Client", Type: db.ClientLegalPerson}); err != nil {
		t.Fatal(err)
	}
	ws, err := store.CreateWorkspace(ctx, fx.client.ID, "Books")
	if err != nil {
		t.Fatal(err)
	}
	fx.ws = ws.ID
	return fx
}

// subscribe makes a subscription of the firm to every event, at url.
func (fx *fixture) subscribe(t *testing.T, url string) *db.Webhook {
	t.Helper()
	w, err := fx.store.CreateWebhook(context.Background(), fx.firm.ID,
		db.WebhookCreate{URL: url, Events: []string{db.AllEvents}, Secret: webhooks.NewSecret()})
	if err != nil {
		t.Fatalf("CreateWebhook: got %v, want nil", err)
	}
	return w
}

// task creates a task, which writes a task.created event.
func (fx *fixture) task(t *testing.T, title string) *db.Task {
	t.Helper()
	task, err := fx.store.CreateTask(context.Background(), fx.client.ID, db.TaskCreate{WorkspaceID: fx.ws, Title: title})
	if err != nil {
		t.Fatalf("CreateTask(%q): got %v, want nil", title, err)
	}
	return task
}

// deliveries lists the subscription's deliveries with their attempts.
func (fx *fixture) deliveries(t *testing.T, webhookID string) []*db.Delivery {
	t.Helper()
	page, err := fx.store.ListDeliveries(context.Background(), fx.firm.ID, webhookID, db.PageRequest{Limit: 100, Sort: "createdAt"})
	if err != nil {
		t.Fatalf("ListDeliveries: got %v, want nil", err)
	}
	return page.Items
}

// delivery returns the subscription's only delivery.
func (fx *fixture) delivery(t *testing.T, webhookID string) *db.Delivery {
	t.Helper()
	ds := fx.deliveries(t, webhookID)
	if len(ds) != 1 {
		t.Fatalf("%d deliveries, want 1", len(ds))
	}
	return ds[0]
}

// toRetry sets the clock to the retry time of the delivery.
func (fx *fixture) toRetry(t *testing.T, d *db.Delivery) {
	t.Helper()
	if d.Status != db.DeliveryPending || d.NextAttemptAt == nil {
		t.Fatalf("delivery %+v: want it pending with a retry time", d)
	}
	fx.clock.Set(*d.NextAttemptAt)
}

// payloads reads the outbox, event id to payload, from the database file.
func (fx *fixture) payloads(t *testing.T) map[string][]byte {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+fx.path+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	rows, err := raw.Query(`SELECT id, payload FROM webhook_events ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	payloads := map[string][]byte{}
	for rows.Next() {
		var id string
		var payload []byte
		if err := rows.Scan(&id, &payload); err != nil {
			t.Fatal(err)
		}
		payloads[id] = payload
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return payloads
}

// dropConnection is an answer that closes the connection without a
// response.
const dropConnection = -1

// request is a delivery as a receiver got it.
type request struct {
	n                   int // 1 for the receiver's first request
	id, timestamp, sigs string
	contentType         string
	body                []byte
	title               string // the task's, from the body
	status              int    // the receiver's answer
}

// receiver is an https receiver on 127.0.0.1 that records what it gets.
type receiver struct {
	srv *httptest.Server
	url string
	got chan request // every request, as it arrives

	mu   sync.Mutex
	reqs []request
}

// newReceiver starts a receiver; answer gives the status of its n-th
// request (n from 1), or dropConnection, and may block.
func newReceiver(t *testing.T, answer func(n int, r *http.Request) int) *receiver {
	t.Helper()
	rc := &receiver{got: make(chan request, 1000)}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var p struct{ Data struct{ Title string } }
		json.Unmarshal(body, &p)
		rc.mu.Lock()
		q := request{n: len(rc.reqs) + 1, id: r.Header.Get("webhook-id"), timestamp: r.Header.Get("webhook-timestamp"),
			sigs: r.Header.Get("webhook-signature"), contentType: r.Header.Get("Content-Type"), body: body, title: p.Data.Title}
		rc.reqs = append(rc.reqs, q)
		rc.mu.Unlock()
		select {
		case rc.got <- q:
		default: // a receiver flooded by a broken dispatcher does not block
		}
		status := answer(q.n, r)
		rc.mu.Lock()
		rc.reqs[q.n-1].status = status
		rc.mu.Unlock()
		if status == dropConnection {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Errorf("hijack: %v", err)
				return
			}
			conn.Close()
			return
		}
		w.WriteHeader(status)
	}))
	// Connections the client drops are what some tests are about.
	rc.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	rc.srv.StartTLS()
	t.Cleanup(rc.srv.Close)
	rc.url = rc.srv.URL + "/hook"
	return rc
}

// always answers every request with the status.
func always(status int) func(int, *http.Request) int {
	return func(int, *http.Request) int { return status }
}

// requests returns what the receiver got so far.
func (rc *receiver) requests() []request {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.reqs)
}

// next waits for the receiver's next request.
func (rc *receiver) next(t *testing.T, what string) request {
	t.Helper()
	select {
	case q := <-rc.got:
		return q
	case <-time.After(wait):
		t.Fatalf("%s: no request within %v", what, wait)
		return request{}
	}
}

// titles are the task titles of the requests.
func titles(reqs []request) []string {
	var ts []string
	for _, q := range reqs {
		ts = append(ts, q.title)
	}
	return ts
}

// trusting returns client options that trust the receivers' certificates
// and allow their loopback address.
func trusting(receivers ...*receiver) webhooks.ClientOptions {
	roots := x509.NewCertPool()
	for _, rc := range receivers {
		roots.AddCert(rc.srv.Certificate())
	}
	return webhooks.ClientOptions{AllowPrivate: true, TLSConfig: &tls.Config{RootCAs: roots}}
}

// newDispatcher returns a dispatcher on the fixture's store and clock,
// with a fixed random source.
func newDispatcher(fx *fixture, opts webhooks.ClientOptions, logger *slog.Logger) *webhooks.Dispatcher {
	return webhooks.NewDispatcher(webhooks.DispatcherOptions{Store: fx.store, Client: webhooks.NewClient(opts),
		Now: fx.clock.Now, Logger: logger, Rand: rand.New(rand.NewPCG(1, 2))})
}

// runDue calls RunDue and checks how many attempts it made.
func runDue(t *testing.T, d *webhooks.Dispatcher, want int) {
	t.Helper()
	n, err := d.RunDue(t.Context())
	if err != nil || n != want {
		t.Fatalf("RunDue: got %d attempts, %v, want %d, nil", n, err, want)
	}
}

// startRun runs the dispatcher in the background; the returned function
// stops it and checks that Run returns nil in time.
func startRun(t *testing.T, d *webhooks.Dispatcher) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	var once sync.Once
	stop = func() {
		t.Helper()
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: got %v, want nil", err)
				}
			case <-time.After(wait):
				t.Fatalf("Run did not return within %v of its context ending", wait)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// eventually waits for cond, which reads the store, to hold.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, wait)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// within checks that a retry time is the scheduled delay after at, moved by
// at most the jitter, to the second the store keeps.
func within(t *testing.T, name string, next *time.Time, at time.Time, delay time.Duration) {
	t.Helper()
	lo, hi := at.Add(delay*8/10-time.Second), at.Add(delay*12/10)
	if next == nil || next.Before(lo) || next.After(hi) {
		t.Fatalf("%s: next attempt at %v, want between %v and %v", name, next, lo, hi)
	}
}

func TestDispatcherSignsEveryDelivery(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t)
	rc := newReceiver(t, always(http.StatusNoContent))
	hook := fx.subscribe(t, rc.url)
	if _, err := fx.store.CreateWorkspace(ctx, fx.client.ID, "Payroll"); err != nil {
		t.Fatal(err)
	}
	fx.task(t, "Pay VAT")
	name := "Client, renamed"
	if _, err := fx.store.UpdateClient(ctx, fx.firm.ID, fx.client.ID, db.ClientUpdate{Name: db.Update[string]{Set: true, Value: &name}}); err != nil {
		t.Fatal(err)
	}
	d := newDispatcher(fx, trusting(rc), nil)
	runDue(t, d, 3)

	// checkSigned checks that the request carries the stored payload of the
	// event it names, signed at the clock's time with each secret.
	payloads := fx.payloads(t)
	checkSigned := func(q request, secrets ...string) {
		t.Helper()
		payload, ok := payloads[q.id]
		if !ok {
			t.Fatalf("request %d: webhook-id %q names no event of the outbox", q.n, q.id)
		}
		if !bytes.Equal(q.body, payload) {
			t.Errorf("request %d: body %s, want the stored payload %s", q.n, q.body, payload)
		}
		var p struct{ ID string }
		if err := json.Unmarshal(q.body, &p); err != nil || p.ID != q.id {
			t.Errorf("request %d: payload id %q (%v), want the webhook-id %q", q.n, p.ID, err, q.id)
		}
		if want := strconv.FormatInt(fx.clock.Now().Unix(), 10); q.timestamp != want {
			t.Errorf("request %d: webhook-timestamp %q, want %q (the clock's)", q.n, q.timestamp, want)
		}
		if q.contentType != "application/json" {
			t.Errorf("request %d: Content-Type %q, want application/json", q.n, q.contentType)
		}
		ts, _ := strconv.ParseInt(q.timestamp, 10, 64)
		if n := len(strings.Fields(q.sigs)); n != len(secrets) {
			t.Errorf("request %d: webhook-signature %q has %d entries, want %d", q.n, q.sigs, n, len(secrets))
		}
		for i, secret := range secrets {
			if err := webhooks.Verify(secret, q.id, ts, q.body, q.sigs, fx.clock.Now()); err != nil {
				t.Errorf("request %d: Verify with secret %d: got %v, want nil", q.n, i, err)
			}
		}
		if err := webhooks.Verify(webhooks.NewSecret(), q.id, ts, q.body, q.sigs, fx.clock.Now()); err == nil {
			t.Errorf("request %d: Verify with another secret: got nil, want an error", q.n)
		}
	}
	reqs := rc.requests()
	if len(reqs) != 3 {
		t.Fatalf("the receiver got %d requests, want 3", len(reqs))
	}
	seen := map[string]bool{}
	for _, q := range reqs {
		checkSigned(q, hook.Secret)
		seen[q.id] = true
	}
	if len(seen) != 3 || len(payloads) != 3 {
		t.Errorf("%d distinct webhook-ids for %d events, want 3 for 3", len(seen), len(payloads))
	}
	for _, dl := range fx.deliveries(t, hook.ID) {
		if dl.Status != db.DeliverySucceeded || len(dl.Attempts) != 1 || dl.Attempts[0].StatusCode == nil ||
			*dl.Attempts[0].StatusCode != http.StatusNoContent || dl.Attempts[0].Error != nil {
			t.Errorf("delivery %+v: want it succeeded after one 204", dl)
		}
	}

	// During a rotation, deliveries are signed with both secrets.
	fx.clock.Advance(time.Minute)
	rotated, err := fx.store.RotateWebhookSecret(ctx, fx.firm.ID, hook.ID, webhooks.NewSecret())
	if err != nil {
		t.Fatal(err)
	}
	fx.task(t, "after the rotation")
	runDue(t, d, 1)
	payloads = fx.payloads(t)
	reqs = rc.requests()
	checkSigned(reqs[len(reqs)-1], rotated.Secret, hook.Secret)
}

func TestDispatcherRetriesUntilSuccess(t *testing.T) {
	fx := newFixture(t)
	rc := newReceiver(t, func(n int, _ *http.Request) int {
		switch n {
		case 1:
			return http.StatusInternalServerError
		case 2:
			return dropConnection
		case 3:
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	hook := fx.subscribe(t, rc.url)
	fx.task(t, "Pay VAT")
	var logs bytes.Buffer
	d := newDispatcher(fx, trusting(rc), slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	schedule := webhooks.Schedule()

	var times []time.Time // of the attempts
	for i := range 3 {
		times = append(times, fx.clock.Now())
		runDue(t, d, 1)
		dl := fx.delivery(t, hook.ID)
		if dl.Status != db.DeliveryPending || len(dl.Attempts) != i+1 {
			t.Fatalf("after attempt %d: %+v, want it pending with %d attempts", i+1, dl, i+1)
		}
		within(t, fmt.Sprintf("after attempt %d", i+1), dl.NextAttemptAt, fx.clock.Now(), schedule[i])
		// Not due before its time: nothing is sent.
		runDue(t, d, 0)
		fx.clock.Set(dl.NextAttemptAt.Add(-time.Second))
		runDue(t, d, 0)
		fx.toRetry(t, dl)
	}
	times = append(times, fx.clock.Now())
	runDue(t, d, 1)
	runDue(t, d, 0)

	dl := fx.delivery(t, hook.ID)
	if dl.Status != db.DeliverySucceeded || dl.NextAttemptAt != nil || len(dl.Attempts) != 4 {
		t.Fatalf("delivery %+v, want it succeeded after 4 attempts, with no next one", dl)
	}
	wantCodes := []int{500, 0, 503, 200}
	for i, a := range dl.Attempts {
		code := 0
		if a.StatusCode != nil {
			code = *a.StatusCode
		}
		if code != wantCodes[i] || (a.Error == nil) != (i == 3) || !a.At.Equal(times[i]) {
			t.Errorf("attempt %d: status %d, error %v, at %v, want status %d, an error unless the last, at %v",
				i+1, code, a.Error, a.At, wantCodes[i], times[i])
		}
	}
	if e := dl.Attempts[0].Error; e == nil || *e != "status 500" {
		t.Errorf("attempt 1: error %v, want status 500", e)
	}
	if e := dl.Attempts[1].Error; e == nil || !strings.HasPrefix(*e, "connection") {
		t.Errorf("attempt 2 (connection dropped): error %v, want a connection error", e)
	}
	reqs := rc.requests()
	if len(reqs) != 4 {
		t.Fatalf("the receiver got %d requests, want 4", len(reqs))
	}
	for i, q := range reqs {
		if q.id != dl.EventID || q.timestamp != strconv.FormatInt(times[i].Unix(), 10) {
			t.Errorf("request %d: webhook-id %s, timestamp %s, want %s, %d (the event's id, the attempt's time)",
				i+1, q.id, q.timestamp, dl.EventID, times[i].Unix())
		}
	}
	if w, err := fx.store.FindWebhook(context.Background(), fx.firm.ID, hook.ID); err != nil || w.Status != db.WebhookActive {
		t.Errorf("subscription %+v (%v), want it active", w, err)
	}

	// Each failed attempt is logged with what it takes to follow it up, and
	// never with the secret or the payload.
	var failed []map[string]any
	for line := range strings.Lines(logs.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["msg"] == "webhooks: attempt failed" {
			failed = append(failed, rec)
		}
	}
	if len(failed) != 3 {
		t.Fatalf("%d failed attempts logged, want 3:\n%s", len(failed), logs.String())
	}
	for i, rec := range failed {
		for _, key := range []string{"webhook_id", "delivery_id", "event_id", "status", "error", "next_retry"} {
			if rec[key] == nil {
				t.Errorf("log of attempt %d has no %s: %v", i+1, key, rec)
			}
		}
		if rec["webhook_id"] != hook.ID || rec["delivery_id"] != dl.ID || rec["event_id"] != dl.EventID || rec["level"] != "INFO" {
			t.Errorf("log of attempt %d: %v, want it at INFO naming the subscription, delivery and event", i+1, rec)
		}
	}
	for _, secret := range []string{hook.Secret, strings.TrimPrefix(hook.Secret, "whsec_"), "Pay VAT"} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the log holds %q (the secret or the payload):\n%s", secret, logs.String())
		}
	}
}

func TestDispatcherKeepsOrder(t *testing.T) {
	fx := newFixture(t)
	const failures = 3
	flaky := newReceiver(t, func(n int, _ *http.Request) int {
		if n <= failures {
			return http.StatusBadGateway
		}
		return http.StatusOK
	})
	steady := newReceiver(t, always(http.StatusOK))
	flakyHook, steadyHook := fx.subscribe(t, flaky.url), fx.subscribe(t, steady.url)
	var want []string
	for i := range 20 {
		title := fmt.Sprintf("task %02d", i)
		fx.task(t, title)
		want = append(want, title)
	}
	d := newDispatcher(fx, trusting(flaky, steady), nil)

	for round := 0; ; round++ {
		if _, err := d.RunDue(t.Context()); err != nil {
			t.Fatal(err)
		}
		pending := 0
		for _, hook := range []string{flakyHook.ID, steadyHook.ID} {
			for _, dl := range fx.deliveries(t, hook) {
				if dl.Status == db.DeliveryPending {
					pending++
				}
			}
		}
		if pending == 0 {
			break
		}
		if round == 10 {
			t.Fatalf("%d deliveries still pending after %d rounds", pending, round)
		}
		fx.clock.Advance(time.Hour)
	}

	// The steady receiver got every event once, in order; the flaky one got
	// the first event until it took it, then the others in order.
	if got := titles(steady.requests()); !slices.Equal(got, want) {
		t.Errorf("the steady receiver got %q, want %q", got, want)
	}
	wantFlaky := append(slices.Repeat([]string{want[0]}, failures), want...)
	if got := titles(flaky.requests()); !slices.Equal(got, wantFlaky) {
		t.Errorf("the flaky receiver got %q, want %q", got, wantFlaky)
	}
	for name, rc := range map[string]*receiver{"steady": steady, "flaky": flaky} {
		taken := map[string]bool{}
		for _, q := range rc.requests() {
			if q.status != http.StatusOK {
				continue
			}
			if taken[q.id] {
				t.Errorf("the %s receiver got event %s (%s) again after taking it", name, q.id, q.title)
			}
			taken[q.id] = true
		}
		if len(taken) != 20 {
			t.Errorf("the %s receiver took %d events, want 20", name, len(taken))
		}
	}
}

func TestDispatcherSlowReceiverHoldsBackNoOther(t *testing.T) {
	fx := newFixture(t)
	release := make(chan struct{})
	slow := newReceiver(t, func(_ int, r *http.Request) int {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		return http.StatusOK
	})
	// Registered after the receiver's, so run before it: the server's Close
	// waits for the handlers.
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	fast := newReceiver(t, always(http.StatusOK))
	slowHook, fastHook := fx.subscribe(t, slow.url), fx.subscribe(t, fast.url)
	for i := range 3 {
		fx.task(t, fmt.Sprintf("task %d", i))
	}
	// The slow receiver's attempt does not time out while the test waits:
	// only a dispatcher that lets the other subscription go on passes.
	opts := trusting(slow, fast)
	opts.Timeout = 3 * wait
	stop := startRun(t, newDispatcher(fx, opts, nil))

	// The fast receiver gets its three events one after the other while the
	// slow one still holds its first.
	slow.next(t, "the slow receiver's first event")
	for i := range 3 {
		if q := fast.next(t, "the fast receiver"); q.title != fmt.Sprintf("task %d", i) {
			t.Fatalf("the fast receiver's request %d: %s, want task %d", i+1, q.title, i)
		}
	}
	eventually(t, "the fast receiver's deliveries recorded", func() bool {
		for _, dl := range fx.deliveries(t, fastHook.ID) {
			if dl.Status != db.DeliverySucceeded {
				return false
			}
		}
		return true
	})
	if n := len(slow.requests()); n != 1 {
		t.Fatalf("the slow receiver got %d requests while holding the first, want 1", n)
	}

	unblock()
	for i := 1; i < 3; i++ {
		if q := slow.next(t, "the slow receiver, released"); q.title != fmt.Sprintf("task %d", i) {
			t.Fatalf("the slow receiver's request %d: %s, want task %d", i+1, q.title, i)
		}
	}
	eventually(t, "the slow receiver's deliveries recorded", func() bool {
		for _, dl := range fx.deliveries(t, slowHook.ID) {
			if dl.Status != db.DeliverySucceeded || len(dl.Attempts) != 1 {
				return false
			}
		}
		return true
	})
	stop()
}

func TestDispatcherExhaustedRetries(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t)
	rc := newReceiver(t, always(http.StatusInternalServerError))
	hook := fx.subscribe(t, rc.url)
	var logs bytes.Buffer
	d := newDispatcher(fx, trusting(rc), slog.New(slog.NewJSONHandler(&logs, nil)))
	schedule := webhooks.Schedule()

	// fail runs the subscription's newest delivery through every attempt.
	fail := func(title string) *db.Delivery {
		t.Helper()
		fx.task(t, title)
		for i := range len(schedule) + 1 {
			runDue(t, d, 1)
			ds := fx.deliveries(t, hook.ID)
			dl := ds[len(ds)-1]
			if i == len(schedule) {
				return dl
			}
			within(t, fmt.Sprintf("%s after attempt %d", title, i+1), dl.NextAttemptAt, fx.clock.Now(), schedule[i])
			fx.toRetry(t, dl)
		}
		panic("unreachable")
	}

	first := fail("first")
	if first.Status != db.DeliveryFailed || len(first.Attempts) != len(schedule)+1 || first.NextAttemptAt != nil {
		t.Fatalf("after every retry: %+v, want it failed after %d attempts, with no next one", first, len(schedule)+1)
	}
	w, err := fx.store.FindWebhook(ctx, fx.firm.ID, hook.ID)
	if err != nil || w.Status != db.WebhookFailing || w.FailingSince == nil || !w.FailingSince.Equal(fx.clock.Now()) {
		t.Fatalf("subscription %+v (%v), want it failing since now, %v", w, err, fx.clock.Now())
	}
	if span := fx.clock.Now().Sub(first.Attempts[0].At); span < 60*time.Hour || span > 91*time.Hour {
		t.Errorf("the retries took %v, want about 3 days (75.5 hours, ±20%%)", span)
	}
	if !strings.Contains(logs.String(), `"level":"WARN","msg":"webhooks: attempt failed, no retry left: the delivery has failed"`) {
		t.Errorf("no warning for the failed delivery in the log:\n%s", logs.String())
	}

	// Another delivery failing for good once the subscription has been
	// failing for db.WebhookDisableAfter disables it.
	fx.clock.Advance(db.WebhookDisableAfter)
	if second := fail("second"); second.Status != db.DeliveryFailed {
		t.Fatalf("the second delivery: %+v, want it failed", second)
	}
	if w, err := fx.store.FindWebhook(ctx, fx.firm.ID, hook.ID); err != nil || w.Status != db.WebhookDisabled {
		t.Fatalf("subscription %+v (%v), want it disabled", w, err)
	}
	fx.task(t, "while disabled")
	fx.clock.Advance(24 * time.Hour)
	runDue(t, d, 0)
	if n := len(rc.requests()); n != 2*(len(schedule)+1) {
		t.Errorf("the receiver got %d requests, want %d", n, 2*(len(schedule)+1))
	}
}

func TestDispatcherStopMidAttempt(t *testing.T) {
	fx := newFixture(t)
	var hang atomic.Bool
	hang.Store(true)
	rc := newReceiver(t, func(_ int, r *http.Request) int {
		if hang.Load() {
			// No answer: a 200 written once the dispatcher hangs up can
			// still reach it, and a receiver that answered has the event.
			<-r.Context().Done()
			return dropConnection
		}
		return http.StatusOK
	})
	hook := fx.subscribe(t, rc.url)
	fx.task(t, "Pay VAT")

	stop := startRun(t, newDispatcher(fx, trusting(rc), nil))
	first := rc.next(t, "the first attempt")
	stop()
	dl := fx.delivery(t, hook.ID)
	if dl.Status != db.DeliveryPending || len(dl.Attempts) != 0 {
		t.Fatalf("after a stop mid-attempt: %+v, want it pending with no attempt recorded", dl)
	}

	// The next dispatcher sends it again, with the same webhook-id.
	hang.Store(false)
	runDue(t, newDispatcher(fx, trusting(rc), nil), 1)
	again := rc.next(t, "the attempt after the restart")
	if again.id != first.id || again.id != dl.EventID {
		t.Errorf("webhook-id %s after the restart, %s before, want the event's %s both times", again.id, first.id, dl.EventID)
	}
	if dl := fx.delivery(t, hook.ID); dl.Status != db.DeliverySucceeded || len(dl.Attempts) != 1 {
		t.Errorf("after the restart: %+v, want it succeeded after the one recorded attempt", dl)
	}
}

func TestDispatcherRefusesPrivateAddress(t *testing.T) {
	fx := newFixture(t)
	rc := newReceiver(t, always(http.StatusOK))
	hook := fx.subscribe(t, rc.url)
	fx.task(t, "Pay VAT")
	opts := trusting(rc)
	opts.AllowPrivate = false
	d := newDispatcher(fx, opts, nil)
	schedule := webhooks.Schedule()

	for i := range 2 {
		runDue(t, d, 1)
		dl := fx.delivery(t, hook.ID)
		if len(dl.Attempts) != i+1 {
			t.Fatalf("%d attempts recorded, want %d", len(dl.Attempts), i+1)
		}
		a := dl.Attempts[i]
		if a.StatusCode != nil || a.Error == nil || *a.Error != "address not allowed: 127.0.0.1" {
			t.Errorf("attempt %d: status %v, error %v, want no status and address not allowed: 127.0.0.1", i+1, a.StatusCode, a.Error)
		}
		within(t, fmt.Sprintf("after attempt %d", i+1), dl.NextAttemptAt, fx.clock.Now(), schedule[i])
		fx.toRetry(t, dl)
	}
	if n := len(rc.requests()); n != 0 {
		t.Errorf("the receiver got %d requests, want none", n)
	}
}

func TestDispatcherRunWakesOnEvents(t *testing.T) {
	fx := newFixture(t)
	rc := newReceiver(t, always(http.StatusOK))
	hook := fx.subscribe(t, rc.url)
	// With an hour between polls, only the store's signal can start these
	// deliveries within the test's time.
	d := webhooks.NewDispatcher(webhooks.DispatcherOptions{Store: fx.store, Client: webhooks.NewClient(trusting(rc)),
		Now: fx.clock.Now, Poll: time.Hour})
	stop := startRun(t, d)
	for i := range 5 {
		title := fmt.Sprintf("task %d", i)
		fx.task(t, title)
		if q := rc.next(t, title); q.title != title {
			t.Fatalf("got %s, want %s", q.title, title)
		}
		eventually(t, title+" recorded", func() bool {
			ds := fx.deliveries(t, hook.ID)
			return len(ds) == i+1 && ds[len(ds)-1].Status == db.DeliverySucceeded
		})
	}
	stop()
}

func TestDispatcherRunRetriesWhenDue(t *testing.T) {
	fx := newFixture(t)
	rc := newReceiver(t, func(n int, _ *http.Request) int {
		if n == 1 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	hook := fx.subscribe(t, rc.url)
	fx.task(t, "Pay VAT")
	d := webhooks.NewDispatcher(webhooks.DispatcherOptions{Store: fx.store, Client: webhooks.NewClient(trusting(rc)),
		Now: fx.clock.Now, Poll: 5 * time.Millisecond})
	stop := startRun(t, d)
	rc.next(t, "the first attempt")
	var dl *db.Delivery
	eventually(t, "the first attempt recorded", func() bool {
		dl = fx.delivery(t, hook.ID)
		return len(dl.Attempts) == 1
	})
	fx.toRetry(t, dl)
	rc.next(t, "the retry")
	eventually(t, "the retry recorded", func() bool {
		dl = fx.delivery(t, hook.ID)
		return dl.Status == db.DeliverySucceeded && len(dl.Attempts) == 2
	})
	stop()
}

func TestDispatcherRunPurgesOldDeliveries(t *testing.T) {
	fx := newFixture(t)
	rc := newReceiver(t, always(http.StatusOK))
	hook := fx.subscribe(t, rc.url)
	fx.task(t, "old")
	runDue(t, newDispatcher(fx, trusting(rc), nil), 1)
	fx.clock.Advance(db.DeliveryRetention - time.Second)
	fx.task(t, "recent")
	runDue(t, newDispatcher(fx, trusting(rc), nil), 1)
	fx.clock.Advance(2 * time.Second)

	stop := startRun(t, newDispatcher(fx, trusting(rc), nil))
	eventually(t, "the old delivery purged", func() bool { return len(fx.deliveries(t, hook.ID)) == 1 })
	stop()
	if ds := fx.deliveries(t, hook.ID); len(ds) != 1 || ds[0].Status != db.DeliverySucceeded {
		t.Fatalf("deliveries after the purge: %+v, want the recent one alone", ds)
	}
	if p := fx.payloads(t); len(p) != 1 {
		t.Errorf("%d events after the purge, want 1", len(p))
	}
}

// logLines is a log destination that hands each line to the test.
type logLines chan string

func (l logLines) Write(p []byte) (int, error) {
	select {
	case l <- string(p):
	default: // the test has seen what it waits for
	}
	return len(p), nil
}

// waitLog waits for a log line holding each of ss.
func (l logLines) waitLog(t *testing.T, ss ...string) {
	t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case line := <-l:
			if !slices.ContainsFunc(ss, func(s string) bool { return !strings.Contains(line, s) }) {
				return
			}
		case <-deadline:
			t.Fatalf("no log line with %q within %v", ss, wait)
		}
	}
}

func TestDispatcherRecordFails(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t)
	tasks := newReceiver(t, always(http.StatusOK))
	workspaces := newReceiver(t, always(http.StatusOK))
	tasksHook, err := fx.store.CreateWebhook(ctx, fx.firm.ID, db.WebhookCreate{URL: tasks.url,
		Events: []string{db.EventTaskCreated}, Secret: webhooks.NewSecret()})
	if err != nil {
		t.Fatal(err)
	}
	workspacesHook, err := fx.store.CreateWebhook(ctx, fx.firm.ID, db.WebhookCreate{URL: workspaces.url,
		Events: []string{db.EventWorkspaceCreated}, Secret: webhooks.NewSecret()})
	if err != nil {
		t.Fatal(err)
	}
	// The store cannot record attempts while the trigger is there.
	raw, err := sql.Open("sqlite", "file:"+fx.path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`CREATE TRIGGER no_attempts BEFORE INSERT ON webhook_attempts
		BEGIN SELECT RAISE(ABORT, 'the disk is on fire'); END`); err != nil {
		t.Fatal(err)
	}
	fx.task(t, "Pay VAT")

	// RunDue returns the error after the attempt, instead of sending the
	// delivery again and again.
	d := newDispatcher(fx, trusting(tasks, workspaces), nil)
	bounded, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if n, err := d.RunDue(bounded); n != 1 || err == nil || !strings.Contains(err.Error(), "the disk is on fire") {
		t.Fatalf("RunDue with attempts that cannot be recorded: got %d, %v, want 1 and the store's error", n, err)
	}

	// Run holds the subscription back until its next poll (an hour away
	// here) while it goes on with the others.
	logs := logLines(make(chan string, 100))
	stop := startRun(t, webhooks.NewDispatcher(webhooks.DispatcherOptions{Store: fx.store,
		Client: webhooks.NewClient(trusting(tasks, workspaces)), Now: fx.clock.Now, Poll: time.Hour,
		Logger: slog.New(slog.NewJSONHandler(logs, nil))}))
	logs.waitLog(t, "cannot record an attempt", tasksHook.ID)
	if _, err := fx.store.CreateWorkspace(ctx, fx.client.ID, "Payroll"); err != nil {
		t.Fatal(err)
	}
	workspaces.next(t, "the other subscription's event")
	// Its attempt cannot be recorded either.
	logs.waitLog(t, "cannot record an attempt", workspacesHook.ID)
	stop()
	if n := len(tasks.requests()); n != 2 {
		t.Fatalf("the subscription whose attempts cannot be recorded got %d requests, want 2 (one from RunDue, one from Run)", n)
	}

	// Once the store records again, the next poll sends the deliveries
	// again, with the same webhook-id: at least once.
	logs = logLines(make(chan string, 100))
	stop = startRun(t, webhooks.NewDispatcher(webhooks.DispatcherOptions{Store: fx.store,
		Client: webhooks.NewClient(trusting(tasks, workspaces)), Now: fx.clock.Now, Poll: 5 * time.Millisecond,
		Logger: slog.New(slog.NewJSONHandler(logs, nil))}))
	logs.waitLog(t, "cannot record an attempt", tasksHook.ID)
	if _, err := raw.Exec(`DROP TRIGGER no_attempts`); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deliveries recorded", func() bool {
		dl := fx.delivery(t, tasksHook.ID)
		return dl.Status == db.DeliverySucceeded
	})
	stop()
	dl := fx.delivery(t, tasksHook.ID)
	if len(dl.Attempts) != 1 {
		t.Errorf("delivery %+v, want one attempt recorded", dl)
	}
	reqs := tasks.requests()
	for _, q := range reqs {
		if q.id != dl.EventID {
			t.Errorf("request %d: webhook-id %s, want the event's %s", q.n, q.id, dl.EventID)
		}
	}
	if len(reqs) < 4 {
		t.Errorf("%d requests, want at least 4 (RunDue, the first Run, the second Run before and after the store recovered)", len(reqs))
	}
}

func TestDispatcherSubscriptionDeletedMidAttempt(t *testing.T) {
	fx := newFixture(t)
	release := make(chan struct{})
	rc := newReceiver(t, func(int, *http.Request) int {
		<-release
		return http.StatusInternalServerError
	})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	hook := fx.subscribe(t, rc.url)
	fx.task(t, "Pay VAT")

	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	d := newDispatcher(fx, trusting(rc), nil)
	go func() {
		n, err := d.RunDue(t.Context())
		done <- result{n, err}
	}()
	rc.next(t, "the attempt")
	if err := fx.store.DeleteWebhook(context.Background(), fx.firm.ID, hook.ID); err != nil {
		t.Fatal(err)
	}
	unblock()
	select {
	case r := <-done:
		if r.n != 1 || r.err != nil {
			t.Fatalf("RunDue with the subscription deleted during the attempt: got %d, %v, want 1, nil", r.n, r.err)
		}
	case <-time.After(wait):
		t.Fatalf("RunDue did not return within %v", wait)
	}
}

func TestDispatcherWorkers(t *testing.T) {
	fx := newFixture(t)
	release := make(chan struct{})
	var inFlight, most atomic.Int32
	rc := newReceiver(t, func(int, *http.Request) int {
		n := inFlight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release
		inFlight.Add(-1)
		return http.StatusOK
	})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	for i := range 3 {
		fx.subscribe(t, rc.url+"?subscription="+strconv.Itoa(i))
	}
	fx.task(t, "Pay VAT")
	d := webhooks.NewDispatcher(webhooks.DispatcherOptions{Store: fx.store, Client: webhooks.NewClient(trusting(rc)),
		Now: fx.clock.Now, Workers: 2})

	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := d.RunDue(t.Context())
		done <- result{n, err}
	}()
	rc.next(t, "the first subscription")
	rc.next(t, "the second subscription")
	// A dispatcher past its two workers sends the third at once; this one
	// does not until a worker is free. (The grace only lets a broken
	// dispatcher show itself: it never fails a correct one.)
	select {
	case q := <-rc.got:
		t.Fatalf("request %d while two workers were busy, want none", q.n)
	case <-time.After(200 * time.Millisecond):
	}
	unblock()
	select {
	case r := <-done:
		if r.n != 3 || r.err != nil {
			t.Fatalf("RunDue: got %d, %v, want 3, nil", r.n, r.err)
		}
	case <-time.After(wait):
		t.Fatalf("RunDue did not return within %v", wait)
	}
	if m := most.Load(); m != 2 {
		t.Errorf("at most %d attempts at once, want 2", m)
	}
}

func TestDispatcherFindsWorkPastBusySubscriptions(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t)
	release := make(chan struct{})
	slow := newReceiver(t, func(int, *http.Request) int {
		<-release
		return http.StatusOK
	})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	fast := newReceiver(t, always(http.StatusOK))
	subscribe := func(url, event string) {
		t.Helper()
		if _, err := fx.store.CreateWebhook(ctx, fx.firm.ID, db.WebhookCreate{URL: url, Events: []string{event},
			Secret: webhooks.NewSecret()}); err != nil {
			t.Fatal(err)
		}
	}
	// The slow subscription's delivery is the oldest due, so the store
	// lists it first; two fast ones follow. One worker stays free while
	// the slow attempt runs.
	subscribe(slow.url, db.EventTaskCreated)
	subscribe(fast.url+"?n=1", db.EventWorkspaceCreated)
	subscribe(fast.url+"?n=2", db.EventWorkspaceCreated)
	fx.task(t, "Pay VAT")
	fx.clock.Advance(time.Second)
	if _, err := fx.store.CreateWorkspace(ctx, fx.client.ID, "Payroll"); err != nil {
		t.Fatal(err)
	}
	d := webhooks.NewDispatcher(webhooks.DispatcherOptions{Store: fx.store, Client: webhooks.NewClient(trusting(slow, fast)),
		Now: fx.clock.Now, Workers: 2})
	done := make(chan error, 1)
	go func() {
		_, err := d.RunDue(t.Context())
		done <- err
	}()
	slow.next(t, "the slow subscription")
	fast.next(t, "a fast subscription")
	fast.next(t, "the other fast subscription, while the slow one holds a worker")
	unblock()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("RunDue: got %v, want nil", err)
		}
	case <-time.After(wait):
		t.Fatalf("RunDue did not return within %v", wait)
	}
}
