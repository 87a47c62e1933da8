package handlers

import (
	"bytes"
	"database/sql"
	"html"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"acctapi/auth"
)

var firmFields = []string{"createdAt", "id", "locale", "mailFromName", "name", "updatedAt"}

// fmFirm is the firm as the API answers it.
type fmFirm struct {
	ID           string  `json:"id"`
	Name         string  `json:"name"`
	MailFromName *string `json:"mailFromName"`
	Locale       string  `json:"locale"`
	CreatedAt    string  `json:"createdAt"`
	UpdatedAt    string  `json:"updatedAt"`
}

// fmDecode checks the status and the exact fields of a firm answer and
// decodes it.
func fmDecode(t *testing.T, res *response, status int) fmFirm {
	t.Helper()
	if res.status != status {
		t.Fatalf("status: got %d, want %d (body %s)", res.status, status, res.body)
	}
	if got := cuKeys(t, res.body); !reflect.DeepEqual(got, firmFields) {
		t.Errorf("fields: got %v, want %v (body %s)", got, firmFields, res.body)
	}
	var f fmFirm
	admStrict(t, res.body, &f)
	return f
}

func TestFirm(t *testing.T) {
	api := newTestAPI(t)
	fx := api.clFixture(t, api.clientKey, api.client.ID)
	collect := api.clMustCreate(t, fx)
	token := api.clMustSession(t, fx, collect.ID, map[string]any{}).Token
	hook := api.mustCreateWebhook(api.accountantKey, map[string]any{"url": "https://hooks.example.com/firm", "events": []string{"firm.updated"}})

	t.Run("read", func(t *testing.T) {
		got := fmDecode(t, api.do(request{method: "GET", path: "/v1/firm", key: api.accountantKey}), http.StatusOK)
		want := fmFirm{ID: api.firm.ID, Name: "Firm One", Locale: "en", CreatedAt: "2026-11-21T12:00:00Z", UpdatedAt: "2026-11-21T12:00:00Z"}
		if got != want {
			t.Errorf("GET /v1/firm: got %+v, want %+v", got, want)
		}
	})

	t.Run("renamed, and the link's page and view use the name at once", func(t *testing.T) {
		api.clock.Advance(60e9)
		res := api.do(request{method: "PATCH", path: "/v1/firm", key: api.accountantKey,
			body: map[string]any{"name": "  Steuerkanzlei Weber & Partner ", "mailFromName": "Kanzlei Weber", "locale": "de"}})
		got := fmDecode(t, res, http.StatusOK)
		want := fmFirm{ID: api.firm.ID, Name: "Steuerkanzlei Weber & Partner", MailFromName: ptr("Kanzlei Weber"), Locale: "de",
			CreatedAt: "2026-11-21T12:00:00Z", UpdatedAt: "2026-11-21T12:01:00Z"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("PATCH /v1/firm: got %+v, want %+v", got, want)
		}
		if read := fmDecode(t, api.do(request{method: "GET", path: "/v1/firm", key: api.accountantKey}), http.StatusOK); !reflect.DeepEqual(read, want) {
			t.Errorf("GET after PATCH: got %+v, want %+v", read, want)
		}
		if _, view := api.clView(t, token); view.FirmName != want.Name {
			t.Errorf("uploader's view: firmName %q, want %q", view.FirmName, want.Name)
		}
		if page := api.page("GET", "/collect/"+token, nil, nil); !strings.Contains(page.body, html.EscapeString(want.Name)) {
			t.Errorf("upload page: %d, does not name %q", page.status, want.Name)
		}
		// The firm's locale is the default of a new collect.
		body := fx.body()
		if c := clDecodeCollect(t, api.clDo(fx, "POST", "/v1/collects", body), http.StatusCreated); c.Locale != "de" {
			t.Errorf("collect without a locale after the change: %q, want de", c.Locale)
		}
	})

	t.Run("firm.updated names the fields sent", func(t *testing.T) {
		res := api.do(request{method: "GET", path: "/v1/webhooks/" + hook.ID + "/deliveries", key: api.accountantKey})
		var page admPage[whDelivery]
		res.decode(t, &page)
		if len(page.Data) != 1 || page.Data[0].EventType != "firm.updated" {
			t.Fatalf("deliveries: got %+v, want one firm.updated", page.Data)
		}
		payload := fmQuery(t, api, `SELECT payload FROM webhook_events WHERE id = ?`, page.Data[0].EventID)
		if !bytes.Contains(payload, []byte(`"clientId":null`)) || !bytes.Contains(payload, []byte(`"changes":["name","mailFromName","locale"]`)) {
			t.Errorf("payload %s: want clientId null and changes [name mailFromName locale]", payload)
		}
	})

	t.Run("null mailFromName, and a replay under one Idempotency-Key", func(t *testing.T) {
		req := request{method: "PATCH", path: "/v1/firm", key: api.accountantKey, body: map[string]any{"mailFromName": nil},
			header: http.Header{"Idempotency-Key": {"firm-1"}}}
		first := api.do(req)
		if got := fmDecode(t, first, http.StatusOK); got.MailFromName != nil || got.Name != "Steuerkanzlei Weber & Partner" {
			t.Errorf("mailFromName null: got %+v", got)
		}
		replay := api.do(req)
		if !bytes.Equal(first.body, replay.body) || replay.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay: got %d %s, want the first answer replayed", replay.status, replay.body)
		}
	})

	t.Run("each firm sees only its own", func(t *testing.T) {
		got := fmDecode(t, api.do(request{method: "GET", path: "/v1/firm", key: api.other.accountantKey}), http.StatusOK)
		if got.ID != api.other.firm.ID || got.Name != "Firm Two" || got.Locale != "en" {
			t.Errorf("the other firm: got %+v, want Firm Two untouched", got)
		}
		fmDecode(t, api.do(request{method: "PATCH", path: "/v1/firm", key: api.other.accountantKey, body: map[string]any{"name": "Zwei"}}), http.StatusOK)
		if got := fmDecode(t, api.do(request{method: "GET", path: "/v1/firm", key: api.accountantKey}), http.StatusOK); got.Name != "Steuerkanzlei Weber & Partner" {
			t.Errorf("the first firm after the other's rename: %q", got.Name)
		}
	})

	t.Run("refused", func(t *testing.T) {
		readOnly := api.mustMintKey(api.firm.ID, auth.KeySpec{Permissions: []string{"firm:read"}})
		wantError(t, api.do(request{method: "GET", path: "/v1/firm"}), http.StatusUnauthorized, "auth_error", "unauthorized", "")
		wantError(t, api.do(request{method: "PATCH", path: "/v1/firm", key: "sk_live_nope", body: map[string]any{"name": "x"}}), http.StatusUnauthorized, "auth_error", "unauthorized", "")
		for _, method := range []string{"GET", "PATCH"} {
			res := api.do(request{method: method, path: "/v1/firm", key: api.clientKey, body: map[string]any{"name": "x"}})
			wantError(t, res, http.StatusForbidden, "auth_error", "missing_scope", "")
		}
		wantError(t, api.do(request{method: "PATCH", path: "/v1/firm", key: readOnly, body: map[string]any{"name": "x"}}),
			http.StatusForbidden, "auth_error", "missing_scope", "")
		wantError(t, api.do(request{method: "PATCH", path: "/v1/firm", key: api.accountantKey, body: `{"name":`}),
			http.StatusBadRequest, "bad_request", "invalid_json", "")
		wantError(t, api.do(request{method: "GET", path: "/v1/firm/" + api.other.firm.ID, key: api.accountantKey}),
			http.StatusNotFound, "not_found", "not_found", "")
		res := api.do(request{method: "PATCH", path: "/v1/firm", key: api.accountantKey,
			body: map[string]any{"name": " ", "mailFromName": "Weber\r\nBcc: x@example.com", "locale": "fr"}})
		if got, want := issuePaths(t, res), []string{"name", "mailFromName", "locale"}; !reflect.DeepEqual(got, want) {
			t.Errorf("422 issues at %v, want %v", got, want)
		}
		res = api.do(request{method: "PATCH", path: "/v1/firm", key: api.accountantKey, body: map[string]any{"name": nil, "locale": nil}})
		if got, want := issuePaths(t, res), []string{"name", "locale"}; !reflect.DeepEqual(got, want) {
			t.Errorf("422 issues at %v, want %v", got, want)
		}
		if name := fmQuery(t, api, `SELECT name FROM firms WHERE id = ?`, api.firm.ID); string(name) != "Steuerkanzlei Weber & Partner" {
			t.Errorf("the firm after refused changes: %q", name)
		}
	})
}

// fmQuery reads one value from the test database.
func fmQuery(t *testing.T, api *testAPI, query string, args ...any) []byte {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+api.store.Path()+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var v []byte
	if err := conn.QueryRow(query, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return v
}
