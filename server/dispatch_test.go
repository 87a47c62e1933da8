package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"acctapi/db"
	"acctapi/handlers"
	"acctapi/webhooks"
)

// dpRequest is a webhook delivery as the test's receiver got it.
type dpRequest struct {
	id, timestamp, signature string
	body                     []byte
	typ                      string
}

// dpReceiver is an https receiver on 127.0.0.1. While hang is set it
// holds each request until the sender gives up, and answers none.
type dpReceiver struct {
	srv  *httptest.Server
	url  string
	hang atomic.Bool
	got  chan dpRequest
}

func newDPReceiver(t *testing.T) *dpReceiver {
	t.Helper()
	rc := &dpReceiver{got: make(chan dpRequest, 100)}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var p struct{ Type string }
		json.Unmarshal(body, &p)
		select {
		case rc.got <- dpRequest{r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp"), r.Header.Get("webhook-signature"), body, p.Type}:
		default:
		}
		if rc.hang.Load() {
			<-r.Context().Done()
			// No answer at all: one written as the sender hangs up may still
			// reach it.
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	rc.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	rc.srv.StartTLS()
	t.Cleanup(rc.srv.Close)
	rc.url = rc.srv.URL + "/hook"
	return rc
}

func (rc *dpReceiver) next(t *testing.T, what string) dpRequest {
	t.Helper()
	select {
	case q := <-rc.got:
		return q
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no delivery within 10s", what)
		return dpRequest{}
	}
}

// dpTLS trusts the receiver's certificate.
func dpTLS(rc *dpReceiver) *tls.Config {
	roots := x509.NewCertPool()
	roots.AddCert(rc.srv.Certificate())
	return &tls.Config{RootCAs: roots}
}

// dpStore opens the data dir's database beside the server, able to write
// events.
func dpStore(t *testing.T, cfg *Config) *db.DB {
	t.Helper()
	store, err := db.Open(cfg.DatabasePath(), db.Options{EncodeEvent: handlers.EncodeEvent})
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { store.Close() }) })
	return store
}

// dpDeliveries lists the subscription's deliveries.
func dpDeliveries(t *testing.T, store *db.DB, firmID, webhookID string) []*db.Delivery {
	t.Helper()
	page, err := store.ListDeliveries(context.Background(), firmID, webhookID, db.PageRequest{Limit: 100, Sort: "createdAt"})
	if err != nil {
		t.Fatal(err)
	}
	return page.Items
}

// dpEventually waits, bounded, for cond.
func dpEventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServeDeliversWebhooks runs serve's dispatcher: events in the outbox
// go out signed once the server runs; a stop cuts an attempt off without
// recording it and the next start sends it again with the same webhook-id;
// without --allow-private-webhooks a loopback receiver is refused.
func TestServeDeliversWebhooks(t *testing.T) {
	ctx := context.Background()
	rc := newDPReceiver(t)
	cfg, _ := testConfig(t.TempDir())
	cfg.AllowPrivateWebhooks = true
	cfg.WebhookTLS = dpTLS(rc)
	// The first start makes the database and the firm.
	if err := openServer(t, cfg).Close(); err != nil {
		t.Fatal(err)
	}

	// A subscription and events, written while no server runs.
	store := dpStore(t, cfg)
	firm, err := store.DeploymentFirm(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hook, err := store.CreateWebhook(ctx, firm.ID, db.WebhookCreate{URL: rc.url, Events: []string{db.AllEvents}, Secret: webhooks.NewSecret()})
	if err != nil {
		t.Fatal(err)
	}
	client, err := store.CreateClient(ctx, firm.ID, db.ClientCreate{Name: "Client", Type: db.ClientLegalPerson})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := store.CreateWorkspace(ctx, client.ID, "Books")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateTask(ctx, client.ID, db.TaskCreate{WorkspaceID: ws.ID, Title: "Pay VAT"}); err != nil {
		t.Fatal(err)
	}
	wantTypes := []string{db.EventClientCreated, db.EventWorkspaceCreated, db.EventTaskCreated}

	// Stopped during the first attempt: nothing is recorded.
	rc.hang.Store(true)
	srv := startServer(t, cfg)
	cut := rc.next(t, "the first event")
	if err := srv.stop(); err != nil {
		t.Fatalf("stopping the server during an attempt: %v", err)
	}
	for _, d := range dpDeliveries(t, store, firm.ID, hook.ID) {
		if d.Status != db.DeliveryPending || len(d.Attempts) != 0 {
			t.Fatalf("after a stop during the first attempt: %+v, want every delivery pending with no attempt", d)
		}
	}

	// The next start delivers them all, in order, signed; the first with
	// the webhook-id of the attempt that was cut off.
	rc.hang.Store(false)
	srv = startServer(t, cfg)
	var types []string
	for i := range wantTypes {
		q := rc.next(t, wantTypes[i])
		ts, _ := strconv.ParseInt(q.timestamp, 10, 64)
		if err := webhooks.Verify(hook.Secret, q.id, ts, q.body, q.signature, time.Now()); err != nil {
			t.Errorf("%s: Verify: got %v, want nil", q.typ, err)
		}
		if i == 0 && q.id != cut.id {
			t.Errorf("the first event's webhook-id %s after the restart, %s before, want the same", q.id, cut.id)
		}
		types = append(types, q.typ)
	}
	if !slices.Equal(types, wantTypes) {
		t.Errorf("delivered %v, want %v", types, wantTypes)
	}
	dpEventually(t, "every delivery recorded", func() bool {
		for _, d := range dpDeliveries(t, store, firm.ID, hook.ID) {
			if d.Status != db.DeliverySucceeded || len(d.Attempts) != 1 {
				return false
			}
		}
		return true
	})
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}

	// Without --allow-private-webhooks, the loopback receiver is refused
	// when delivering.
	if _, err := store.CreateTask(ctx, client.ID, db.TaskCreate{WorkspaceID: ws.ID, Title: "File the return"}); err != nil {
		t.Fatal(err)
	}
	cfg.AllowPrivateWebhooks = false
	srv = startServer(t, cfg)
	dpEventually(t, "the refused attempt recorded", func() bool {
		for _, d := range dpDeliveries(t, store, firm.ID, hook.ID) {
			if d.Status == db.DeliveryPending {
				return len(d.Attempts) == 1 && d.Attempts[0].Error != nil && *d.Attempts[0].Error == "address not allowed: 127.0.0.1"
			}
		}
		return false
	})
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	select {
	case q := <-rc.got:
		t.Errorf("the receiver got %s without --allow-private-webhooks, want nothing", q.typ)
	default:
	}
}
