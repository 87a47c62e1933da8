package db_test

import (
	"context"
	"crypto/sha256"
	"testing"
	"time"

	"acctapi/db"
)

// TestUpdateFirm: a change of the firm is read back, reaches the mails
// already queued, and its locale becomes the default of new collects and
// invitations.
func TestUpdateFirm(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	d := mustOpenDBWith(t, db.Options{Now: c.Now})
	firm := mustCreateFirm(t, d, "Accounting firm")
	other := mustCreateFirm(t, d, "Other firm")
	client := mustCreateClient(t, d, firm.ID, "Client")
	ws := mustCreateWorkspace(t, d, client.ID, "Books")
	if firm.Locale != "en" || firm.MailFromName != nil {
		t.Errorf("new firm: got %+v, want locale en and no mail sender name", firm)
	}

	// A link mailed before the rename is sent after it.
	collect, err := d.CreateCollect(ctx, client.ID, db.CollectCreate{WorkspaceID: ws, Title: "March",
		Items: []db.CollectItemCreate{{Title: "Bank statement", Required: true}}})
	if err != nil {
		t.Fatalf("CreateCollect: got %v, want nil", err)
	}
	if collect.Locale != "en" {
		t.Errorf("collect before the change: locale %q, want en", collect.Locale)
	}
	hash := sha256.Sum256([]byte("token"))
	if _, err := d.CreateCollectSession(ctx, client.ID, collect.ID, db.CollectSessionCreate{ExpiresAt: c.Now().Add(time.Hour),
		TokenHash: hash[:], Mail: &db.SessionMail{Email: "anna@client.example", NoReminders: true, Link: "https://acct.example/collect/token"}}); err != nil {
		t.Fatalf("CreateCollectSession: got %v, want nil", err)
	}

	c.Advance(time.Minute)
	name, from, locale := "Steuerkanzlei Weber", "Kanzlei Weber", "de"
	got, err := d.UpdateFirm(ctx, firm.ID, db.FirmUpdate{Name: val(name), MailFromName: val(from), Locale: val(locale)})
	if err != nil {
		t.Fatalf("UpdateFirm: got %v, want nil", err)
	}
	if got.Name != name || got.MailFromName == nil || *got.MailFromName != from || got.Locale != locale ||
		!got.UpdatedAt.Equal(c.Now()) || !got.CreatedAt.Equal(firm.CreatedAt) {
		t.Errorf("UpdateFirm: got %+v", got)
	}
	read, err := d.GetFirm(ctx, firm.ID)
	if err != nil || read.Name != name || *read.MailFromName != from || read.Locale != locale {
		t.Errorf("GetFirm after the change: got %+v, %v", read, err)
	}
	if o, err := d.GetFirm(ctx, other.ID); err != nil || o.Name != "Other firm" || o.Locale != "en" || o.MailFromName != nil {
		t.Errorf("the other firm after the change: got %+v, %v; want it untouched", o, err)
	}

	mails, err := d.ClaimMails(ctx, 10)
	if err != nil || len(mails) != 1 {
		t.Fatalf("ClaimMails: got %d mails, %v; want 1", len(mails), err)
	}
	if mails[0].FirmName != name || mails[0].FromName != from {
		t.Errorf("queued mail: firm name %q, sender name %q; want %q, %q", mails[0].FirmName, mails[0].FromName, name, from)
	}

	t.Run("the firm's locale is the default", func(t *testing.T) {
		de, err := d.CreateCollect(ctx, client.ID, db.CollectCreate{WorkspaceID: ws, Title: "April",
			Items: []db.CollectItemCreate{{Title: "Bank statement", Required: true}}})
		if err != nil || de.Locale != "de" {
			t.Errorf("collect without a locale: got %+v, %v; want locale de", de, err)
		}
		en, err := d.CreateCollect(ctx, client.ID, db.CollectCreate{WorkspaceID: ws, Title: "May", Locale: "en",
			Items: []db.CollectItemCreate{{Title: "Bank statement", Required: true}}})
		if err != nil || en.Locale != "en" {
			t.Errorf("collect in en: got %+v, %v; want locale en", en, err)
		}
		if _, err := d.InviteClientUser(ctx, client.ID, db.ClientUserInvite{Email: "clara@client.example", Role: "user",
			Mail: &db.Invitation{}}); err != nil {
			t.Fatalf("InviteClientUser: got %v, want nil", err)
		}
		mails, err := d.ClaimMails(ctx, 10)
		if err != nil || len(mails) != 1 || mails[0].Locale != "de" {
			t.Errorf("invitation without a locale: got %d mails, %v; want one in de", len(mails), err)
		}
	})

	t.Run("null sender name is the firm's name", func(t *testing.T) {
		got, err := d.UpdateFirm(ctx, firm.ID, db.FirmUpdate{MailFromName: null[string]()})
		if err != nil || got.MailFromName != nil || got.Name != name {
			t.Fatalf("UpdateFirm(mailFromName: null): got %+v, %v", got, err)
		}
		if _, err := d.InviteClientUser(ctx, client.ID, db.ClientUserInvite{Email: "dora@client.example", Role: "user",
			Mail: &db.Invitation{Locale: "en"}}); err != nil {
			t.Fatalf("InviteClientUser: got %v, want nil", err)
		}
		mails, err := d.ClaimMails(ctx, 10)
		if err != nil || len(mails) != 1 || mails[0].FromName != name || mails[0].Locale != "en" {
			t.Errorf("mail after clearing the sender name: got %+v, %v; want sender %q", mails, err, name)
		}
	})

	t.Run("refused", func(t *testing.T) {
		for _, u := range []db.FirmUpdate{
			{Name: null[string]()},
			{Locale: null[string]()},
			{Locale: val("fr")},
		} {
			_, err := d.UpdateFirm(ctx, firm.ID, u)
			assertCode(t, err, db.EINVALID)
		}
		_, err := d.UpdateFirm(ctx, db.NewID(), db.FirmUpdate{Name: val("x")})
		assertCode(t, err, db.ENOTFOUND)
		_, err = d.GetFirm(ctx, db.NewID())
		assertCode(t, err, db.ENOTFOUND)
	})
}
