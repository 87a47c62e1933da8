package db_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"acctapi/db"
)

// encodeEvent writes an event with its record as the store has it: the
// store's tests check which events are written, not the API's form of them.
func encodeEvent(e db.Event) ([]byte, error) {
	return json.Marshal(map[string]any{"id": e.ID, "type": e.Type, "createdAt": e.CreatedAt,
		"clientId": e.ClientID, "data": e.Record, "changes": e.Changes})
}

// whEvent is an outbox row with its payload decoded.
type whEvent struct {
	Type     string
	ClientID *string
	Changes  []string
	To       []string // the subscriptions it is delivered to
}

// whEvents reads the outbox in order, with each event's deliveries.
func whEvents(t *testing.T, store *db.DB) []whEvent {
	t.Helper()
	_, read := store.Handles()
	rows, err := read.Query(`SELECT e.payload, (SELECT json_group_array(webhook_id) FROM
		(SELECT webhook_id FROM webhook_deliveries WHERE event_seq = e.seq ORDER BY webhook_id))
		FROM webhook_events e ORDER BY e.seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var events []whEvent
	for rows.Next() {
		var payload, to string
		if err := rows.Scan(&payload, &to); err != nil {
			t.Fatal(err)
		}
		var p struct {
			ID, Type, CreatedAt string
			ClientID            *string
			Data                json.RawMessage
			Changes             []string
		}
		if err := json.Unmarshal([]byte(payload), &p); err != nil || p.ID == "" || p.CreatedAt == "" || len(p.Data) == 0 {
			t.Fatalf("payload %s (%v): want id, createdAt and data", payload, err)
		}
		e := whEvent{Type: p.Type, ClientID: p.ClientID, Changes: p.Changes}
		if err := json.Unmarshal([]byte(to), &e.To); err != nil {
			t.Fatal(err)
		}
		events = append(events, e)
	}
	return events
}

func TestWebhookEvents(t *testing.T) {
	ctx := context.Background()
	clock := newClock()
	store := mustOpenDBWith(t, db.Options{Now: clock.Now, EncodeEvent: encodeEvent})
	firm := mustCreateFirm(t, store, "Firm")
	other := mustCreateFirm(t, store, "Other firm")
	client := mustCreateClient(t, store, firm.ID, "Client")
	second := mustCreateClient(t, store, firm.ID, "Second")
	ws := mustCreateWorkspace(t, store, client.ID, "Books")

	if _, err := store.CreateTask(ctx, client.ID, db.TaskCreate{WorkspaceID: ws, Title: "before any subscription"}); err != nil {
		t.Fatal(err)
	}
	if got := whEvents(t, store); len(got) != 0 {
		t.Fatalf("events with no subscription: %+v, want none", got)
	}

	all, err := store.CreateWebhook(ctx, firm.ID, db.WebhookCreate{URL: "https://a.example/hook", Events: []string{"*"}, Secret: "whsec_a"})
	if err != nil {
		t.Fatal(err)
	}
	tasksOfClient, err := store.CreateWebhook(ctx, firm.ID, db.WebhookCreate{URL: "https://b.example/hook",
		Events: []string{db.EventTaskCreated, db.EventTaskUpdated}, ClientID: &client.ID, Secret: "whsec_b"})
	if err != nil {
		t.Fatal(err)
	}
	ofSecond, err := store.CreateWebhook(ctx, firm.ID, db.WebhookCreate{URL: "https://c.example/hook", Events: []string{"*"}, ClientID: &second.ID, Secret: "whsec_c"})
	if err != nil {
		t.Fatal(err)
	}
	disabled, err := store.CreateWebhook(ctx, firm.ID, db.WebhookCreate{URL: "https://d.example/hook", Events: []string{"*"}, Secret: "whsec_d"})
	if err != nil {
		t.Fatal(err)
	}
	no := false
	if _, err := store.UpdateWebhook(ctx, firm.ID, disabled.ID, db.WebhookUpdate{Enabled: db.Update[bool]{Set: true, Value: &no}}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateWebhook(ctx, other.ID, db.WebhookCreate{URL: "https://e.example/hook", Events: []string{"*"}, Secret: "whsec_e"}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateWebhook(ctx, other.ID, db.WebhookCreate{URL: "https://e.example/hook", Events: []string{"*"},
		ClientID: &client.ID, Secret: "whsec_e"}); db.ErrorCode(err) != db.ENOTFOUND {
		t.Fatalf("a subscription of another firm's client: %v, want ENOTFOUND", err)
	}

	// Every change the API makes, once each.
	title := "Q4"
	task, err := store.CreateTask(ctx, client.ID, db.TaskCreate{WorkspaceID: ws, Title: "Pay VAT"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.UpdateTask(ctx, client.ID, task.ID, db.TaskUpdate{Title: db.Update[string]{Set: true, Value: &title}}); err != nil {
		t.Fatal(err)
	}
	file, err := store.CreateFile(ctx, client.ID, db.FileCreate{ID: db.NewID(), WorkspaceID: ws, Name: "r.pdf",
		MimeType: "application/pdf", Size: 1, SHA256: make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	fileName := "receipt.pdf"
	if _, err := store.UpdateFile(ctx, client.ID, file.ID, db.FileUpdate{Name: db.Update[string]{Set: true, Value: &fileName}}); err != nil {
		t.Fatal(err)
	}
	jobs, err := store.ClaimAnalyses(ctx, db.LaneFast, 1)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("ClaimAnalyses: %v, %v", jobs, err)
	}
	if _, ok, err := store.FinishAnalysis(ctx, jobs[0], db.AnalysisResult{Status: db.AnalysisDone}); err != nil || !ok {
		t.Fatalf("FinishAnalysis: %v, %v", ok, err)
	}
	workspace, err := store.CreateWorkspace(ctx, client.ID, "Payroll")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.RenameWorkspace(ctx, client.ID, workspace.ID, "Wages"); err != nil {
		t.Fatal(err)
	}
	user, err := store.InviteClientUser(ctx, client.ID, db.ClientUserInvite{Email: "a@client.example", Role: "user"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.SetClientUserRole(ctx, client.ID, user.ID, "admin"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.AddMember(ctx, client.ID, workspace.ID, user.ID); err != nil {
		t.Fatal(err)
	}
	if err := store.RemoveMember(ctx, client.ID, workspace.ID, user.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := store.DeleteTask(ctx, client.ID, task.ID); err != nil {
		t.Fatal(err)
	}
	name := "Second client, renamed"
	if _, err := store.UpdateClient(ctx, firm.ID, second.ID, db.ClientUpdate{Name: db.Update[string]{Set: true, Value: &name}}); err != nil {
		t.Fatal(err)
	}
	third, err := store.CreateClient(ctx, firm.ID, db.ClientCreate{Name: "Third", Type: db.ClientLegalPerson})
	if err != nil {
		t.Fatal(err)
	}
	accountant, err := store.InviteAccountantUser(ctx, firm.ID, db.AccountantUserInvite{Email: "b@firm.example", Role: db.RoleRef{Name: "user"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.SetAccountantUserRole(ctx, firm.ID, accountant.ID, db.RoleRef{Name: "admin"}); err != nil {
		t.Fatal(err)
	}
	collect, err := store.CreateCollect(ctx, client.ID, db.CollectCreate{WorkspaceID: ws, Title: "March",
		Items: []db.CollectItemCreate{{Title: "Bank statement", Required: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.UpdateCollect(ctx, client.ID, collect.ID, db.CollectUpdate{Title: db.Update[string]{Set: true, Value: &title}}); err != nil {
		t.Fatal(err)
	}
	token := hash("collect token")
	if _, err := store.CreateCollectSession(ctx, client.ID, collect.ID, db.CollectSessionCreate{TokenHash: token,
		ExpiresAt: clock.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.ReceiveCollectFile(ctx, token, collect.Items[0].ID, db.FileCreate{ID: db.NewID(), Name: "s.pdf",
		MimeType: "application/pdf", Size: 1, SHA256: make([]byte, 32)}, db.DefaultCollectBudget); err != nil {
		t.Fatal(err)
	}
	wrong, err := store.ReceiveCollectFile(ctx, token, collect.Items[0].ID, db.FileCreate{ID: db.NewID(), Name: "wrong.pdf",
		MimeType: "application/pdf", Size: 1, SHA256: make([]byte, 32)}, db.DefaultCollectBudget)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.RemoveCollectFile(ctx, token, collect.Items[0].ID, wrong.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := store.SubmitCollect(ctx, token); err != nil {
		t.Fatal(err)
	}
	firmName := "Renamed firm"
	if _, err := store.UpdateFirm(ctx, firm.ID, db.FirmUpdate{Name: db.Update[string]{Set: true, Value: &firmName}}); err != nil {
		t.Fatal(err)
	}
	statement, err := store.ImportStatement(ctx, client.ID, db.StatementImport{Format: "mt940", Account: db.AccountImport{Ref: "DE89370400440532013000"},
		From: "2026-03-01", To: "2026-03-31", Currency: "EUR", Entries: []db.EntryImport{{BookingDate: "2026-03-12", Amount: -4999000, Currency: "EUR"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	txs, err := store.ListTransactions(ctx, client.ID, db.TransactionFilter{StatementID: statement.ID}, db.PageRequest{Limit: 1, Sort: "bookingDate"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.UpdateTransaction(ctx, client.ID, txs.Items[0].ID, db.TransactionUpdate{
		FileIDs: db.Update[[]string]{Set: true, Value: &[]string{wrong.ID}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.PutLedgerSettings(ctx, client.ID, db.LedgerSettings{Chart: ptr(db.ChartSKR03), ConsultantNumber: ptr(1001),
		ClientNumber: ptr(1), FiscalYearStart: "01-01", AccountLength: 4}); err != nil {
		t.Fatal(err)
	}
	export, err := store.CreateExport(ctx, client.ID, db.ExportCreate{Format: db.ExportDATEV,
		From: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 3, 31, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.FinishExport(ctx, export, db.ExportResult{}); err != nil {
		t.Fatal(err)
	}
	// A write that fails writes no event.
	if _, err := store.CreateTask(ctx, client.ID, db.TaskCreate{WorkspaceID: "cnosuchworkspace000000000", Title: "x"}); err == nil {
		t.Fatal("CreateTask in a missing workspace succeeded")
	}

	sorted := func(ids ...string) []string { slices.Sort(ids); return ids }
	want := []whEvent{
		{Type: db.EventTaskCreated, ClientID: &client.ID, To: sorted(all.ID, tasksOfClient.ID)},
		{Type: db.EventTaskUpdated, ClientID: &client.ID, Changes: []string{"Title"}, To: sorted(all.ID, tasksOfClient.ID)},
		{Type: db.EventFileCreated, ClientID: &client.ID, To: []string{all.ID}},
		{Type: db.EventFileUpdated, ClientID: &client.ID, Changes: []string{"Name"}, To: []string{all.ID}},
		{Type: db.EventFileAnalyzed, ClientID: &client.ID, To: []string{all.ID}},
		{Type: db.EventWorkspaceCreated, ClientID: &client.ID, To: []string{all.ID}},
		{Type: db.EventWorkspaceUpdated, ClientID: &client.ID, Changes: []string{"Name"}, To: []string{all.ID}},
		{Type: db.EventUserInvited, ClientID: &client.ID, To: []string{all.ID}},
		{Type: db.EventUserUpdated, ClientID: &client.ID, Changes: []string{"Role"}, To: []string{all.ID}},
		{Type: db.EventWorkspaceMemberAdded, ClientID: &client.ID, To: []string{all.ID}},
		{Type: db.EventWorkspaceMemberRemoved, ClientID: &client.ID, To: []string{all.ID}},
		{Type: db.EventTaskDeleted, ClientID: &client.ID, To: []string{all.ID}},
		{Type: db.EventClientUpdated, ClientID: &second.ID, Changes: []string{"Name"}, To: sorted(all.ID, ofSecond.ID)},
		{Type: db.EventClientCreated, ClientID: &third.ID, To: []string{all.ID}},
		{Type: db.EventAccountantUserInvited, To: []string{all.ID}},
		{Type: db.EventAccountantUserUpdated, Changes: []string{"Role"}, To: []string{all.ID}},
		{Type: db.EventCollectCreated, ClientID: &client.ID, To: []string{all.ID}},
		{Type: db.EventCollectUpdated, ClientID: &client.ID, Changes: []string{"Title"}, To: []string{all.ID}},
		{Type: db.EventFileCreated, ClientID: &client.ID, To: []string{all.ID}},
		{Type: db.EventCollectItemReceived, ClientID: &client.ID, To: []string{all.ID}},
		{Type: db.EventFileCreated, ClientID: &client.ID, To: []string{all.ID}},
		{Type: db.EventCollectItemReceived, ClientID: &client.ID, To: []string{all.ID}},
		{Type: db.EventCollectItemFileRemoved, ClientID: &client.ID, To: []string{all.ID}},
		{Type: db.EventCollectSubmitted, ClientID: &client.ID, To: []string{all.ID}},
		{Type: db.EventFirmUpdated, Changes: []string{"Name"}, To: []string{all.ID}},
		{Type: db.EventBankStatementImported, ClientID: &client.ID, To: []string{all.ID}},
		{Type: db.EventTransactionMatched, ClientID: &client.ID, To: []string{all.ID}},
		{Type: db.EventExportCompleted, ClientID: &client.ID, To: []string{all.ID}},
	}
	got := whEvents(t, store)
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Type != w.Type || (g.ClientID == nil) != (w.ClientID == nil) || g.ClientID != nil && *g.ClientID != *w.ClientID ||
			!slices.Equal(g.Changes, w.Changes) || !slices.Equal(g.To, w.To) {
			t.Errorf("event %d: %+v, want %+v", i, g, w)
		}
	}
	var types []string
	for _, e := range got {
		types = append(types, e.Type)
	}
	for _, typ := range db.EventTypes {
		if !slices.Contains(types, typ) {
			t.Errorf("no %s event", typ)
		}
	}
}

func TestWebhookDeliveries(t *testing.T) {
	ctx := context.Background()
	clock := newClock()
	store := mustOpenDBWith(t, db.Options{Now: clock.Now, EncodeEvent: encodeEvent})
	firm := mustCreateFirm(t, store, "Firm")
	other := mustCreateFirm(t, store, "Other")
	client := mustCreateClient(t, store, firm.ID, "Client")
	ws := mustCreateWorkspace(t, store, client.ID, "Books")
	hook, err := store.CreateWebhook(ctx, firm.ID, db.WebhookCreate{URL: "https://a.example/hook", Events: []string{"*"}, Secret: "whsec_one"})
	if err != nil {
		t.Fatal(err)
	}
	for _, title := range []string{"first", "second", "third"} {
		if _, err := store.CreateTask(ctx, client.ID, db.TaskCreate{WorkspaceID: ws, Title: title}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-store.EventsWritten():
	default:
		t.Fatal("no signal after commits that wrote events")
	}

	head := func() db.DueDelivery {
		t.Helper()
		due, err := store.DueDeliveries(ctx, 10)
		if err != nil || len(due) != 1 {
			t.Fatalf("DueDeliveries: %+v (%v), want the subscription's head alone", due, err)
		}
		return due[0]
	}
	payloadTitle := func(d db.DueDelivery) string {
		var p struct{ Data struct{ Title string } }
		json.Unmarshal(d.Payload, &p)
		return p.Data.Title
	}
	first := head()
	if payloadTitle(first) != "first" || !slices.Equal(first.Secrets, []string{"whsec_one"}) || first.URL != hook.URL {
		t.Fatalf("head %+v, want the first task's event signed with the one secret", first)
	}

	// A failure keeps the head until its retry, and the later events wait.
	retry := clock.Now().Add(5 * time.Second)
	if err := store.RecordAttempt(ctx, first.ID, db.AttemptResult{At: clock.Now(), Duration: time.Second, StatusCode: 500, Error: "status 500", Retry: &retry}); err != nil {
		t.Fatal(err)
	}
	if due, err := store.DueDeliveries(ctx, 10); err != nil || len(due) != 0 {
		t.Fatalf("due before the retry: %+v (%v), want none (order holds)", due, err)
	}
	clock.Advance(5 * time.Second)
	if again := head(); again.ID != first.ID || again.Attempts != 1 {
		t.Fatalf("head after the retry time: %+v, want the first delivery again after 1 attempt", again)
	}
	if err := store.RecordAttempt(ctx, first.ID, db.AttemptResult{At: clock.Now(), Duration: time.Millisecond, StatusCode: 204}); err != nil {
		t.Fatal(err)
	}
	second := head()
	if payloadTitle(second) != "second" {
		t.Fatalf("head after a success: %s, want the second event", payloadTitle(second))
	}
	if err := store.RecordAttempt(ctx, first.ID, db.AttemptResult{At: clock.Now()}); db.ErrorCode(err) != db.ENOTFOUND {
		t.Fatalf("an attempt of a delivery that ended: %v, want ENOTFOUND", err)
	}

	// Exhausted: the delivery fails, the subscription is failing, the next
	// event is due; failing for five days, it is disabled.
	if err := store.RecordAttempt(ctx, second.ID, db.AttemptResult{At: clock.Now(), Error: "timeout"}); err != nil {
		t.Fatal(err)
	}
	if w, _ := store.FindWebhook(ctx, firm.ID, hook.ID); w.Status != db.WebhookFailing || w.FailingSince == nil {
		t.Fatalf("after an exhausted delivery: %+v, want failing", w)
	}
	third := head()
	if payloadTitle(third) != "third" {
		t.Fatalf("head after a failed delivery: %s, want the third event", payloadTitle(third))
	}
	clock.Advance(db.WebhookDisableAfter)
	if err := store.RecordAttempt(ctx, third.ID, db.AttemptResult{At: clock.Now(), Error: "connection refused"}); err != nil {
		t.Fatal(err)
	}
	if w, _ := store.FindWebhook(ctx, firm.ID, hook.ID); w.Status != db.WebhookDisabled {
		t.Fatalf("failing for %v: %s, want disabled", db.WebhookDisableAfter, w.Status)
	}
	if _, err := store.CreateTask(ctx, client.ID, db.TaskCreate{WorkspaceID: ws, Title: "while disabled"}); err != nil {
		t.Fatal(err)
	}
	if due, _ := store.DueDeliveries(ctx, 10); len(due) != 0 {
		t.Fatalf("a disabled subscription has due deliveries %+v", due)
	}

	// Enabled again, with a rotated secret: a retried delivery is signed
	// with both secrets for a day.
	yes := true
	if _, err := store.UpdateWebhook(ctx, firm.ID, hook.ID, db.WebhookUpdate{Enabled: db.Update[bool]{Set: true, Value: &yes}}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.RotateWebhookSecret(ctx, firm.ID, hook.ID, "whsec_two"); err != nil {
		t.Fatal(err)
	}
	retried, err := store.RetryDelivery(ctx, firm.ID, hook.ID, second.ID)
	if err != nil {
		t.Fatal(err)
	}
	if retried.ID != second.ID || retried.Status != db.DeliveryPending || retried.EventType == "" || len(retried.Attempts) == 0 {
		t.Fatalf("RetryDelivery: got %+v, want the delivery pending with its event type and attempts", retried)
	}
	if d := head(); d.ID != second.ID || !slices.Equal(d.Secrets, []string{"whsec_two", "whsec_one"}) {
		t.Fatalf("the retried delivery: %+v, want the second event signed with both secrets", d)
	}
	clock.Advance(db.PreviousSecretLifetime)
	if d := head(); !slices.Equal(d.Secrets, []string{"whsec_two"}) {
		t.Fatalf("a day after the rotation: secrets %v, want the new one alone", d.Secrets)
	}

	page, err := store.ListDeliveries(ctx, firm.ID, hook.ID, db.PageRequest{Limit: 10, Sort: "createdAt"})
	if err != nil {
		t.Fatal(err)
	}
	// The task made while the subscription was disabled has no delivery.
	if len(page.Items) != 3 || page.Total != 3 {
		t.Fatalf("%d deliveries (total %d), want 3", len(page.Items), page.Total)
	}
	// The three were made in the same second of the test's clock: the
	// list orders them by id then, so they are looked up by id.
	listed := map[string]*db.Delivery{}
	for _, d := range page.Items {
		listed[d.ID] = d
	}
	for i, want := range []struct {
		id       string
		status   string
		attempts int
	}{{first.ID, db.DeliverySucceeded, 2}, {second.ID, db.DeliveryPending, 1}, {third.ID, db.DeliveryFailed, 1}} {
		if d := listed[want.id]; d == nil || d.Status != want.status || len(d.Attempts) != want.attempts || d.EventType != db.EventTaskCreated {
			t.Errorf("delivery %d: %+v, want %s after %d attempts", i, d, want.status, want.attempts)
		}
	}
	if a := listed[first.ID].Attempts[0]; a.StatusCode == nil || *a.StatusCode != 500 || a.Error == nil || *a.Error != "status 500" {
		t.Errorf("first attempt %+v, want status 500", a)
	}

	// Another firm reaches none of it.
	for name, err := range map[string]error{
		"find":   func() error { _, err := store.FindWebhook(ctx, other.ID, hook.ID); return err }(),
		"update": func() error { _, err := store.UpdateWebhook(ctx, other.ID, hook.ID, db.WebhookUpdate{}); return err }(),
		"rotate": func() error { _, err := store.RotateWebhookSecret(ctx, other.ID, hook.ID, "whsec_x"); return err }(),
		"list": func() error {
			_, err := store.ListDeliveries(ctx, other.ID, hook.ID, db.PageRequest{Limit: 10, Sort: "createdAt"})
			return err
		}(),
		"retry":  func() error { _, err := store.RetryDelivery(ctx, other.ID, hook.ID, second.ID); return err }(),
		"delete": store.DeleteWebhook(ctx, other.ID, hook.ID),
	} {
		if db.ErrorCode(err) != db.ENOTFOUND {
			t.Errorf("%s by another firm: %v, want ENOTFOUND", name, err)
		}
	}
	if err := store.DeleteWebhook(ctx, firm.ID, hook.ID); err != nil {
		t.Fatal(err)
	}
	_, read := store.Handles()
	var left int
	if err := read.QueryRow(`SELECT count(*) FROM webhook_deliveries`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("deliveries left after the delete: %d (%v)", left, err)
	}
}

func TestPurgeDeliveries(t *testing.T) {
	ctx := context.Background()
	clock := newClock()
	store := mustOpenDBWith(t, db.Options{Now: clock.Now, EncodeEvent: encodeEvent})
	firm := mustCreateFirm(t, store, "Firm")
	client := mustCreateClient(t, store, firm.ID, "Client")
	ws := mustCreateWorkspace(t, store, client.ID, "Books")
	all, err := store.CreateWebhook(ctx, firm.ID, db.WebhookCreate{URL: "https://a.example/hook", Events: []string{"*"}, Secret: "whsec_a"})
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := store.CreateWebhook(ctx, firm.ID, db.WebhookCreate{URL: "https://b.example/hook", Events: []string{db.EventTaskCreated}, Secret: "whsec_b"})
	if err != nil {
		t.Fatal(err)
	}
	_, read := store.Handles()
	counts := func() (deliveries, attempts, events int) {
		t.Helper()
		return count(t, read, `SELECT count(*) FROM webhook_deliveries`), count(t, read, `SELECT count(*) FROM webhook_attempts`),
			count(t, read, `SELECT count(*) FROM webhook_events`)
	}
	// head returns the due delivery of the subscription.
	head := func(webhookID string) db.DueDelivery {
		t.Helper()
		due, err := store.DueDeliveries(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range due {
			if d.WebhookID == webhookID {
				return d
			}
		}
		t.Fatalf("no due delivery of %s in %+v", webhookID, due)
		return db.DueDelivery{}
	}
	record := func(d db.DueDelivery, r db.AttemptResult) {
		t.Helper()
		r.At = clock.Now()
		if err := store.RecordAttempt(ctx, d.ID, r); err != nil {
			t.Fatal(err)
		}
	}

	// Two task events for both subscriptions, a workspace event for the
	// first alone.
	for _, title := range []string{"first", "second"} {
		if _, err := store.CreateTask(ctx, client.ID, db.TaskCreate{WorkspaceID: ws, Title: title}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.CreateWorkspace(ctx, client.ID, "Payroll"); err != nil {
		t.Fatal(err)
	}
	start := clock.Now()
	// The first event: succeeded to one, failed for good to the other.
	record(head(all.ID), db.AttemptResult{StatusCode: 200})
	record(head(tasks.ID), db.AttemptResult{StatusCode: 500, Error: "status 500"})
	// The second: still pending to the first subscription (its retry far
	// off), succeeded to the other 20 days later.
	retry := start.Add(60 * 24 * time.Hour)
	record(head(all.ID), db.AttemptResult{StatusCode: 503, Error: "status 503", Retry: &retry})
	clock.Advance(20 * 24 * time.Hour)
	record(head(tasks.ID), db.AttemptResult{StatusCode: 204})
	if d, a, e := counts(); d != 5 || a != 4 || e != 3 {
		t.Fatalf("before any purge: %d deliveries, %d attempts, %d events, want 5, 4, 3", d, a, e)
	}

	// Nothing ended before the cut-off: nothing goes.
	if n, err := store.PurgeDeliveries(ctx, start); err != nil || n != 0 {
		t.Fatalf("PurgeDeliveries(the first attempts' time): got %d, %v, want 0, nil", n, err)
	}
	if d, a, e := counts(); d != 5 || a != 4 || e != 3 {
		t.Fatalf("after purging nothing: %d deliveries, %d attempts, %d events, want 5, 4, 3", d, a, e)
	}

	// Past the retention of the first event's deliveries: they go with
	// their attempts and their event; the pending one stays, old as it is.
	clock.Advance(10*24*time.Hour + time.Second)
	if n, err := store.PurgeDeliveries(ctx, clock.Now().Add(-db.DeliveryRetention)); err != nil || n != 2 {
		t.Fatalf("PurgeDeliveries(30 days ago): got %d, %v, want 2, nil", n, err)
	}
	if d, a, e := counts(); d != 3 || a != 2 || e != 2 {
		t.Fatalf("after the purge: %d deliveries, %d attempts, %d events, want 3, 2, 2", d, a, e)
	}
	page, err := store.ListDeliveries(ctx, firm.ID, all.ID, db.PageRequest{Limit: 10, Sort: "createdAt"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 2 || page.Items[0].Status != db.DeliveryPending || page.Items[1].Status != db.DeliveryPending {
		t.Fatalf("the first subscription's deliveries after the purge: %+v, want its two pending ones", page.Items)
	}

	// Deleting the first subscription leaves the workspace event with no
	// delivery: the next purge drops it, whatever its age. The second task
	// event keeps its delivery to the other subscription.
	if err := store.DeleteWebhook(ctx, firm.ID, all.ID); err != nil {
		t.Fatal(err)
	}
	if n, err := store.PurgeDeliveries(ctx, clock.Now().Add(-db.DeliveryRetention)); err != nil || n != 0 {
		t.Fatalf("PurgeDeliveries after the delete: got %d, %v, want 0, nil", n, err)
	}
	if d, a, e := counts(); d != 1 || a != 1 || e != 1 {
		t.Fatalf("after the delete and a purge: %d deliveries, %d attempts, %d events, want 1, 1, 1", d, a, e)
	}
	var left string
	if err := read.QueryRow(`SELECT type FROM webhook_events`).Scan(&left); err != nil || left != db.EventTaskCreated {
		t.Fatalf("the event left: %q (%v), want %s", left, err, db.EventTaskCreated)
	}

	// A retry makes an ended delivery pending again: it is kept.
	tpage, err := store.ListDeliveries(ctx, firm.ID, tasks.ID, db.PageRequest{Limit: 10, Sort: "createdAt"})
	if err != nil || len(tpage.Items) != 1 {
		t.Fatalf("the second subscription's deliveries: %+v (%v), want one", tpage, err)
	}
	if _, err := store.RetryDelivery(ctx, firm.ID, tasks.ID, tpage.Items[0].ID); err != nil {
		t.Fatal(err)
	}
	clock.Advance(db.DeliveryRetention + time.Second)
	if n, err := store.PurgeDeliveries(ctx, clock.Now().Add(-db.DeliveryRetention)); err != nil || n != 0 {
		t.Fatalf("PurgeDeliveries of a retried delivery: got %d, %v, want 0, nil", n, err)
	}
	record(head(tasks.ID), db.AttemptResult{StatusCode: 200})
	clock.Advance(db.DeliveryRetention + time.Second)
	if n, err := store.PurgeDeliveries(ctx, clock.Now().Add(-db.DeliveryRetention)); err != nil || n != 1 {
		t.Fatalf("PurgeDeliveries 30 days after the retry succeeded: got %d, %v, want 1, nil", n, err)
	}
	if d, a, e := counts(); d != 0 || a != 0 || e != 0 {
		t.Fatalf("at the end: %d deliveries, %d attempts, %d events, want none", d, a, e)
	}
}

// BenchmarkCreateTaskEvents is the cost events add to a write: none
// subscribed (one indexed look-up), subscribed elsewhere, and one or five
// subscriptions that want the event (the outbox row and a delivery each).
func BenchmarkCreateTaskEvents(b *testing.B) {
	for _, bc := range []struct {
		name         string
		mine, others int
	}{{"no subscription", 0, 0}, {"another client's subscription", 0, 1}, {"1 subscription", 1, 0}, {"5 subscriptions", 5, 0}} {
		b.Run(bc.name, func(b *testing.B) {
			// NORMAL: the cost of the SQL, not of the disk's fsync.
			store := mustOpenDBWith(b, db.Options{EncodeEvent: encodeEvent, Synchronous: "NORMAL"})
			ctx := context.Background()
			firm := mustCreateFirm(b, store, "Firm")
			client := mustCreateClient(b, store, firm.ID, "Client")
			other := mustCreateClient(b, store, firm.ID, "Other")
			ws := mustCreateWorkspace(b, store, client.ID, "Books")
			for i := range bc.mine + bc.others {
				clientID := &client.ID
				if i >= bc.mine {
					clientID = &other.ID
				}
				if _, err := store.CreateWebhook(ctx, firm.ID, db.WebhookCreate{URL: "https://hooks.example.com/", Events: []string{"*"},
					ClientID: clientID, Secret: "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := store.CreateTask(ctx, client.ID, db.TaskCreate{WorkspaceID: ws, Title: "Benchmark task"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkListDeliveries reads a page of 100 deliveries with two attempts
// each, as GET /v1/webhooks/{id}/deliveries?limit=100 does.
func BenchmarkListDeliveries(b *testing.B) {
	store := mustOpenDBWith(b, db.Options{EncodeEvent: encodeEvent, Synchronous: "NORMAL"})
	ctx := context.Background()
	firm := mustCreateFirm(b, store, "Firm")
	client := mustCreateClient(b, store, firm.ID, "Client")
	ws := mustCreateWorkspace(b, store, client.ID, "Books")
	hook, err := store.CreateWebhook(ctx, firm.ID, db.WebhookCreate{URL: "https://hooks.example.com/", Events: []string{"*"},
		Secret: "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="})
	if err != nil {
		b.Fatal(err)
	}
	for range 100 {
		if _, err := store.CreateTask(ctx, client.ID, db.TaskCreate{WorkspaceID: ws, Title: "Benchmark task"}); err != nil {
			b.Fatal(err)
		}
	}
	page, err := store.ListDeliveries(ctx, firm.ID, hook.ID, db.PageRequest{Limit: 100, Sort: "createdAt"})
	if err != nil || len(page.Items) != 100 {
		b.Fatalf("ListDeliveries: %d items (%v), want 100", len(page.Items), err)
	}
	retry := time.Now().Add(time.Hour)
	for _, d := range page.Items {
		for range 2 {
			if err := store.RecordAttempt(ctx, d.ID, db.AttemptResult{At: time.Now(), StatusCode: 500, Error: "status 500", Retry: &retry}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		page, err := store.ListDeliveries(ctx, firm.ID, hook.ID, db.PageRequest{Limit: 100, Sort: "createdAt"})
		if err != nil || len(page.Items) != 100 || len(page.Items[0].Attempts) != 2 {
			b.Fatalf("ListDeliveries: %v", err)
		}
	}
}
