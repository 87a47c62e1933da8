package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"acctapi/auth"
	"acctapi/db"
)

// Tests of the subscription endpoints: /v1/webhooks and below. Deliveries
// themselves are tested end to end in webhooks_e2e_test.go.

const whMissingID = "cnowebhooknowebhooknowebh7"

var (
	whFields       = []string{"clientId", "createdAt", "description", "events", "failingSince", "id", "status", "updatedAt", "url"}
	whSecretFields = []string{"clientId", "createdAt", "description", "events", "failingSince", "id", "secret", "status", "updatedAt", "url"}
	whSecretForm   = regexp.MustCompile(`^whsec_[A-Za-z0-9+/]{43}=$`)
)

// whHook is a subscription as the API answers it.
type whHook struct {
	ID           string   `json:"id"`
	URL          string   `json:"url"`
	Events       []string `json:"events"`
	ClientID     *string  `json:"clientId"`
	Description  *string  `json:"description"`
	Status       string   `json:"status"`
	FailingSince *string  `json:"failingSince"`
	Secret       string   `json:"secret"`
	CreatedAt    string   `json:"createdAt"`
	UpdatedAt    string   `json:"updatedAt"`
}

// whDelivery is a delivery as the API answers it.
type whDelivery struct {
	ID            string      `json:"id"`
	WebhookID     string      `json:"webhookId"`
	EventID       string      `json:"eventId"`
	EventType     string      `json:"eventType"`
	Status        string      `json:"status"`
	Attempts      []whAttempt `json:"attempts"`
	NextAttemptAt *string     `json:"nextAttemptAt"`
	CreatedAt     string      `json:"createdAt"`
	UpdatedAt     string      `json:"updatedAt"`
}

type whAttempt struct {
	At         string  `json:"at"`
	DurationMS int64   `json:"durationMs"`
	StatusCode *int    `json:"statusCode"`
	Error      *string `json:"error"`
}

// whDecode checks the status and the exact fields of a subscription answer
// and decodes it.
func whDecode(t *testing.T, res *response, status int, fields []string) whHook {
	t.Helper()
	if res.status != status {
		t.Fatalf("status: got %d, want %d (body %s)", res.status, status, res.body)
	}
	if got := cuKeys(t, res.body); !reflect.DeepEqual(got, fields) {
		t.Errorf("fields: got %v, want %v (body %s)", got, fields, res.body)
	}
	var h whHook
	admStrict(t, res.body, &h)
	return h
}

// mustCreateWebhook subscribes url to events through the API.
func (api *testAPI) mustCreateWebhook(key string, body map[string]any) whHook {
	api.t.Helper()
	res := api.do(request{method: "POST", path: "/v1/webhooks", key: key, body: body})
	if res.status != http.StatusCreated {
		api.t.Fatalf("POST /v1/webhooks: got %d %s, want 201", res.status, res.body)
	}
	var h whHook
	res.decode(api.t.(*testing.T), &h)
	return h
}

// whCount is how many subscriptions the firm has, read from the store.
func (api *testAPI) whCount(firmID string) int {
	api.t.Helper()
	page, err := api.store.ListWebhooks(context.Background(), firmID, db.PageRequest{Limit: 1, Sort: "createdAt"})
	if err != nil {
		api.t.Fatal(err)
	}
	return page.Total
}

func TestWebhookCreate(t *testing.T) {
	api := newTestAPI(t)

	t.Run("created with its secret", func(t *testing.T) {
		res := api.do(request{method: "POST", path: "/v1/webhooks", key: api.accountantKey, body: map[string]any{
			"url": " https://hooks.example.com/acct ", "events": []string{"task.created", "file.created", "task.created"},
			"clientId": strings.ToUpper(api.client.ID), "description": "  Ledger sync ",
		}})
		h := whDecode(t, res, http.StatusCreated, whSecretFields)
		if !whSecretForm.MatchString(h.Secret) {
			t.Errorf("secret %q: want whsec_ and the base64 of 32 bytes", h.Secret)
		}
		want := whHook{ID: h.ID, URL: "https://hooks.example.com/acct", Events: []string{"task.created", "file.created"},
			ClientID: &api.client.ID, Description: ptr("Ledger sync"), Status: "active", Secret: h.Secret,
			CreatedAt: "2026-11-21T12:00:00Z", UpdatedAt: "2026-11-21T12:00:00Z"}
		if !reflect.DeepEqual(h, want) {
			t.Errorf("created: got %+v, want %+v", h, want)
		}
		got := whDecode(t, api.do(request{method: "GET", path: "/v1/webhooks/" + h.ID, key: api.accountantKey}), http.StatusOK, whFields)
		want.Secret = ""
		if !reflect.DeepEqual(got, want) {
			t.Errorf("read back: got %+v, want %+v (no secret)", got, want)
		}
	})

	t.Run("* stands for every event type", func(t *testing.T) {
		h := api.mustCreateWebhook(api.accountantKey, map[string]any{"url": "https://hooks.example.com/all", "events": []string{"task.deleted", "*"}})
		if !reflect.DeepEqual(h.Events, []string{"*"}) || h.ClientID != nil || h.Description != nil {
			t.Errorf("got events %v, client %v, description %v; want [*], nil, nil", h.Events, h.ClientID, h.Description)
		}
	})

	t.Run("each secret is new", func(t *testing.T) {
		a := api.mustCreateWebhook(api.accountantKey, map[string]any{"url": "https://a.example.com/", "events": []string{"*"}})
		b := api.mustCreateWebhook(api.accountantKey, map[string]any{"url": "https://a.example.com/", "events": []string{"*"}})
		if a.Secret == b.Secret || a.ID == b.ID {
			t.Errorf("two subscriptions share a secret or an id: %+v, %+v", a, b)
		}
	})

	t.Run("refused input changes nothing", func(t *testing.T) {
		before := api.whCount(api.firm.ID)
		for _, tc := range []struct {
			name string
			body any
			want []issue
		}{
			{"missing fields", map[string]any{}, []issue{
				typeIssue([]any{"url"}, "string", "undefined"), typeIssue([]any{"events"}, "array", "undefined")}},
			{"wrong types", map[string]any{"url": 5, "events": "task.created", "clientId": 7, "description": false}, []issue{
				typeIssue([]any{"url"}, "string", "number"), typeIssue([]any{"events"}, "array", "string"),
				typeIssue([]any{"clientId"}, "string", "number"), typeIssue([]any{"description"}, "string", "boolean")}},
			{"no events", map[string]any{"url": "https://a.example.com/", "events": []string{}}, []issue{
				sizeIssue("too_small", []any{"events"}, "array", 1, "Array must contain at least 1 element(s)")}},
			{"unknown event", map[string]any{"url": "https://a.example.com/", "events": []any{"task.created", "task.exploded", 3}}, []issue{
				{Code: "invalid_enum_value", Path: []any{"events", 1}, Options: webhookEvents, Received: "task.exploded",
					Message: "Invalid enum value. Expected " + enumExpected(webhookEvents) + ", received 'task.exploded'"},
				typeIssue([]any{"events", 2}, "string", "number")}},
			{"huge url", map[string]any{"url": "https://a.example.com/" + strings.Repeat("a", maxWebhookURL), "events": []string{"*"}}, []issue{
				sizeIssue("too_big", []any{"url"}, "string", maxWebhookURL, "String must contain at most 2048 character(s)")}},
			{"huge description", map[string]any{"url": "https://a.example.com/", "events": []string{"*"}, "description": strings.Repeat("d", 501)}, []issue{
				sizeIssue("too_big", []any{"description"}, "string", maxWebhookDescription, "String must contain at most 500 character(s)")}},
			{"bad client id", map[string]any{"url": "https://a.example.com/", "events": []string{"*"}, "clientId": "not an id"}, nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				res := api.do(request{method: "POST", path: "/v1/webhooks", key: api.accountantKey, body: tc.body})
				if tc.want == nil {
					if res.status != http.StatusUnprocessableEntity {
						t.Fatalf("status: got %d %s, want 422", res.status, res.body)
					}
					return
				}
				wantIssues(t, res, "ValidationError", tc.want)
			})
		}

		t.Run("urls that could reach the server's own network", func(t *testing.T) {
			for _, url := range []string{
				"http://hooks.example.com/", "ftp://hooks.example.com/", "hooks.example.com/x", "https:///nohost",
				"https://user:pw@hooks.example.com/", "https://localhost/", "https://a.localhost/", "https://db.internal/",
				"https://printer.local/", "https://127.0.0.1/", "https://[::1]/", "https://10.1.2.3/", "https://192.168.0.9:8443/",
				"https://169.254.169.254/latest/meta-data/", "https://[fd00:ec2::254]/", "https://2130706433/", "https://127.1/",
				"https://0x7f.0.0.1/", "https://100.100.100.200/", "https://[::ffff:10.0.0.1]/",
			} {
				res := api.do(request{method: "POST", path: "/v1/webhooks", key: api.accountantKey, body: map[string]any{"url": url, "events": []string{"*"}}})
				if res.status != http.StatusUnprocessableEntity || !strings.Contains(string(res.body), `"path":["url"]`) {
					t.Errorf("url %q: got %d %s, want 422 naming url", url, res.status, res.body)
				}
			}
		})

		t.Run("another firm's client", func(t *testing.T) {
			res := api.do(request{method: "POST", path: "/v1/webhooks", key: api.accountantKey,
				body: map[string]any{"url": "https://a.example.com/", "events": []string{"*"}, "clientId": api.other.client.ID}})
			wantError(t, res, http.StatusNotFound, "not_found", "not_found", "client "+api.other.client.ID+" not found")
		})

		t.Run("malformed and oversized bodies", func(t *testing.T) {
			res := api.do(request{method: "POST", path: "/v1/webhooks", key: api.accountantKey, body: `{"url": "https://a.example.com/",`})
			wantError(t, res, http.StatusBadRequest, "bad_request", "invalid_json", "")
			res = api.do(request{method: "POST", path: "/v1/webhooks", key: api.accountantKey,
				body: `{"url":"https://a.example.com/","events":["*"],"description":"` + strings.Repeat("x", maxJSONBody) + `"}`})
			if res.status != http.StatusRequestEntityTooLarge {
				t.Errorf("a body over 1 MiB: got %d, want 413", res.status)
			}
		})

		if after := api.whCount(api.firm.ID); after != before {
			t.Errorf("subscriptions: %d before the refused requests, %d after", before, after)
		}
	})
}

func TestWebhookPrivateURLsAllowed(t *testing.T) {
	api := newTestAPI(t, func(c *Config) { c.AllowPrivateWebhooks = true })
	for _, url := range []string{"http://127.0.0.1:8081/hook", "https://localhost/", "http://10.0.0.5/"} {
		h := api.mustCreateWebhook(api.accountantKey, map[string]any{"url": url, "events": []string{"*"}})
		if h.URL != url {
			t.Errorf("url: got %q, want %q", h.URL, url)
		}
	}
	res := api.do(request{method: "POST", path: "/v1/webhooks", key: api.accountantKey, body: map[string]any{"url": "ftp://127.0.0.1/", "events": []string{"*"}}})
	if res.status != http.StatusUnprocessableEntity {
		t.Errorf("ftp with private webhooks allowed: got %d, want 422", res.status)
	}
}

func TestWebhookAccess(t *testing.T) {
	api := newTestAPI(t)
	h := api.mustCreateWebhook(api.accountantKey, map[string]any{"url": "https://a.example.com/", "events": []string{"*"}})
	readOnly := api.mustMintKey(api.firm.ID, auth.KeySpec{Permissions: []string{"webhooks:read"}})
	limited := api.mustMintKey(api.firm.ID, auth.KeySpec{RateLimitMax: 1})
	routes := []struct {
		method, path string
		body         any
		write        bool
	}{
		{"POST", "/v1/webhooks", map[string]any{"url": "https://b.example.com/", "events": []string{"*"}}, true},
		{"GET", "/v1/webhooks", nil, false},
		{"GET", "/v1/webhooks/" + h.ID, nil, false},
		{"PATCH", "/v1/webhooks/" + h.ID, map[string]any{"description": "x"}, true},
		{"DELETE", "/v1/webhooks/" + h.ID, nil, true},
		{"POST", "/v1/webhooks/" + h.ID + "/rotate-secret", nil, true},
		{"GET", "/v1/webhooks/" + h.ID + "/deliveries", nil, false},
		{"POST", "/v1/webhooks/" + h.ID + "/deliveries/" + whMissingID + "/retry", nil, true},
	}
	for _, rt := range routes {
		name := rt.method + " " + rt.path
		res := api.do(request{method: rt.method, path: rt.path, body: rt.body})
		wantError(t, res, http.StatusUnauthorized, "auth_error", "unauthorized", "")
		perm := "webhooks:read"
		if rt.write {
			perm = "webhooks:write"
		}
		res = api.do(request{method: rt.method, path: rt.path, key: api.clientKey, clientID: api.client.ID, body: rt.body})
		if res.status != http.StatusForbidden || !strings.Contains(string(res.body), perm) {
			t.Errorf("%s with a client key: got %d %s, want 403 naming %s", name, res.status, res.body, perm)
		}
		if rt.write {
			res = api.do(request{method: rt.method, path: rt.path, key: readOnly, body: rt.body})
			wantError(t, res, http.StatusForbidden, "auth_error", "missing_scope", "this API key lacks the permission webhooks:write")
		}
		api.do(request{method: "GET", path: "/v1/me", key: limited})
		res = api.do(request{method: rt.method, path: rt.path, key: limited, body: rt.body})
		wantError(t, res, http.StatusTooManyRequests, "rate_limit", "too_many_requests", "")
		api.clock.Advance(auth.DefaultRateLimitWindow)
	}
	if _, err := auth.ParsePermissions(auth.Client, []string{"webhooks:read"}); err == nil {
		t.Errorf("a client key may hold webhooks:read")
	}
	got := whDecode(t, api.do(request{method: "GET", path: "/v1/webhooks/" + h.ID, key: readOnly}), http.StatusOK, whFields)
	if got.ID != h.ID || got.Description != nil {
		t.Errorf("after the refused writes: got %+v, want it unchanged", got)
	}
}

func TestWebhookReadUpdateDelete(t *testing.T) {
	api := newTestAPI(t)
	key := api.accountantKey
	h := api.mustCreateWebhook(key, map[string]any{"url": "https://a.example.com/", "events": []string{"task.created"},
		"clientId": api.client.ID, "description": "first"})

	t.Run("list", func(t *testing.T) {
		for i := range 3 {
			api.clock.Advance(time.Second)
			api.mustCreateWebhook(key, map[string]any{"url": "https://list.example.com/" + string(rune('a'+i)), "events": []string{"*"}})
		}
		api.mustCreateWebhook(api.other.accountantKey, map[string]any{"url": "https://other.example.com/", "events": []string{"*"}})
		res := api.do(request{method: "GET", path: "/v1/webhooks?limit=2&order=asc", key: key})
		var page admPage[whHook]
		admStrict(t, res.body, &page)
		if res.status != http.StatusOK || page.Pagination.Total != 4 || len(page.Data) != 2 || page.Data[0].ID != h.ID || page.Pagination.NextCursor == nil {
			t.Fatalf("first page: got %d %s, want 2 of 4, the first subscription first", res.status, res.body)
		}
		if strings.Contains(string(res.body), "whsec_") || strings.Contains(string(res.body), "other.example.com") {
			t.Errorf("the list shows a secret or another firm's subscription: %s", res.body)
		}
		res = api.do(request{method: "GET", path: "/v1/webhooks?limit=2&order=asc&cursor=" + *page.Pagination.NextCursor, key: key})
		admStrict(t, res.body, &page)
		if len(page.Data) != 2 || page.Pagination.NextCursor != nil {
			t.Errorf("second page: got %s, want the last 2", res.body)
		}
		res = api.do(request{method: "GET", path: "/v1/webhooks?sort=url", key: key})
		if res.status != http.StatusUnprocessableEntity {
			t.Errorf("sort=url: got %d, want 422", res.status)
		}
	})

	t.Run("update", func(t *testing.T) {
		api.clock.Advance(time.Minute)
		res := api.do(request{method: "PATCH", path: "/v1/webhooks/" + h.ID, key: key, body: map[string]any{
			"url": "https://b.example.com/new", "events": []string{"task.updated", "task.deleted"}, "clientId": nil, "description": nil}})
		got := whDecode(t, res, http.StatusOK, whFields)
		if got.URL != "https://b.example.com/new" || !reflect.DeepEqual(got.Events, []string{"task.updated", "task.deleted"}) ||
			got.ClientID != nil || got.Description != nil || got.UpdatedAt == got.CreatedAt || got.Status != "active" {
			t.Errorf("after PATCH: got %+v", got)
		}
		got = whDecode(t, api.do(request{method: "PATCH", path: "/v1/webhooks/" + h.ID, key: key, body: map[string]any{"enabled": false}}), http.StatusOK, whFields)
		if got.Status != "disabled" || got.URL != "https://b.example.com/new" {
			t.Errorf("enabled false: got %+v, want disabled with the rest unchanged", got)
		}
		got = whDecode(t, api.do(request{method: "PATCH", path: "/v1/webhooks/" + h.ID, key: key, body: map[string]any{"enabled": true}}), http.StatusOK, whFields)
		if got.Status != "active" {
			t.Errorf("enabled true: got %+v, want active", got)
		}

		for _, body := range []any{
			map[string]any{"url": nil}, map[string]any{"events": nil}, map[string]any{"enabled": nil}, map[string]any{"enabled": "yes"},
			map[string]any{"url": "http://b.example.com/"}, map[string]any{"events": []string{}}, map[string]any{"clientId": "x y"},
			[]string{"not", "an", "object"},
		} {
			res := api.do(request{method: "PATCH", path: "/v1/webhooks/" + h.ID, key: key, body: body})
			if res.status != http.StatusUnprocessableEntity {
				t.Errorf("PATCH %v: got %d %s, want 422", body, res.status, res.body)
			}
		}
		res = api.do(request{method: "PATCH", path: "/v1/webhooks/" + h.ID, key: key, body: map[string]any{"clientId": api.other.client.ID}})
		wantError(t, res, http.StatusNotFound, "not_found", "not_found", "")
		res = api.do(request{method: "PATCH", path: "/v1/webhooks/" + h.ID, key: key, body: "{"})
		wantError(t, res, http.StatusBadRequest, "bad_request", "invalid_json", "")
		after := whDecode(t, api.do(request{method: "GET", path: "/v1/webhooks/" + h.ID, key: key}), http.StatusOK, whFields)
		if after.URL != "https://b.example.com/new" || after.ClientID != nil || after.Status != "active" {
			t.Errorf("after the refused updates: got %+v, want it unchanged", after)
		}
	})

	t.Run("rotate the secret", func(t *testing.T) {
		api.clock.Advance(time.Minute)
		res := api.do(request{method: "POST", path: "/v1/webhooks/" + h.ID + "/rotate-secret", key: key})
		got := whDecode(t, res, http.StatusOK, whSecretFields)
		if !whSecretForm.MatchString(got.Secret) || got.Secret == h.Secret {
			t.Errorf("rotated secret %q: want a new whsec_ secret (old %q)", got.Secret, h.Secret)
		}
		stored, err := api.store.FindWebhook(context.Background(), api.firm.ID, h.ID)
		if err != nil {
			t.Fatal(err)
		}
		if stored.Secret != got.Secret || stored.PreviousSecret == nil || *stored.PreviousSecret != h.Secret {
			t.Errorf("stored: secret %q, previous %v; want the new one and the old one", stored.Secret, stored.PreviousSecret)
		}
	})

	t.Run("unknown, malformed and other firms' ids", func(t *testing.T) {
		other := api.mustCreateWebhook(api.other.accountantKey, map[string]any{"url": "https://other.example.com/", "events": []string{"*"}})
		for _, id := range []string{whMissingID, other.ID} {
			for _, rt := range []struct{ method, path string }{
				{"GET", "/v1/webhooks/" + id}, {"PATCH", "/v1/webhooks/" + id}, {"DELETE", "/v1/webhooks/" + id},
				{"POST", "/v1/webhooks/" + id + "/rotate-secret"}, {"GET", "/v1/webhooks/" + id + "/deliveries"},
				{"POST", "/v1/webhooks/" + id + "/deliveries/" + whMissingID + "/retry"},
			} {
				var body any
				if rt.method == "PATCH" {
					body = map[string]any{"description": "taken over"}
				}
				res := api.do(request{method: rt.method, path: rt.path, key: key, body: body})
				wantError(t, res, http.StatusNotFound, "not_found", "not_found", "")
				if strings.Contains(string(res.body), "other.example.com") {
					t.Errorf("%s %s shows another firm's subscription: %s", rt.method, rt.path, res.body)
				}
			}
		}
		res := api.do(request{method: "GET", path: "/v1/webhooks/not-an-id", key: key})
		if res.status != http.StatusUnprocessableEntity {
			t.Errorf("malformed id: got %d, want 422", res.status)
		}
		stored, err := api.store.FindWebhook(context.Background(), api.other.firm.ID, other.ID)
		if err != nil || stored.Description != nil || stored.Secret != other.Secret {
			t.Errorf("the other firm's subscription after the attempts: %+v, %v; want it unchanged", stored, err)
		}
	})

	t.Run("secrets stay out of the log", func(t *testing.T) {
		stored, err := api.store.FindWebhook(context.Background(), api.firm.ID, h.ID)
		if err != nil {
			t.Fatal(err)
		}
		logs := api.logs.String()
		for _, secret := range []string{h.Secret, stored.Secret, strings.TrimPrefix(stored.Secret, "whsec_")} {
			if strings.Contains(logs, secret) {
				t.Errorf("the log holds a signing secret")
			}
		}
		if !strings.Contains(logs, "/v1/webhooks/:id/rotate-secret") {
			t.Errorf("the log has no line of the rotation: the check above looked at nothing")
		}
	})

	t.Run("delete", func(t *testing.T) {
		res := api.do(request{method: "DELETE", path: "/v1/webhooks/" + h.ID, key: key})
		if res.status != http.StatusOK || strings.TrimSpace(string(res.body)) != `{"object":"webhook","deleted":true,"id":"`+h.ID+`"}` {
			t.Errorf("DELETE: got %d %s", res.status, res.body)
		}
		for _, method := range []string{"GET", "DELETE"} {
			res := api.do(request{method: method, path: "/v1/webhooks/" + h.ID, key: key})
			wantError(t, res, http.StatusNotFound, "not_found", "not_found", "")
		}
	})
}

func TestWebhookDeliveriesEndpoints(t *testing.T) {
	api := newTestAPI(t)
	key := api.accountantKey
	h := api.mustCreateWebhook(key, map[string]any{"url": "https://a.example.com/", "events": []string{"task.created"}, "clientId": api.client.ID})
	ws := api.mustCreateWorkspace(api.client.ID, "Books")
	for _, title := range []string{"one", "two"} {
		res := api.do(request{method: "POST", path: "/v1/tasks", key: api.clientKey, clientID: api.client.ID,
			body: map[string]any{"title": title, "workspaceId": ws}})
		if res.status != http.StatusCreated {
			t.Fatalf("POST /v1/tasks: %d %s", res.status, res.body)
		}
	}
	// Neither another client's task nor another event type reaches it.
	otherWS := api.mustCreateWorkspace(api.otherClient.ID, "Other")
	api.do(request{method: "POST", path: "/v1/tasks", key: api.otherClientClientKey, clientID: api.otherClient.ID,
		body: map[string]any{"title": "elsewhere", "workspaceId": otherWS}})
	api.do(request{method: "POST", path: "/v1/workspaces", key: api.clientKey, clientID: api.client.ID, body: map[string]any{"name": "More"}})

	res := api.do(request{method: "GET", path: "/v1/webhooks/" + h.ID + "/deliveries?order=asc", key: key})
	var page admPage[whDelivery]
	admStrict(t, res.body, &page)
	if res.status != http.StatusOK || page.Pagination.Total != 2 || len(page.Data) != 2 {
		t.Fatalf("deliveries: got %d %s, want the 2 task.created events", res.status, res.body)
	}
	for _, d := range page.Data {
		if d.WebhookID != h.ID || d.EventType != "task.created" || d.Status != "pending" || len(d.Attempts) != 0 || d.NextAttemptAt == nil || *d.NextAttemptAt != "2026-11-21T12:00:00Z" {
			t.Errorf("delivery: got %+v, want a pending task.created due now with no attempt", d)
		}
	}

	res = api.do(request{method: "POST", path: "/v1/webhooks/" + h.ID + "/deliveries/" + page.Data[0].ID + "/retry", key: key})
	var retried whDelivery
	admStrict(t, res.body, &retried)
	if res.status != http.StatusAccepted || retried.ID != page.Data[0].ID || retried.Status != "pending" {
		t.Errorf("retry: got %d %s, want 202 with the pending delivery", res.status, res.body)
	}
	other := api.mustCreateWebhook(key, map[string]any{"url": "https://b.example.com/", "events": []string{"*"}})
	res = api.do(request{method: "POST", path: "/v1/webhooks/" + other.ID + "/deliveries/" + page.Data[0].ID + "/retry", key: key})
	wantError(t, res, http.StatusNotFound, "not_found", "not_found", "")
	res = api.do(request{method: "POST", path: "/v1/webhooks/" + h.ID + "/deliveries/" + page.Data[0].ID + "/retry", key: api.other.accountantKey})
	wantError(t, res, http.StatusNotFound, "not_found", "not_found", "")
	res = api.do(request{method: "POST", path: "/v1/webhooks/" + h.ID + "/deliveries/not-a-delivery/retry", key: key})
	if res.status != http.StatusUnprocessableEntity || !strings.Contains(string(res.body), `"path":["params","deliveryId"]`) {
		t.Errorf("malformed delivery id: got %d %s, want 422 naming deliveryId", res.status, res.body)
	}
	res = api.do(request{method: "GET", path: "/v1/webhooks/" + h.ID + "/deliveries?limit=0", key: key})
	if res.status != http.StatusUnprocessableEntity {
		t.Errorf("limit=0: got %d, want 422", res.status)
	}
}

// TestWebhookCatalogueDocumented: docs/webhooks.md shows, for every event
// type, the example payload the OpenAPI document holds (and checks against
// the type's schema), so that the two catalogues cannot drift apart.
func TestWebhookCatalogueDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/webhooks.md")
	if err != nil {
		t.Fatal(err)
	}
	var oas struct {
		Webhooks map[string]struct {
			Post struct {
				RequestBody struct {
					Content map[string]struct {
						Example any `json:"example"`
					} `json:"content"`
				} `json:"requestBody"`
			} `json:"post"`
		} `json:"webhooks"`
	}
	if err := json.Unmarshal(openAPISource, &oas); err != nil {
		t.Fatal(err)
	}
	if len(oas.Webhooks) != len(db.EventTypes) {
		t.Errorf("the OpenAPI document describes %d event types, want %d", len(oas.Webhooks), len(db.EventTypes))
	}
	// The schemas a subscription's events are checked against name every
	// type, so that no answer holds one the document does not allow.
	var enums struct {
		Components struct {
			Schemas struct {
				Type   struct{ Enum []string } `json:"WebhookEventType"`
				Filter struct{ Enum []string } `json:"WebhookEventFilter"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPISource, &enums); err != nil {
		t.Fatal(err)
	}
	if got := enums.Components.Schemas.Type.Enum; !slices.Equal(got, db.EventTypes) {
		t.Errorf("WebhookEventType: got %v, want %v", got, db.EventTypes)
	}
	if got, want := enums.Components.Schemas.Filter.Enum, append([]string{db.AllEvents}, db.EventTypes...); !slices.Equal(got, want) {
		t.Errorf("WebhookEventFilter: got %v, want %v", got, want)
	}
	for _, typ := range db.EventTypes {
		example := oas.Webhooks[typ].Post.RequestBody.Content["application/json"].Example
		if example == nil {
			t.Errorf("%s: no example in the OpenAPI document", typ)
			continue
		}
		section := regexp.MustCompile("(?s)\n### " + regexp.QuoteMeta(typ) + "\n.*?```json\n(.*?)```").FindSubmatch(doc)
		if section == nil {
			t.Errorf("%s: no section with a JSON example in docs/webhooks.md", typ)
			continue
		}
		var documented any
		if err := json.Unmarshal(section[1], &documented); err != nil {
			t.Errorf("%s: the example in docs/webhooks.md: %v", typ, err)
			continue
		}
		if !reflect.DeepEqual(documented, example) {
			t.Errorf("%s: the example in docs/webhooks.md differs from the OpenAPI document's", typ)
		}
	}
}
