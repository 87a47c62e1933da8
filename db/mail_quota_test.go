package db_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"acctapi/db"
)

// TestMailQuota: a firm mails at most MailQuota mails an hour. A mail past
// it is refused with a *QuotaError that says when there is room, and the
// session that asked for it is not created; reminders count when they go
// out, and are delayed, never refused.
func TestMailQuota(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	store := mustOpenDBWith(t, db.Options{Now: c.Now, EncodeEvent: encodeEvent, MailQuota: 2})
	firm := mustCreateFirm(t, store, "Kanzlei Muster")
	client := mustCreateClient(t, store, firm.ID, "Bäckerei Schmidt")
	ws := mustCreateWorkspace(t, store, client.ID, "Books")
	due := c.Now().Add(10 * 24 * time.Hour)
	collect, err := store.CreateCollect(ctx, client.ID, db.CollectCreate{WorkspaceID: ws, Title: "März", DueDate: &due,
		Items: []db.CollectItemCreate{{Title: "Kontoauszug", Required: true}}})
	if err != nil {
		t.Fatal(err)
	}
	session := func(token string) (*db.CollectSession, error) {
		return store.CreateCollectSession(ctx, client.ID, collect.ID, db.CollectSessionCreate{
			TokenHash: hash(token), ExpiresAt: c.Now().Add(30 * 24 * time.Hour),
			Mail: &db.SessionMail{Email: "anna@client.example", Link: "https://acct.example/collect/" + token}})
	}
	claim := func() []*db.OutgoingMail {
		t.Helper()
		mails, err := store.ClaimMails(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mails {
			if err := store.MailSent(ctx, m.ID, c.Now()); err != nil {
				t.Fatal(err)
			}
		}
		return mails
	}

	if _, err := session("first"); err != nil {
		t.Fatal(err)
	}
	c.Advance(10 * time.Minute)
	if _, err := session("second"); err != nil {
		t.Fatal(err)
	}
	if got := claim(); len(got) != 2 {
		t.Fatalf("the two links: %d claimed", len(got))
	}
	c.Advance(10 * time.Minute)
	_, err = session("third")
	var quota *db.QuotaError
	if !errors.As(err, &quota) || db.ErrorCode(err) != db.EQUOTA || quota.RetryAfter != 40*time.Minute {
		t.Fatalf("the third mail in the hour: got %v, want a QuotaError with 40 min to wait", err)
	}
	if _, err := store.OpenCollectSession(ctx, hash("third")); db.ErrorCode(err) != db.ENOTFOUND {
		t.Errorf("the refused session exists: %v", err)
	}
	c.Advance(40 * time.Minute)
	if _, err := session("third"); err != nil {
		t.Fatalf("an hour after the first: %v", err)
	}
	if got := claim(); len(got) != 1 {
		t.Fatalf("the third link: %d claimed", len(got))
	}

	// Three days before the due date the reminders of the three links come
	// due; the quota has room for two, and the third waits for room rather
	// than fail.
	c.Advance(due.Add(-72 * time.Hour).Sub(c.Now()))
	if got := claim(); len(got) != 2 || got[0].Kind != db.MailCollectReminder {
		t.Fatalf("reminders with room for two: got %d", len(got))
	}
	if got := claim(); len(got) != 0 {
		t.Fatalf("reminders past the quota: %d claimed, want them delayed", len(got))
	}
	c.Advance(time.Hour)
	if got := claim(); len(got) != 1 {
		t.Fatalf("an hour later: %d reminders, want the one delayed", len(got))
	}
	if n := count(t, mustOpenRaw(t, store.Path()), `SELECT count(*) FROM mail_outbox WHERE status = 'sent'`); n != 6 {
		t.Errorf("sent: %d mails, want 3 links and 3 reminders", n)
	}
}
