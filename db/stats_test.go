package db_test

import (
	"context"
	"testing"
	"time"

	"acctapi/db"
)

func TestOutbox(t *testing.T) {
	ctx := context.Background()
	clock := newClock()
	store := mustOpenDBWith(t, db.Options{Now: clock.Now, EncodeEvent: encodeEvent})
	outbox := func() db.OutboxStats {
		t.Helper()
		stats, err := store.Outbox(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return stats
	}
	if got := outbox(); got.Pending != 0 || !got.OldestPending.IsZero() {
		t.Fatalf("empty outbox: got %+v, want no pending delivery", got)
	}

	// Two firms' subscriptions: the figures count both.
	var first db.DueDelivery
	start := clock.Now()
	for _, name := range []string{"One", "Two"} {
		firm := mustCreateFirm(t, store, name)
		client := mustCreateClient(t, store, firm.ID, "Client")
		ws := mustCreateWorkspace(t, store, client.ID, "Books")
		if _, err := store.CreateWebhook(ctx, firm.ID, db.WebhookCreate{URL: "https://a.example/hook", Events: []string{"*"}, Secret: "whsec_a"}); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := store.CreateTask(ctx, client.ID, db.TaskCreate{WorkspaceID: ws, Title: "Receipts"}); err != nil {
				t.Fatal(err)
			}
			clock.Advance(time.Minute)
		}
		if first.ID == "" {
			due, err := store.DueDeliveries(ctx, 1)
			if err != nil || len(due) != 1 {
				t.Fatalf("DueDeliveries: %+v, %v", due, err)
			}
			first = due[0]
		}
	}
	if got := outbox(); got.Pending != 4 || !got.OldestPending.Equal(start) {
		t.Fatalf("after four events: got %+v, want 4 pending, the oldest at %v", got, start)
	}

	// A delivery made leaves the outbox, and the oldest is the next one.
	if err := store.RecordAttempt(ctx, first.ID, db.AttemptResult{At: clock.Now(), StatusCode: 204}); err != nil {
		t.Fatal(err)
	}
	if got, want := outbox(), start.Add(time.Minute); got.Pending != 3 || !got.OldestPending.Equal(want) {
		t.Fatalf("after one delivery: got %+v, want 3 pending, the oldest at %v", got, want)
	}
}

func TestFileSizes(t *testing.T) {
	store := mustOpenDB(t)
	database, wal, err := store.FileSizes()
	if err != nil {
		t.Fatal(err)
	}
	// The migrations wrote through the WAL, which SQLite keeps while the
	// database is open.
	if database <= 0 || wal <= 0 {
		t.Errorf("FileSizes: got database %d, WAL %d bytes, want both above 0", database, wal)
	}
}
