package mail_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"acctapi/db"
	"acctapi/mail"
	"acctapi/mail/mailpit"
)

// clock is a test clock that moves only when told.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fixture is a store with a firm, a client and a workspace, a Mailpit,
// and a sender between them, on a test clock.
type fixture struct {
	t         *testing.T
	ctx       context.Context
	clock     *clock
	store     *db.DB
	pit       *mailpit.Server
	sender    *mail.Sender
	firm      *db.Firm
	client    *db.Client
	workspace *db.Workspace
}

const from = "office@kanzlei.example"

func newFixture(t *testing.T) *fixture {
	t.Helper()
	pit := mailpit.Start(t)
	f := &fixture{t: t, ctx: context.Background(), pit: pit,
		clock: &clock{t: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}}
	store, err := db.Open(t.TempDir()+"/acctapi.db", db.Options{Now: f.clock.Now, MailHost: mail.Domain(from)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if err := store.MigrateUp(); err != nil {
		t.Fatal(err)
	}
	f.store = store
	if f.firm, err = store.CreateFirm(f.ctx, "Kanzlei Müller & Partner"); err != nil {
		t.Fatal(err)
	}
	if f.client, err = store.CreateClient(f.ctx, f.firm.ID, db.ClientCreate{Name: "Bäckerei Schmidt", Type: "legal_person"}); err != nil {
		t.Fatal(err)
	}
	if f.workspace, err = store.CreateWorkspace(f.ctx, f.client.ID, "Buchhaltung 2026"); err != nil {
		t.Fatal(err)
	}
	relay, err := mail.ParseRelay("smtp://" + pit.SMTP + "?insecure=true")
	if err != nil {
		t.Fatal(err)
	}
	f.sender = mail.NewSender(mail.Options{Store: store, Relay: relay, From: from, Now: f.clock.Now})
	return f
}

// collect makes an open collect with a required and an optional item, due
// at due, and a session whose link is mailed to email.
func (f *fixture) collect(locale string, due *time.Time, email string, noReminders bool) (*db.Collect, *db.CollectSession, string) {
	f.t.Helper()
	c, err := f.store.CreateCollect(f.ctx, f.client.ID, db.CollectCreate{WorkspaceID: f.workspace.ID,
		Title: "Unterlagen März", DueDate: due, Locale: locale,
		Items: []db.CollectItemCreate{{Title: "Kontoauszug", Required: true}, {Title: "Quittungen"}}})
	if err != nil {
		f.t.Fatal(err)
	}
	token := db.NewID() + db.NewID()
	hash := sha256.Sum256([]byte(token))
	link := "https://acct.example/collect/" + token
	s, err := f.store.CreateCollectSession(f.ctx, f.client.ID, c.ID, db.CollectSessionCreate{
		ExpiresAt: f.clock.Now().Add(30 * 24 * time.Hour), TokenHash: hash[:],
		Mail: &db.SessionMail{Email: email, NoReminders: noReminders, Link: link}})
	if err != nil {
		f.t.Fatal(err)
	}
	return c, s, link
}

// sendDue runs the sender once and returns how many attempts it made.
func (f *fixture) sendDue() int {
	f.t.Helper()
	n, err := f.sender.RunDue(f.ctx)
	if err != nil {
		f.t.Fatalf("RunDue: %v", err)
	}
	return n
}

var messageID = regexp.MustCompile(`^<[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}@kanzlei\.example>$`)

// checkHeaders checks what every mail carries: the firm's name beside the
// sender address, a Message-ID <uuid@host>, both parts, no image.
func (f *fixture) checkHeaders(m mailpit.Message) {
	f.t.Helper()
	if m.From.Name != f.firm.Name || m.From.Address != from {
		f.t.Errorf("%s: From %+v, want %q <%s>", m.Subject, m.From, f.firm.Name, from)
	}
	h := f.pit.Headers(f.t, m.ID)
	if ids := h["Message-Id"]; len(ids) != 1 || !messageID.MatchString(ids[0]) {
		f.t.Errorf("%s: Message-ID %q, want <uuid@kanzlei.example>", m.Subject, ids)
	}
	if ct := strings.Join(h["Content-Type"], ""); !strings.HasPrefix(ct, "multipart/alternative") {
		f.t.Errorf("%s: Content-Type %q, want multipart/alternative", m.Subject, ct)
	}
	if strings.TrimSpace(m.Text) == "" || !strings.Contains(m.HTML, "</html>") {
		f.t.Errorf("%s: want a text and an HTML part, got text %d bytes, HTML %d bytes", m.Subject, len(m.Text), len(m.HTML))
	}
	if strings.Contains(strings.ToLower(m.HTML), "<img") {
		f.t.Errorf("%s: the HTML part has an image; mails carry no pixels", m.Subject)
	}
}

func only(t *testing.T, msgs []mailpit.Message, to string) mailpit.Message {
	t.Helper()
	var found []mailpit.Message
	for _, m := range msgs {
		if len(m.To) == 1 && m.To[0].Address == to {
			found = append(found, m)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d mails to %s, want exactly 1", len(found), to)
	}
	return found[0]
}

// TestEveryMailArrives sends one mail of each kind, in both languages, and
// reads each from the relay once: recipient, language, link, headers.
func TestEveryMailArrives(t *testing.T) {
	f := newFixture(t)
	due := f.clock.Now().Add(10 * 24 * time.Hour)
	_, _, linkEN := f.collect("en", &due, "anna@client.example", false)
	_, _, linkDE := f.collect("de", &due, "bernd@client.example", false)
	first := "Clara"
	if _, err := f.store.InviteClientUser(f.ctx, f.client.ID, db.ClientUserInvite{Email: "clara@client.example",
		Role: "user", FirstName: &first, WorkspaceIDs: []string{f.workspace.ID}, Mail: &db.Invitation{Locale: "de"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.InviteAccountantUser(f.ctx, f.firm.ID, db.AccountantUserInvite{Email: "dora@kanzlei.example",
		Role: db.RoleRef{Name: "user"}, Mail: &db.Invitation{Locale: "en"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.InviteClientUser(f.ctx, f.client.ID, db.ClientUserInvite{Email: "quiet@client.example",
		Role: "user"}); err != nil {
		t.Fatal(err)
	}
	if n := f.sendDue(); n != 4 {
		t.Errorf("RunDue: %d attempts, want 4 (2 links, 2 invitations; no reminder yet)", n)
	}
	if n := f.sendDue(); n != 0 {
		t.Errorf("RunDue again: %d attempts, want 0", n)
	}
	msgs := f.pit.WaitFor(t, 4, 5*time.Second)
	if len(msgs) != 4 {
		t.Fatalf("%d mails arrived, want 4", len(msgs))
	}
	for _, tc := range []struct {
		to, subject string
		body        []string
	}{
		{"anna@client.example", "Kanzlei Müller & Partner asks for documents: Unterlagen März",
			[]string{linkEN, "Kontoauszug", "Quittungen", "(optional)", "12 March 2026", "Bäckerei Schmidt"}},
		{"bernd@client.example", "Kanzlei Müller & Partner bittet um Unterlagen: Unterlagen März",
			[]string{linkDE, "Kontoauszug", "12. März 2026", "Bäckerei Schmidt"}},
		{"clara@client.example", "Kanzlei Müller & Partner lädt Sie zu Bäckerei Schmidt ein",
			[]string{"Guten Tag Clara", "Buchhaltung 2026", "Bäckerei Schmidt"}},
		{"dora@kanzlei.example", "You are invited to Kanzlei Müller & Partner",
			[]string{"invited you to join the firm"}},
	} {
		m := only(t, msgs, tc.to)
		if m.Subject != tc.subject {
			t.Errorf("to %s: subject %q, want %q", tc.to, m.Subject, tc.subject)
		}
		for _, want := range tc.body {
			if !strings.Contains(m.Text, want) || !strings.Contains(m.HTML, strings.ReplaceAll(want, "&", "&amp;")) {
				t.Errorf("to %s: %q missing from the text or the HTML part", tc.to, want)
			}
		}
		f.checkHeaders(m)
	}
	ids := map[string]bool{}
	for _, m := range msgs {
		ids[m.MessageID] = true
	}
	if len(ids) != 4 {
		t.Errorf("%d distinct Message-IDs, want 4", len(ids))
	}
}

// TestRefusedTwiceThenAccepted has the relay refuse a link twice (451, for
// now): the mail waits for each retry time on the clock, shows the relay's
// answer in the session list meanwhile, and arrives once on the third
// attempt with the Message-ID it had.
func TestRefusedTwiceThenAccepted(t *testing.T) {
	f := newFixture(t)
	c, s, link := f.collect("en", nil, "anna@client.example", false)
	f.pit.SetRefusal(t, 451)
	if n := f.sendDue(); n != 1 {
		t.Fatalf("first round: %d attempts, want 1", n)
	}
	st := f.sessionMail(c.ID, s.ID)
	if st.Status != db.MailQueued || st.Error == nil || !strings.HasPrefix(*st.Error, "451") {
		t.Fatalf("after a refusal: mail state %+v, want queued with the relay's 451", st)
	}
	if n := f.sendDue(); n != 0 {
		t.Fatalf("before the retry time: %d attempts, want 0", n)
	}
	f.clock.Add(mail.Schedule()[0] * 12 / 10)
	if n := f.sendDue(); n != 1 {
		t.Fatalf("second round: %d attempts, want 1", n)
	}
	f.pit.SetRefusal(t, 0)
	f.clock.Add(mail.Schedule()[1] * 12 / 10)
	if n := f.sendDue(); n != 1 {
		t.Fatalf("third round: %d attempts, want 1", n)
	}
	msgs := f.pit.WaitFor(t, 1, 5*time.Second)
	if len(msgs) != 1 || !strings.Contains(msgs[0].Text, link) {
		t.Fatalf("got %d mails, want the link once", len(msgs))
	}
	if st := f.sessionMail(c.ID, s.ID); st.Status != db.MailSent || st.SentAt == nil {
		t.Errorf("after the third attempt: mail state %+v, want sent", st)
	}
}

// TestRefusedForGood: a 5xx ends the mail at once, failed with the answer.
func TestRefusedForGood(t *testing.T) {
	f := newFixture(t)
	c, s, _ := f.collect("en", nil, "nobody@client.example", true)
	f.pit.SetRefusal(t, 550)
	f.sendDue()
	f.clock.Add(48 * time.Hour)
	if n := f.sendDue(); n != 0 {
		t.Errorf("after a 550: %d more attempts, want 0", n)
	}
	st := f.sessionMail(c.ID, s.ID)
	if st.Status != db.MailFailed || st.Error == nil || !strings.HasPrefix(*st.Error, "550") {
		t.Errorf("mail state %+v, want failed with the relay's 550", st)
	}
}

func (f *fixture) sessionMail(collectID, sessionID string) db.SessionMailState {
	f.t.Helper()
	page, err := f.store.ListCollectSessions(f.ctx, f.client.ID, collectID, db.PageRequest{Limit: 100, Sort: "createdAt", Desc: true})
	if err != nil {
		f.t.Fatal(err)
	}
	for _, s := range page.Items {
		if s.ID == sessionID && s.Mail != nil {
			return *s.Mail
		}
	}
	f.t.Fatalf("session %s has no mail state", sessionID)
	return db.SessionMailState{}
}

// TestReminders walks the clock to a collect's due date: the reminders go
// out 3 days and 1 day before it, once each, in the collect's language,
// naming what is missing; none after the collect is submitted or closed,
// none when turned off.
func TestReminders(t *testing.T) {
	f := newFixture(t)
	due := f.clock.Now().Add(10 * 24 * time.Hour)
	_, _, link := f.collect("de", &due, "anna@client.example", false)
	closed, _, _ := f.collect("en", &due, "closed@client.example", false)
	f.collect("en", &due, "off@client.example", true)
	if n := f.sendDue(); n != 3 {
		t.Fatalf("the links: %d attempts, want 3", n)
	}
	if _, err := f.store.UpdateCollect(f.ctx, f.client.ID, closed.ID, db.CollectUpdate{
		Status: db.Update[string]{Set: true, Value: ptr(db.CollectClosed)}}); err != nil {
		t.Fatal(err)
	}
	// Reopening does not bring the cancelled reminders back.
	if _, err := f.store.UpdateCollect(f.ctx, f.client.ID, closed.ID, db.CollectUpdate{
		Status: db.Update[string]{Set: true, Value: ptr(db.CollectOpen)}}); err != nil {
		t.Fatal(err)
	}
	f.clock.Add(7*24*time.Hour - time.Minute)
	if n := f.sendDue(); n != 0 {
		t.Fatalf("a minute before 3 days before: %d attempts, want 0", n)
	}
	f.clock.Add(time.Minute)
	if n := f.sendDue(); n != 1 {
		t.Fatalf("3 days before: %d attempts, want 1", n)
	}
	f.clock.Add(time.Hour)
	if n := f.sendDue(); n != 0 {
		t.Fatalf("an hour later: %d attempts, want 0 (once each)", n)
	}
	f.clock.Add(2*24*time.Hour - time.Hour)
	if n := f.sendDue(); n != 1 {
		t.Fatalf("1 day before: %d attempts, want 1", n)
	}
	f.clock.Add(2 * 24 * time.Hour)
	if n := f.sendDue(); n != 0 {
		t.Fatalf("after the due date: %d attempts, want 0", n)
	}
	msgs := f.pit.WaitFor(t, 5, 5*time.Second)
	var reminders []mailpit.Message
	for _, m := range msgs {
		if strings.HasPrefix(m.Subject, "Erinnerung") {
			reminders = append(reminders, m)
		}
	}
	if len(msgs) != 5 || len(reminders) != 2 {
		t.Fatalf("%d mails with %d reminders, want 3 links and 2 reminders", len(msgs), len(reminders))
	}
	for _, m := range reminders {
		if m.To[0].Address != "anna@client.example" || m.Subject != "Erinnerung: Unterlagen März ist am 12. März 2026 fällig" {
			t.Errorf("reminder to %v: %q", m.To, m.Subject)
		}
		if !strings.Contains(m.Text, link) || !strings.Contains(m.Text, "- Kontoauszug") || strings.Contains(m.Text, "Quittungen") {
			t.Errorf("reminder: want the link and the missing required item only:\n%s", m.Text)
		}
		f.checkHeaders(m)
	}
	if reminders[0].MessageID == reminders[1].MessageID {
		t.Error("the two reminders share a Message-ID")
	}
}

// TestNoReminderAfterSubmit: a collect submitted before its reminder time
// gets none, even when it is reopened.
func TestNoReminderAfterSubmit(t *testing.T) {
	f := newFixture(t)
	due := f.clock.Now().Add(5 * 24 * time.Hour)
	c, _, link := f.collect("en", &due, "anna@client.example", false)
	f.sendDue()
	token := link[strings.LastIndexByte(link, '/')+1:]
	hash := sha256.Sum256([]byte(token))
	if _, err := f.store.ReceiveCollectFile(f.ctx, hash[:], c.Items[0].ID, db.FileCreate{ID: db.NewID(), Name: "a.pdf",
		MimeType: "application/pdf", Size: 3, SHA256: make([]byte, 32)}, db.DefaultCollectBudget); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.SubmitCollect(f.ctx, hash[:]); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.UpdateCollect(f.ctx, f.client.ID, c.ID, db.CollectUpdate{
		Status: db.Update[string]{Set: true, Value: ptr(db.CollectOpen)}}); err != nil {
		t.Fatal(err)
	}
	for range 6 {
		f.clock.Add(24 * time.Hour)
		if n := f.sendDue(); n != 0 {
			t.Fatalf("%v: %d attempts after submit, want 0", f.clock.Now(), n)
		}
	}
}

// TestClaimReleasedAfterCrash: a mail claimed by a sender that died (no
// mark) is sent by the next Run, once, with its Message-ID.
func TestClaimReleasedAfterCrash(t *testing.T) {
	f := newFixture(t)
	if _, err := f.store.InviteAccountantUser(f.ctx, f.firm.ID, db.AccountantUserInvite{Email: "dora@kanzlei.example",
		Role: db.RoleRef{Name: "user"}, Mail: &db.Invitation{Locale: "en"}}); err != nil {
		t.Fatal(err)
	}
	claimed, err := f.store.ClaimMails(f.ctx, 10)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("ClaimMails: %d, %v", len(claimed), err)
	}
	if n := f.sendDue(); n != 0 {
		t.Fatalf("a claimed mail: %d attempts, want 0 until released", n)
	}
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan error)
	go func() { done <- f.sender.Run(ctx) }()
	msgs := f.pit.WaitFor(t, 1, 10*time.Second)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || "<"+msgs[0].MessageID+">" != claimed[0].MessageID {
		t.Fatalf("got %d mails (first Message-ID %q), want 1 with %s", len(msgs), firstID(msgs), claimed[0].MessageID)
	}
	if claimed[0].Attempt != 1 {
		t.Errorf("the claim counted attempt %d, want 1", claimed[0].Attempt)
	}
}

func firstID(msgs []mailpit.Message) string {
	if len(msgs) == 0 {
		return ""
	}
	return msgs[0].MessageID
}

func ptr[T any](v T) *T { return &v }

// TestClaimReleasedAfterStoreFailure: the store fails to record a mail as
// sent while Run serves; once it works again, Run releases the claim it
// left and the mail is sent again with its Message-ID and recorded, with
// no restart.
func TestClaimReleasedAfterStoreFailure(t *testing.T) {
	f := newFixture(t)
	raw, err := sql.Open("sqlite", "file:"+f.store.Path()+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	// A real failure of the store's write, for as long as the trigger stands.
	if _, err := raw.Exec(`CREATE TRIGGER fail_sent BEFORE UPDATE OF status ON mail_outbox
		WHEN NEW.status = 'sent' BEGIN SELECT RAISE(ABORT, 'the disk is gone'); END`); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.InviteAccountantUser(f.ctx, f.firm.ID, db.AccountantUserInvite{Email: "erik@kanzlei.example",
		Role: db.RoleRef{Name: "user"}, Mail: &db.Invitation{Locale: "en"}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan error)
	go func() { done <- f.sender.Run(ctx) }()
	first := f.pit.WaitFor(t, 1, 10*time.Second)
	if _, err := raw.Exec(`DROP TRIGGER fail_sent`); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		stats, err := f.store.MailOutbox(f.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if stats.Pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the mail is still pending (%d) after the store works again: its claim was never released", stats.Pending)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	msgs := f.pit.WaitFor(t, 2, 10*time.Second)
	for _, m := range msgs {
		if m.MessageID != first[0].MessageID {
			t.Errorf("Message-ID %q, want every attempt's to be %q", m.MessageID, first[0].MessageID)
		}
	}
}
