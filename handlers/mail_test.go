package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"acctapi/auth"
	"acctapi/db"
)

// takeMailed checks that an invitation's answer says mailed: false (the
// test server has no SMTP relay) and returns the answer without the field,
// the user as every other answer shows it.
func takeMailed(t *testing.T, body []byte) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	if string(m["mailed"]) != "false" {
		t.Errorf("mailed: got %s, want false: this server sends no mail (body %s)", m["mailed"], body)
	}
	delete(m, "mailed")
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mailCollect makes a collect of the first client, due in ten days, for
// the session tests.
func (api *testAPI) mailCollect(t *testing.T) string {
	t.Helper()
	due := api.clock.Now().Add(10 * 24 * time.Hour)
	c, err := api.store.CreateCollect(context.Background(), api.client.ID, db.CollectCreate{
		WorkspaceID: api.mustCreateWorkspace(api.client.ID, "Buchhaltung"), Title: "März", DueDate: &due, Locale: "de",
		Items: []db.CollectItemCreate{{Title: "Kontoauszug", Required: true}}})
	if err != nil {
		t.Fatal(err)
	}
	return c.ID
}

type mailSession struct {
	ID        string  `json:"id"`
	Email     *string `json:"email"`
	Reminders bool    `json:"reminders"`
	Token     string  `json:"token"`
	Mailed    *bool   `json:"mailed"`
	Mail      *struct {
		Status string  `json:"status"`
		Error  *string `json:"error"`
		SentAt *string `json:"sentAt"`
	} `json:"mail"`
}

// TestCollectSessionMail: with mail on, a session given an email queues the
// link in the collect's language and its two reminders (none with
// reminders: false), says mailed: true, and its list entry shows the mail
// queued; without an email nothing is queued. The token is in no log line.
func TestCollectSessionMail(t *testing.T) {
	api := newTestAPI(t, func(c *Config) { c.Mail = true })
	collectID := api.mailCollect(t)
	path := "/v1/collects/" + collectID + "/sessions"
	create := func(body any) (*response, mailSession) {
		res := api.do(request{method: "POST", path: path, key: api.accountantKey, clientID: api.client.ID, body: body})
		var s mailSession
		if res.status == http.StatusCreated {
			res.decode(t, &s)
		}
		return res, s
	}
	outbox := func(sessionID string) []string {
		return api.sqlColumn(t, `SELECT kind || ' ' || recipient || ' ' || locale || ' ' || coalesce(remind_before, '-')
			FROM mail_outbox WHERE session_id = ? ORDER BY kind, remind_before`, sessionID)
	}

	res, s := create(map[string]any{"email": "  Anna@Schmidt.Example ", "label": "Anna"})
	if res.status != http.StatusCreated || s.Mailed == nil || !*s.Mailed || s.Email == nil || *s.Email != "anna@schmidt.example" ||
		!s.Reminders || s.Mail == nil || s.Mail.Status != "queued" || s.Mail.Error != nil {
		t.Fatalf("with an email: %d %s", res.status, res.body)
	}
	want := []string{"collect_link anna@schmidt.example de -", "collect_reminder anna@schmidt.example de 86400",
		"collect_reminder anna@schmidt.example de 259200"}
	if got := outbox(s.ID); !reflect.DeepEqual(got, want) {
		t.Errorf("outbox: got %v, want %v", got, want)
	}

	res, quiet := create(map[string]any{"email": "bernd@schmidt.example", "reminders": false})
	if res.status != http.StatusCreated || quiet.Reminders || !*quiet.Mailed {
		t.Fatalf("reminders false: %d %s", res.status, res.body)
	}
	if got := outbox(quiet.ID); !reflect.DeepEqual(got, []string{"collect_link bernd@schmidt.example de -"}) {
		t.Errorf("reminders false: outbox %v, want the link only", got)
	}

	res, plain := create(map[string]any{})
	if res.status != http.StatusCreated || *plain.Mailed || plain.Email != nil || plain.Mail != nil {
		t.Fatalf("without an email: %d %s", res.status, res.body)
	}
	if got := outbox(plain.ID); len(got) != 0 {
		t.Errorf("without an email: outbox %v, want nothing", got)
	}

	for _, body := range []map[string]any{{"email": "not an address"}, {"email": 7}, {"email": "a@b.example", "reminders": "no"}} {
		if res, _ := create(body); res.status != http.StatusUnprocessableEntity {
			t.Errorf("%v: got %d, want 422", body, res.status)
		}
	}

	list := api.do(request{method: "GET", path: path, key: api.accountantKey, clientID: api.client.ID})
	var page struct{ Data []mailSession }
	list.decode(t, &page)
	byID := map[string]mailSession{}
	for _, s := range page.Data {
		byID[s.ID] = s
	}
	if got := byID[s.ID]; got.Mail == nil || got.Mail.Status != "queued" || *got.Email != "anna@schmidt.example" || got.Token != "" {
		t.Errorf("list: %+v, want the mail queued and no token", got)
	}
	if got := byID[plain.ID]; got.Mail != nil || got.Email != nil {
		t.Errorf("list, no email: %+v", got)
	}
	if strings.Contains(api.logs.String(), s.Token) {
		t.Error("a token is in the log")
	}
}

// TestCollectSessionMailOff: without a relay the address is kept, nothing
// is queued, and the answer says mailed: false.
func TestCollectSessionMailOff(t *testing.T) {
	api := newTestAPI(t)
	collectID := api.mailCollect(t)
	res := api.do(request{method: "POST", path: "/v1/collects/" + collectID + "/sessions", key: api.accountantKey,
		clientID: api.client.ID, body: map[string]any{"email": "anna@schmidt.example"}})
	var s mailSession
	res.decode(t, &s)
	if res.status != http.StatusCreated || s.Mailed == nil || *s.Mailed || s.Email == nil || s.Mail != nil {
		t.Fatalf("got %d %s, want 201 with mailed false, the email, no mail", res.status, res.body)
	}
	if n := api.cuCount(t, `SELECT count(*) FROM mail_outbox`); n != 0 {
		t.Errorf("outbox: %d mails, want none", n)
	}
}

// TestInvitationMail: with mail on, both invitations are queued in the
// locale asked for (en by default) and say mailed: true; another locale is
// refused.
func TestInvitationMail(t *testing.T) {
	api := newTestAPI(t, func(c *Config) { c.Mail = true })
	ws := api.mustCreateWorkspace(api.client.ID, "Buchhaltung")
	res := api.do(request{method: "POST", path: "/v1/users", key: api.accountantKey, clientID: api.client.ID,
		body: map[string]any{"email": "clara@client.example", "role": "user", "workspaceIds": []string{ws}, "locale": "de"}})
	if res.status != http.StatusCreated || !strings.Contains(string(res.body), `"mailed":true`) {
		t.Fatalf("POST /users: %d %s", res.status, res.body)
	}
	res = api.do(request{method: "POST", path: "/v1/admin/users", key: api.accountantKey,
		body: map[string]any{"email": "dora@firm.example", "role": "user"}})
	if res.status != http.StatusCreated || !strings.Contains(string(res.body), `"mailed":true`) {
		t.Fatalf("POST /admin/users: %d %s", res.status, res.body)
	}
	got := api.sqlColumn(t, `SELECT kind || ' ' || recipient || ' ' || locale || ' ' || coalesce(client_id, '-')
		|| ' ' || coalesce(json_extract(data, '$.workspaces[0]'), '') FROM mail_outbox ORDER BY kind`)
	want := []string{"accountant_invitation dora@firm.example en - ",
		"client_invitation clara@client.example de " + api.client.ID + " Buchhaltung"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("outbox: got %q, want %q", got, want)
	}
	for _, path := range []string{"/v1/users", "/v1/admin/users"} {
		res := api.do(request{method: "POST", path: path, key: api.accountantKey, clientID: api.client.ID,
			body: map[string]any{"email": "x@client.example", "role": "user", "locale": "fr"}})
		if res.status != http.StatusUnprocessableEntity {
			t.Errorf("%s with locale fr: got %d, want 422", path, res.status)
		}
	}
}

// TestMailPermission: a request that would mail needs mail:send besides its
// endpoint's permission. Accountant keys hold it; client keys only when
// minted with it. Without it: 403 missing_scope, and nothing is created or
// queued.
func TestMailPermission(t *testing.T) {
	api := newTestAPI(t, func(c *Config) { c.Mail = true })
	collectID := api.mailCollect(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Buchhaltung")
	var perms []string
	for _, p := range auth.PermissionsFor(auth.Client) {
		perms = append(perms, string(p))
	}
	mailer := api.mustMintKey(api.firm.ID, auth.KeySpec{ClientID: api.client.ID, Permissions: perms})
	session := func(key string, body map[string]any) *response {
		return api.do(request{method: "POST", path: "/v1/collects/" + collectID + "/sessions", key: key, clientID: api.client.ID, body: body})
	}
	invite := func(key, email string) *response {
		return api.do(request{method: "POST", path: "/v1/users", key: key, clientID: api.client.ID,
			body: map[string]any{"email": email, "role": "user", "workspaceIds": []string{ws}}})
	}
	counts := func() [3]int {
		return [3]int{api.cuCount(t, `SELECT count(*) FROM collect_sessions`), api.cuCount(t, `SELECT count(*) FROM users`),
			api.cuCount(t, `SELECT count(*) FROM mail_outbox`)}
	}

	before := counts()
	wantError(t, session(api.clientKey, map[string]any{"email": "phish@evil.example"}), http.StatusForbidden, "auth_error", "missing_scope",
		"this API key lacks the permission mail:send")
	wantError(t, invite(api.clientKey, "phish@evil.example"), http.StatusForbidden, "auth_error", "missing_scope", "")
	if after := counts(); after != before {
		t.Errorf("sessions, users, mails: %v before, %v after the refusals", before, after)
	}
	// A link handed out by hand mails nothing: the client key may make it.
	if res := session(api.clientKey, map[string]any{}); res.status != http.StatusCreated {
		t.Errorf("a link without an email: %d %s", res.status, res.body)
	}
	for _, key := range []string{mailer, api.accountantKey} {
		if res := session(key, map[string]any{"email": "anna@client.example"}); res.status != http.StatusCreated {
			t.Errorf("a link mailed with mail:send: %d %s", res.status, res.body)
		}
	}
	if res := invite(mailer, "clara@client.example"); res.status != http.StatusCreated {
		t.Errorf("an invitation with mail:send: %d %s", res.status, res.body)
	}
	wantError(t, api.do(request{method: "POST", path: "/v1/admin/users", key: api.mustMintKey(api.firm.ID, auth.KeySpec{
		Permissions: []string{string(auth.AccountantUsersWrite)}}), body: map[string]any{"email": "dora@firm.example", "role": "user"}}),
		http.StatusForbidden, "auth_error", "missing_scope", "this API key lacks the permission mail:send")
}

// TestMailQuotaAPI: past the firm's hourly quota a request that would mail
// answers 429 mail_quota_exceeded with Retry-After, and nothing is created
// or queued; another firm and a link without an email are not held back.
func TestMailQuotaAPI(t *testing.T) {
	api := newTestAPI(t, func(c *Config) { c.Mail = true })
	collectID := api.mailCollect(t)
	// The firm mailed its 1,000 mails half an hour ago.
	at := api.clock.Now().Add(-30 * time.Minute).Unix()
	api.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO mail_outbox (id, firm_id, kind, recipient, locale, message_id, status, created_at, updated_at, counted_at)
		SELECT 'm' || i, ?, 'accountant_invitation', 'x@firm.example', 'en', '<m' || i || '@test>', 'sent', ?, ?, ? FROM n`,
		db.DefaultMailQuota, api.firm.ID, at, at, at)
	session := func(body map[string]any) *response {
		return api.do(request{method: "POST", path: "/v1/collects/" + collectID + "/sessions", key: api.accountantKey, clientID: api.client.ID, body: body})
	}
	counts := func() [2]int {
		return [2]int{api.cuCount(t, `SELECT count(*) FROM collect_sessions`), api.cuCount(t, `SELECT count(*) FROM mail_outbox`)}
	}
	before := counts()
	res := session(map[string]any{"email": "anna@client.example"})
	wantError(t, res, http.StatusTooManyRequests, "rate_limit", "mail_quota_exceeded", "")
	if got := res.header.Get("Retry-After"); got != "1800" {
		t.Errorf("Retry-After: got %q, want 1800", got)
	}
	res = api.do(request{method: "POST", path: "/v1/admin/users", key: api.accountantKey, body: map[string]any{"email": "dora@firm.example", "role": "user"}})
	wantError(t, res, http.StatusTooManyRequests, "rate_limit", "mail_quota_exceeded", "")
	if after := counts(); after != before {
		t.Errorf("sessions, mails: %v before, %v after the refusals", before, after)
	}
	if res := session(map[string]any{}); res.status != http.StatusCreated {
		t.Errorf("a link without an email: %d", res.status)
	}
	res = api.do(request{method: "POST", path: "/v1/admin/users", key: api.other.accountantKey, body: map[string]any{"email": "eva@two.example", "role": "user"}})
	if res.status != http.StatusCreated {
		t.Errorf("another firm: %d %s", res.status, res.body)
	}
	api.clock.Advance(30 * time.Minute)
	if res := session(map[string]any{"email": "anna@client.example"}); res.status != http.StatusCreated {
		t.Errorf("an hour after the mails: %d %s", res.status, res.body)
	}
}
