package handlers

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"acctapi/db"
	"acctapi/webhooks"
)

// End-to-end tests of webhooks: changes made through the API reach real
// TLS receivers through the real dispatcher, on the test's clock.

// whReceived is one request a receiver got.
type whReceived struct {
	id, timestamp, signature string
	body                     []byte
}

// whReceiver is an HTTPS endpoint that records what it gets and answers
// with answer(n) for its nth request (1-based); 204 when answer is nil.
type whReceiver struct {
	server *httptest.Server
	answer func(n int) int
	mu     sync.Mutex
	got    []whReceived
}

func newWHReceiver(t *testing.T, answer func(n int) int) *whReceiver {
	r := &whReceiver{answer: answer}
	r.server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, whReceived{req.Header.Get("webhook-id"), req.Header.Get("webhook-timestamp"), req.Header.Get("webhook-signature"), body})
		n := len(r.got)
		r.mu.Unlock()
		status := http.StatusNoContent
		if r.answer != nil {
			status = r.answer(n)
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(r.server.Close)
	return r
}

func (r *whReceiver) received() []whReceived {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// newWHDispatcher returns a dispatcher of the test API's store on its clock,
// trusting the test receivers' certificate; allowPrivate as serve's flag.
func newWHDispatcher(api *testAPI, r *whReceiver, allowPrivate bool) *webhooks.Dispatcher {
	tlsConfig := r.server.Client().Transport.(*http.Transport).TLSClientConfig
	return webhooks.NewDispatcher(webhooks.DispatcherOptions{
		Store:  api.store,
		Client: webhooks.NewClient(webhooks.ClientOptions{AllowPrivate: allowPrivate, TLSConfig: tlsConfig}),
		Now:    api.clock.Now,
	})
}

func whRunDue(t *testing.T, d *webhooks.Dispatcher) int {
	t.Helper()
	n, err := d.RunDue(context.Background())
	if err != nil {
		t.Fatalf("RunDue: %v", err)
	}
	return n
}

// whEvent is an event as a receiver decodes it.
type whEvent struct {
	ID        string         `json:"id"`
	Type      string         `json:"type"`
	CreatedAt string         `json:"createdAt"`
	ClientID  *string        `json:"clientId"`
	Data      map[string]any `json:"data"`
	Changes   []string       `json:"changes"`
}

// whVerify checks a received request's signature with secret and decodes
// its event.
func whVerify(t *testing.T, got whReceived, secret string) whEvent {
	t.Helper()
	ts, err := strconv.ParseInt(got.timestamp, 10, 64)
	if err != nil {
		t.Fatalf("webhook-timestamp %q: %v", got.timestamp, err)
	}
	// Checked as at the moment it was sent: a retry's earlier attempts are
	// hours old by the end of a test.
	if err := webhooks.Verify(secret, got.id, ts, got.body, got.signature, time.Unix(ts, 0)); err != nil {
		t.Errorf("event %s: signature %q: %v", got.id, got.signature, err)
	}
	var e whEvent
	if err := json.Unmarshal(got.body, &e); err != nil {
		t.Fatalf("event body %s: %v", got.body, err)
	}
	if e.ID != got.id {
		t.Errorf("webhook-id %q, body id %q: want the same", got.id, e.ID)
	}
	return e
}

// whEventSchemas returns the OpenAPI document's schema of each event type.
func whEventSchemas(t *testing.T) map[string]*openapi3.Schema {
	t.Helper()
	raw, err := openAPIDocument("http://localhost/v1")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*openapi3.Schema{}
	for typ, item := range doc.Webhooks {
		schemas[typ] = item.Post.RequestBody.Value.Content.Get("application/json").Schema.Value
	}
	return schemas
}

// whChange is one change made through the API and the events it must emit.
type whChange struct {
	name   string
	events []string
}

// whMakeEveryChange makes, through the API with the firm's accountant key,
// one change of every kind the API has, in a new client of the firm, and
// returns the changes with the events each must emit, in order, and the
// client.
func whMakeEveryChange(t *testing.T, api *testAPI) ([]whChange, string) {
	t.Helper()
	key := api.accountantKey
	var changes []whChange
	call := func(name string, events []string, req request, status int) map[string]any {
		t.Helper()
		api.clock.Advance(time.Minute)
		req.key = key
		res := api.do(req)
		if res.status != status {
			t.Fatalf("%s: got %d %s, want %d", name, res.status, res.body, status)
		}
		var out map[string]any
		if err := json.Unmarshal(res.body, &out); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		changes = append(changes, whChange{name, events})
		return out
	}
	client := call("create a client", []string{db.EventClientCreated},
		request{method: "POST", path: "/v1/admin/clients", body: map[string]any{"name": "Müller & Söhne GmbH", "type": "legal_person"}}, http.StatusCreated)
	clientID := client["id"].(string)
	call("rename the client", []string{db.EventClientUpdated},
		request{method: "PATCH", path: "/v1/admin/clients/" + clientID, body: map[string]any{"name": "Müller & Söhne AG", "legalName": "Müller & Söhne AG"}}, http.StatusOK)
	accountant := call("invite an accountant user", []string{db.EventAccountantUserInvited},
		request{method: "POST", path: "/v1/admin/users", body: map[string]any{"email": "erika@firm.example", "role": "admin", "firstName": "Erika"}}, http.StatusCreated)
	call("change the accountant user's role", []string{db.EventAccountantUserUpdated},
		request{method: "PATCH", path: "/v1/admin/users/" + accountant["id"].(string), body: map[string]any{"role": "user"}}, http.StatusOK)
	call("rename the firm", []string{db.EventFirmUpdated},
		request{method: "PATCH", path: "/v1/firm", body: map[string]any{"name": "Steuerkanzlei Weber", "locale": "de"}}, http.StatusOK)
	ws := call("create a workspace", []string{db.EventWorkspaceCreated},
		request{method: "POST", path: "/v1/workspaces", clientID: clientID, body: map[string]any{"name": "Bookkeeping 2026"}}, http.StatusCreated)
	wsID := ws["id"].(string)
	call("rename the workspace", []string{db.EventWorkspaceUpdated},
		request{method: "PATCH", path: "/v1/workspaces/" + wsID, clientID: clientID, body: map[string]any{"name": "Bookkeeping FY2026"}}, http.StatusOK)
	user := call("invite a client user into the workspace", []string{db.EventUserInvited, db.EventWorkspaceMemberAdded},
		request{method: "POST", path: "/v1/users", clientID: clientID, body: map[string]any{"email": "max@mueller.example", "role": "user",
			"firstName": "Max", "lastName": "Müller", "workspaceIds": []string{wsID}}}, http.StatusCreated)
	userID := user["id"].(string)
	call("make the client user an admin", []string{db.EventUserUpdated},
		request{method: "PATCH", path: "/v1/users/" + userID, clientID: clientID, body: map[string]any{"role": "admin"}}, http.StatusOK)
	call("remove the user from the workspace", []string{db.EventWorkspaceMemberRemoved},
		request{method: "DELETE", path: "/v1/workspaces/" + wsID + "/members", clientID: clientID, body: map[string]any{"userId": userID}}, http.StatusOK)
	call("add the user to the workspace again", []string{db.EventWorkspaceMemberAdded},
		request{method: "POST", path: "/v1/workspaces/" + wsID + "/members", clientID: clientID, body: map[string]any{"userId": userID}}, http.StatusCreated)
	task := call("create a task", []string{db.EventTaskCreated},
		request{method: "POST", path: "/v1/tasks", clientID: clientID, body: map[string]any{"title": "Upload the March bank statements",
			"workspaceId": wsID, "dueDate": "2026-12-15T00:00:00Z"}}, http.StatusCreated)
	taskID := task["id"].(string)
	call("finish the task", []string{db.EventTaskUpdated},
		request{method: "PATCH", path: "/v1/tasks/" + taskID, clientID: clientID, body: map[string]any{"status": "ACCEPTED", "title": "Upload the March bank statements (received)"}}, http.StatusOK)
	api.clock.Advance(time.Minute)
	res := api.flMustUpload(t, key, clientID, flField("workspaceId", wsID), flField("taskId", taskID),
		flFilePart("bank-statement-2026-03.pdf", "application/pdf", []byte("%PDF-1.7 statement")))
	if res.ID == "" {
		t.Fatalf("upload: no file id")
	}
	changes = append(changes, whChange{"upload a document", []string{db.EventFileCreated}})
	call("rename the document", []string{db.EventFileUpdated},
		request{method: "PATCH", path: "/v1/files/" + res.ID, clientID: clientID, body: map[string]any{"name": "Sparkasse March 2026.pdf"}}, http.StatusOK)
	api.dcAnalyze(t, map[string]string{"Sparkasse March 2026.pdf": "Kontoauszug"}, nil)
	changes = append(changes, whChange{"read the document", []string{db.EventFileAnalyzed}})
	collect := call("ask for documents", []string{db.EventCollectCreated},
		request{method: "POST", path: "/v1/collects", clientID: clientID, body: map[string]any{"workspaceId": wsID, "taskId": taskID,
			"title": "Documents for March 2026", "items": []any{map[string]any{"title": "Bank statement March"}}}}, http.StatusCreated)
	collectID := collect["id"].(string)
	itemID := collect["items"].([]any)[0].(map[string]any)["id"].(string)
	call("move the collect's due date", []string{db.EventCollectUpdated},
		request{method: "PATCH", path: "/v1/collects/" + collectID, clientID: clientID, body: map[string]any{"dueDate": "2026-12-17T00:00:00Z"}}, http.StatusOK)
	session := call("make a link", nil,
		request{method: "POST", path: "/v1/collects/" + collectID + "/sessions", clientID: clientID, body: map[string]any{}}, http.StatusCreated)
	token := session["token"].(string)
	api.clock.Advance(time.Minute)
	api.clMustUpload(t, token, itemID, flFilePart("statement-2026-03.pdf", "application/pdf", []byte("%PDF-1.7 march")))
	changes = append(changes, whChange{"upload through the link", []string{db.EventFileCreated, db.EventCollectItemReceived}})
	api.clock.Advance(time.Minute)
	wrong := api.clMustUpload(t, token, itemID, flFilePart("statement-2026-02.pdf", "application/pdf", []byte("%PDF-1.7 february")))
	changes = append(changes, whChange{"upload the wrong file through the link", []string{db.EventFileCreated, db.EventCollectItemReceived}})
	api.clock.Advance(time.Minute)
	if res := api.do(request{method: "DELETE", path: "/v1/collect-sessions/" + token + "/items/" + itemID + "/files/" + wrong.ID}); res.status != http.StatusOK {
		t.Fatalf("take the wrong file back: got %d %s, want 200", res.status, res.body)
	}
	changes = append(changes, whChange{"take the wrong file back", []string{db.EventCollectItemFileRemoved}})
	api.clock.Advance(time.Minute)
	if res := api.do(request{method: "POST", path: "/v1/collect-sessions/" + token + "/submit"}); res.status != http.StatusOK {
		t.Fatalf("submit: got %d %s, want 200", res.status, res.body)
	}
	changes = append(changes, whChange{"submit the collect", []string{db.EventCollectSubmitted}})
	api.clock.Advance(time.Minute)
	if res := api.bkImport(t, key, clientID, "", bkMT940(bkIBAN, "100.00", bkMarch[0])); res.status != http.StatusCreated {
		t.Fatalf("import a statement: got %d %s, want 201", res.status, res.body)
	}
	changes = append(changes, whChange{"import a statement", []string{db.EventBankStatementImported}})
	txs := call("list the transactions", nil, request{method: "GET", path: "/v1/transactions", clientID: clientID}, http.StatusOK)
	txID := txs["data"].([]any)[0].(map[string]any)["id"].(string)
	call("confirm the transaction's receipt", []string{db.EventTransactionMatched},
		request{method: "PATCH", path: "/v1/transactions/" + txID, clientID: clientID, body: map[string]any{"fileIds": []string{res.ID}}}, http.StatusOK)
	call("set the ledger settings", nil, request{method: "PUT", path: "/v1/ledger-settings", clientID: clientID,
		body: map[string]any{"chart": "SKR03", "consultantNumber": 29098, "clientNumber": 55003}}, http.StatusOK)
	call("export March", nil, request{method: "POST", path: "/v1/exports", clientID: clientID,
		body: map[string]any{"format": "datev", "from": "2026-03-01", "to": "2026-03-31"}}, http.StatusAccepted)
	api.runExports(t)
	changes = append(changes, whChange{"write the export", []string{db.EventExportCompleted}})
	call("delete the task", []string{db.EventTaskDeleted},
		request{method: "DELETE", path: "/v1/tasks/" + taskID, clientID: clientID}, http.StatusOK)
	return changes, clientID
}

// TestWebhookEveryEventDelivered: every kind of change reaches a
// subscription to everything once, in order, signed, in the documented form.
func TestWebhookEveryEventDelivered(t *testing.T) {
	api := newTestAPI(t, func(c *Config) { c.AllowPrivateWebhooks = true })
	receiver := newWHReceiver(t, nil)
	hook := api.mustCreateWebhook(api.accountantKey, map[string]any{"url": receiver.server.URL + "/hook", "events": []string{"*"}})
	other := newWHReceiver(t, nil)
	api.mustCreateWebhook(api.other.accountantKey, map[string]any{"url": other.server.URL + "/hook", "events": []string{"*"}})
	changes, clientID := whMakeEveryChange(t, api)
	dispatcher := newWHDispatcher(api, receiver, true)
	var want []string
	for _, c := range changes {
		want = append(want, c.events...)
	}
	if n := whRunDue(t, dispatcher); n != len(want) {
		t.Errorf("RunDue: %d attempts, want %d", n, len(want))
	}
	if n := whRunDue(t, dispatcher); n != 0 {
		t.Errorf("RunDue again: %d attempts, want none", n)
	}

	schemas := whEventSchemas(t)
	got := receiver.received()
	var types []string
	seen := map[string]bool{}
	var events []whEvent
	for _, r := range got {
		e := whVerify(t, r, hook.Secret)
		events = append(events, e)
		if r.timestamp != strconv.FormatInt(api.clock.Now().Unix(), 10) {
			t.Errorf("%s: webhook-timestamp %s, want the dispatcher's clock %d", e.Type, r.timestamp, api.clock.Now().Unix())
		}
		types = append(types, e.Type)
		if seen[e.ID] {
			t.Errorf("event %s arrived twice", e.ID)
		}
		seen[e.ID] = true
		var generic any
		json.Unmarshal(r.body, &generic)
		if schema := schemas[e.Type]; schema == nil {
			t.Errorf("%s: no schema in the OpenAPI document", e.Type)
		} else if err := schema.VisitJSON(generic, openapi3.EnableJSONSchema2020()); err != nil {
			t.Errorf("%s does not match its OpenAPI schema: %v\n%s", e.Type, err, r.body)
		}
		wantClient := &clientID
		if strings.HasPrefix(e.Type, "accountant_user.") || strings.HasPrefix(e.Type, "firm.") {
			wantClient = nil
		}
		if (e.ClientID == nil) != (wantClient == nil) || (e.ClientID != nil && *e.ClientID != clientID) {
			t.Errorf("%s: clientId %v, want %v", e.Type, e.ClientID, wantClient)
		}
		if wantChanges := strings.HasSuffix(e.Type, ".updated"); wantChanges != (len(e.Changes) > 0) {
			t.Errorf("%s: changes %v", e.Type, e.Changes)
		}
	}
	if !slices.Equal(types, want) {
		t.Errorf("event types in arrival order:\n got %v\nwant %v", types, want)
	}
	for _, typ := range db.EventTypes {
		if !slices.Contains(types, typ) {
			t.Errorf("no %s event arrived", typ)
		}
	}
	if len(other.received()) != 0 {
		t.Errorf("the other firm's subscription got %d events of this firm", len(other.received()))
	}

	// The data is the resource as the API shows it.
	for _, e := range events {
		if e.Type != db.EventTaskUpdated {
			continue
		}
		if e.Data["status"] != "ACCEPTED" || !slices.Equal(e.Changes, []string{"title", "status"}) {
			t.Errorf("task.updated: data %v, changes %v; want the task after the change and [title status]", e.Data, e.Changes)
		}
	}

	res := api.do(request{method: "GET", path: "/v1/webhooks/" + hook.ID + "/deliveries?limit=100", key: api.accountantKey})
	var page admPage[whDelivery]
	res.decode(t, &page)
	if page.Pagination.Total != len(want) {
		t.Errorf("deliveries: %d, want %d", page.Pagination.Total, len(want))
	}
	for _, d := range page.Data {
		if d.Status != "succeeded" || len(d.Attempts) != 1 || d.Attempts[0].StatusCode == nil || *d.Attempts[0].StatusCode != 204 || d.NextAttemptAt != nil {
			t.Errorf("delivery after a 204: %+v, want succeeded with one attempt", d)
		}
	}
}

// TestWebhookRetriedUntilDelivered: a receiver that fails three times gets
// the event on the fourth attempt, on the retry schedule, with the same id.
func TestWebhookRetriedUntilDelivered(t *testing.T) {
	api := newTestAPI(t, func(c *Config) { c.AllowPrivateWebhooks = true })
	receiver := newWHReceiver(t, func(n int) int {
		if n <= 3 {
			return []int{500, 503, 429}[n-1]
		}
		return 200
	})
	hook := api.mustCreateWebhook(api.accountantKey, map[string]any{"url": receiver.server.URL, "events": []string{"task.created", "task.updated"}})
	dispatcher := newWHDispatcher(api, receiver, true)
	ws := api.mustCreateWorkspace(api.client.ID, "Books")
	var taskIDs []string
	for _, title := range []string{"first", "second"} {
		// A second apart, so that the deliveries list orders them by time.
		api.clock.Advance(time.Second)
		res := api.do(request{method: "POST", path: "/v1/tasks", key: api.clientKey, clientID: api.client.ID, body: map[string]any{"title": title, "workspaceId": ws}})
		var task struct{ ID string }
		res.decode(t, &task)
		taskIDs = append(taskIDs, task.ID)
	}

	start := api.clock.Now()
	schedule := webhooks.Schedule()
	for attempt := 1; attempt <= 3; attempt++ {
		if n := whRunDue(t, dispatcher); n != 1 {
			t.Fatalf("attempt %d: RunDue made %d attempts, want 1 (the second event waits for the first)", attempt, n)
		}
		// Not due before the schedule's shortest delay.
		api.clock.Advance(schedule[attempt-1] * 3 / 4)
		if n := whRunDue(t, dispatcher); n != 0 {
			t.Fatalf("after attempt %d, before its retry is due: RunDue made %d attempts", attempt, n)
		}
		api.clock.Advance(schedule[attempt-1] / 2)
	}
	if n := whRunDue(t, dispatcher); n != 2 {
		t.Fatalf("the 4th attempt: RunDue made %d attempts, want 2 (the first event, then the second)", n)
	}
	got := receiver.received()
	if len(got) != 5 {
		t.Fatalf("the receiver got %d requests, want 5", len(got))
	}
	var first whEvent
	for i, r := range got[:4] {
		e := whVerify(t, r, hook.Secret)
		if i == 0 {
			first = e
		}
		if e.ID != first.ID || e.Data["id"] != taskIDs[0] {
			t.Errorf("attempt %d: event %s for %v, want the first task's event %s again", i+1, e.ID, e.Data["id"], first.ID)
		}
	}
	if second := whVerify(t, got[4], hook.Secret); second.Data["id"] != taskIDs[1] {
		t.Errorf("after the first event: got %v, want the second task's event", second.Data["id"])
	}
	if ts, _ := strconv.ParseInt(got[3].timestamp, 10, 64); ts <= start.Unix() {
		t.Errorf("the 4th attempt is signed at %d, want its own time (after %d)", ts, start.Unix())
	}

	res := api.do(request{method: "GET", path: "/v1/webhooks/" + hook.ID + "/deliveries?order=asc", key: api.accountantKey})
	var page admPage[whDelivery]
	res.decode(t, &page)
	var codes []int
	for _, a := range page.Data[0].Attempts {
		codes = append(codes, *a.StatusCode)
	}
	if page.Data[0].Status != "succeeded" || !slices.Equal(codes, []int{500, 503, 429, 200}) {
		t.Errorf("the first delivery: status %s, attempt codes %v; want succeeded after 500, 503, 429, 200", page.Data[0].Status, codes)
	}
	if a := page.Data[0].Attempts[0]; a.Error == nil || *a.Error != "status 500" {
		t.Errorf("the first attempt's error: %v, want status 500", a.Error)
	}
}

// TestWebhookClientLimited: a subscription limited to a client gets that
// client's events and nothing of another client or of the firm's own.
func TestWebhookClientLimited(t *testing.T) {
	api := newTestAPI(t, func(c *Config) { c.AllowPrivateWebhooks = true })
	mine, theirs, firmWide := newWHReceiver(t, nil), newWHReceiver(t, nil), newWHReceiver(t, nil)
	mineHook := api.mustCreateWebhook(api.accountantKey, map[string]any{"url": mine.server.URL, "events": []string{"*"}, "clientId": api.client.ID})
	api.mustCreateWebhook(api.accountantKey, map[string]any{"url": theirs.server.URL, "events": []string{"*"}, "clientId": api.otherClient.ID})
	api.mustCreateWebhook(api.accountantKey, map[string]any{"url": firmWide.server.URL, "events": []string{"*"}})

	for _, c := range []struct{ key, clientID string }{{api.clientKey, api.client.ID}, {api.otherClientClientKey, api.otherClient.ID}} {
		res := api.do(request{method: "POST", path: "/v1/workspaces", key: c.key, clientID: c.clientID, body: map[string]any{"name": "Books " + c.clientID}})
		var ws struct{ ID string }
		res.decode(t, &ws)
		api.do(request{method: "POST", path: "/v1/tasks", key: c.key, clientID: c.clientID, body: map[string]any{"title": "Task of " + c.clientID, "workspaceId": ws.ID}})
		api.do(request{method: "POST", path: "/v1/users", key: c.key, clientID: c.clientID, body: map[string]any{"email": "u@" + c.clientID + ".example", "role": "user"}})
		api.do(request{method: "PATCH", path: "/v1/admin/clients/" + c.clientID, key: api.accountantKey, body: map[string]any{"name": "Renamed " + c.clientID}})
	}
	api.do(request{method: "POST", path: "/v1/admin/users", key: api.accountantKey, body: map[string]any{"email": "firm@example.com", "role": "user"}})
	whRunDue(t, newWHDispatcher(api, mine, true))

	check := func(name string, r *whReceiver, want int, allowed func(e whEvent) bool) {
		t.Helper()
		got := r.received()
		if len(got) != want {
			t.Errorf("%s got %d events, want %d", name, len(got), want)
		}
		for _, g := range got {
			var e whEvent
			json.Unmarshal(g.body, &e)
			if !allowed(e) {
				t.Errorf("%s got %s of client %v: %s", name, e.Type, e.ClientID, g.body)
			}
		}
	}
	ofClient := func(id string) func(e whEvent) bool {
		return func(e whEvent) bool {
			return e.ClientID != nil && *e.ClientID == id && !strings.Contains(string(mustJSON(t, e.Data)), otherClientOf(api, id))
		}
	}
	check("the subscription of client one", mine, 4, ofClient(api.client.ID))
	check("the subscription of client three", theirs, 4, ofClient(api.otherClient.ID))
	check("the firm-wide subscription", firmWide, 9, func(whEvent) bool { return true })
	for _, g := range mine.received() {
		whVerify(t, g, mineHook.Secret)
	}
}

func otherClientOf(api *testAPI, id string) string {
	if id == api.client.ID {
		return api.otherClient.ID
	}
	return api.client.ID
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWebhookPrivateAddressRefusedAtDelivery: a URL that passed its check
// when subscribed but reaches a private address when sent (DNS rebinding)
// is refused when connecting, and the attempt says why.
func TestWebhookPrivateAddressRefusedAtDelivery(t *testing.T) {
	api := newTestAPI(t, func(c *Config) { c.AllowPrivateWebhooks = true })
	receiver := newWHReceiver(t, nil)
	hook := api.mustCreateWebhook(api.accountantKey, map[string]any{"url": receiver.server.URL, "events": []string{"workspace.created"}})
	api.do(request{method: "POST", path: "/v1/workspaces", key: api.clientKey, clientID: api.client.ID, body: map[string]any{"name": "Books"}})
	if n := whRunDue(t, newWHDispatcher(api, receiver, false)); n != 1 {
		t.Fatalf("RunDue: %d attempts, want 1", n)
	}
	if got := receiver.received(); len(got) != 0 {
		t.Fatalf("the private receiver got %d requests, want none", len(got))
	}
	res := api.do(request{method: "GET", path: "/v1/webhooks/" + hook.ID + "/deliveries", key: api.accountantKey})
	var page admPage[whDelivery]
	res.decode(t, &page)
	d := page.Data[0]
	if d.Status != "pending" || len(d.Attempts) != 1 || d.Attempts[0].StatusCode != nil || d.Attempts[0].Error == nil ||
		!strings.Contains(*d.Attempts[0].Error, "address not allowed") || d.NextAttemptAt == nil {
		t.Errorf("delivery: %+v, want one attempt refused with address not allowed, and a retry", d)
	}
}
