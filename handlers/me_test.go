package handlers

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"acctapi/auth"
	"acctapi/db"
)

func TestMe(t *testing.T) {
	api := newTestAPI(t)

	t.Run("accountant key", func(t *testing.T) {
		res := api.do(request{method: "GET", path: "/v1/me", key: api.accountantKey})
		if res.status != http.StatusOK {
			t.Fatalf("status: got %d, want 200 (%s)", res.status, res.body)
		}
		var got map[string]any
		res.decode(t, &got)
		if got["type"] != "accountant" || got["accountantId"] != api.firm.ID {
			t.Errorf("principal: got %v, want type accountant of firm %s", got, api.firm.ID)
		}
		if _, ok := got["clientId"]; ok {
			t.Errorf("accountant principal has clientId: %v", got)
		}
		if got["rateLimitMax"] != float64(600) || got["rateLimitTimeWindow"] != float64(60000) {
			t.Errorf("rate limit: got %v/%v, want 600/60000", got["rateLimitMax"], got["rateLimitTimeWindow"])
		}
		if perms := got["permissions"].([]any); len(perms) != 25 {
			t.Errorf("permissions: got %d, want 25: %v", len(perms), perms)
		}
		id, _, _ := auth.ParseKey(api.accountantKey)
		if got["apiKeyId"] != id {
			t.Errorf("apiKeyId: got %v, want %s", got["apiKeyId"], id)
		}
	})

	t.Run("client key", func(t *testing.T) {
		res := api.do(request{method: "GET", path: "/v1/me", key: api.clientKey})
		var got principalResponse
		res.decode(t, &got)
		if got.Type != "client" || got.ClientID != api.client.ID || got.AccountantID != api.firm.ID {
			t.Errorf("principal: got %+v, want client %s of firm %s", got, api.client.ID, api.firm.ID)
		}
		for _, p := range got.Permissions {
			if strings.HasPrefix(string(p), "clients:") || strings.HasPrefix(string(p), "accountant_users:") {
				t.Errorf("client key holds %s", p)
			}
		}
	})

	t.Run("key with few permissions", func(t *testing.T) {
		key := api.mustMintKey(api.firm.ID, auth.KeySpec{Permissions: []string{"tasks:read"}, RateLimitMax: 7, RateLimitWindow: 1500 * time.Millisecond})
		var got principalResponse
		api.do(request{method: "GET", path: "/v1/me", key: key}).decode(t, &got)
		if len(got.Permissions) != 1 || got.Permissions[0] != auth.TasksRead || got.RateLimitMax != 7 || got.RateLimitTimeWindow != 1500 {
			t.Errorf("principal: got %+v, want tasks:read only, 7 per 1500 ms", got)
		}
	})
}

func TestUnauthorized(t *testing.T) {
	api := newTestAPI(t)
	id, _, _ := auth.ParseKey(api.accountantKey)
	expiring := time.Now().Add(time.Hour)
	expiringKey := api.mustMintKey(api.firm.ID, auth.KeySpec{ExpiresAt: &expiring})
	revokedKey := api.mustMintKey(api.firm.ID, auth.KeySpec{})
	revokedID, _, _ := auth.ParseKey(revokedKey)
	// Both are accepted first, so that the cache holds them when they stop working.
	for _, key := range []string{expiringKey, revokedKey} {
		if res := api.do(request{method: "GET", path: "/v1/me", key: key}); res.status != http.StatusOK {
			t.Fatalf("fresh key: got %d, want 200", res.status)
		}
	}
	if _, err := api.store.RevokeAPIKey(context.Background(), api.firm.ID, revokedID); err != nil {
		t.Fatal(err)
	}
	api.clock.Set(expiring.Add(time.Second))

	cases := []struct {
		name   string
		header string
	}{
		{"no header", ""},
		{"basic scheme", "Basic dXNlcjpwYXNz"},
		{"bearer without key", "Bearer "},
		{"not a key", "Bearer hello"},
		{"unknown key id", "Bearer ak_cunknownunknownunknownabc_" + strings.Repeat("0", 64)},
		{"wrong secret", "Bearer ak_" + id + "_" + strings.Repeat("f", 64)},
		{"key of huge length", "Bearer " + strings.Repeat("a", 10000)},
		{"expired key", "Bearer " + expiringKey},
		{"revoked key", "Bearer " + revokedKey},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			header := http.Header{}
			if c.header != "" {
				header.Set("Authorization", c.header)
			}
			res := api.do(request{method: "GET", path: "/v1/me", header: header})
			wantError(t, res, http.StatusUnauthorized, "auth_error", "unauthorized",
				"missing or invalid API key: send Authorization: Bearer <API_KEY>")
		})
	}

	t.Run("scheme is case-insensitive", func(t *testing.T) {
		res := api.do(request{method: "GET", path: "/v1/me", header: http.Header{"Authorization": {"bearer " + api.accountantKey}}})
		if res.status != http.StatusOK {
			t.Errorf("status: got %d, want 200", res.status)
		}
	})

	t.Run("keys never appear in the log", func(t *testing.T) {
		logs := api.logs.String()
		for _, key := range []string{api.accountantKey, api.clientKey, expiringKey, revokedKey} {
			_, secret, _ := auth.ParseKey(key)
			if strings.Contains(logs, secret) {
				t.Errorf("the log holds the secret of key %s", key[:30])
			}
		}
	})
}

// TestTwoAuthorizationHeaders: a request with several Authorization headers
// is refused as a bad key is, whatever they hold, and counts against the
// address's failed-attempt budget. Servers and proxies differ in which one
// they use, so acctapi uses none.
func TestTwoAuthorizationHeaders(t *testing.T) {
	api := newTestAPI(t)
	bearer := func(key string) string { return "Bearer " + key }
	remaining := failedAuthLimit
	for _, tc := range []struct {
		name   string
		values []string
	}{
		{"the same key twice", []string{bearer(api.accountantKey), bearer(api.accountantKey)}},
		{"a key, then a bad one", []string{bearer(api.accountantKey), "Bearer nope"}},
		{"a bad key, then a good one", []string{"Bearer nope", bearer(api.accountantKey)}},
		{"keys of two firms", []string{bearer(api.accountantKey), bearer(api.other.accountantKey)}},
		{"a key and an empty header", []string{bearer(api.clientKey), ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := api.do(request{method: "GET", path: "/v1/me", header: http.Header{"Authorization": tc.values}})
			wantError(t, res, http.StatusUnauthorized, "auth_error", "unauthorized",
				"missing or invalid API key: send Authorization: Bearer <API_KEY>")
			if got, want := res.header.Get("RateLimit-Limit"), fmt.Sprint(failedAuthLimit); got != want {
				t.Errorf("RateLimit-Limit: got %s, want the failed-attempt budget %s", got, want)
			}
			remaining--
			if got, want := res.header.Get("RateLimit-Remaining"), fmt.Sprint(remaining); got != want {
				t.Errorf("RateLimit-Remaining: got %s, want %s: the request was not counted", got, want)
			}
		})
	}
	if res := api.do(request{method: "GET", path: "/v1/me", key: api.accountantKey}); res.status != http.StatusOK {
		t.Errorf("the key in one header: got %d, want 200", res.status)
	}
}

func TestRateLimit(t *testing.T) {
	api := newTestAPI(t)
	key := api.mustMintKey(api.firm.ID, auth.KeySpec{RateLimitMax: 3, RateLimitWindow: 10 * time.Second})

	for i := 0; i < 3; i++ {
		res := api.do(request{method: "GET", path: "/v1/me", key: key})
		if res.status != http.StatusOK {
			t.Fatalf("request %d: got %d, want 200", i+1, res.status)
		}
		if got, want := res.header.Get("RateLimit-Remaining"), fmt.Sprint(2-i); got != want {
			t.Errorf("request %d RateLimit-Remaining: got %s, want %s", i+1, got, want)
		}
		if got := res.header.Get("RateLimit-Limit"); got != "3" {
			t.Errorf("RateLimit-Limit: got %s, want 3", got)
		}
		if got := res.header.Get("RateLimit-Reset"); got != "10" {
			t.Errorf("RateLimit-Reset: got %s, want 10", got)
		}
	}

	api.clock.Advance(4 * time.Second)
	res := api.do(request{method: "GET", path: "/v1/me", key: key})
	wantError(t, res, http.StatusTooManyRequests, "rate_limit", "too_many_requests", "rate limit exceeded: retry in 6 s")
	for name, want := range map[string]string{"Retry-After": "6", "RateLimit-Remaining": "0", "RateLimit-Reset": "6", "RateLimit-Limit": "3"} {
		if got := res.header.Get(name); got != want {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}

	t.Run("other keys are not limited", func(t *testing.T) {
		if res := api.do(request{method: "GET", path: "/v1/me", key: api.accountantKey}); res.status != http.StatusOK {
			t.Errorf("status: got %d, want 200", res.status)
		}
	})

	t.Run("the window resets", func(t *testing.T) {
		api.clock.Advance(6 * time.Second)
		res := api.do(request{method: "GET", path: "/v1/me", key: key})
		if res.status != http.StatusOK || res.header.Get("RateLimit-Remaining") != "2" {
			t.Errorf("after the window: got %d with %s remaining, want 200 with 2", res.status, res.header.Get("RateLimit-Remaining"))
		}
	})

	t.Run("failed authentication is limited per address", func(t *testing.T) {
		res := api.do(request{method: "GET", path: "/v1/me", key: "nope"})
		if res.header.Get("RateLimit-Limit") != fmt.Sprint(failedAuthLimit) {
			t.Errorf("RateLimit-Limit on 401: got %q, want %d", res.header.Get("RateLimit-Limit"), failedAuthLimit)
		}
		for i := 1; i < failedAuthLimit; i++ {
			api.do(request{method: "GET", path: "/v1/me", key: "nope"})
		}
		res = api.do(request{method: "GET", path: "/v1/me", key: "nope"})
		wantError(t, res, http.StatusTooManyRequests, "rate_limit", "too_many_requests", "")
		if res := api.do(request{method: "GET", path: "/v1/me", key: api.accountantKey}); res.status != http.StatusOK {
			t.Errorf("a valid key after failures: got %d, want 200", res.status)
		}
	})
}

// countingKeys is the store, counting the key lookups that reach it.
type countingKeys struct {
	auth.KeyStore
	reads atomic.Int32
}

func (c *countingKeys) FindAPIKey(ctx context.Context, id string) (*db.APIKey, error) {
	c.reads.Add(1)
	return c.KeyStore.FindAPIKey(ctx, id)
}

// TestFailedAuthBudgetBeforeLookup: an address that has spent its failed
// attempts is refused before its key is looked up, so that a guess costs
// no database read. Only a key the server has already found, sent with its
// secret, still gets through.
func TestFailedAuthBudgetBeforeLookup(t *testing.T) {
	keys := &countingKeys{}
	api := newTestAPI(t, func(cfg *Config) {
		keys.KeyStore = cfg.Store
		cfg.Auth = auth.NewAuthenticator(keys, nil)
	})
	me := func(key string) *response { return api.do(request{method: "GET", path: "/v1/me", key: key}) }
	if res := me(api.accountantKey); res.status != http.StatusOK {
		t.Fatalf("a valid key: got %d, want 200", res.status)
	}
	for range failedAuthLimit {
		me("nope")
	}
	before := keys.reads.Load()
	id, _, _ := auth.ParseKey(api.accountantKey)
	var guesses []string
	for range 3 {
		key, _ := auth.NewKey(db.NewID())
		guesses = append(guesses, key)
	}
	// A known id with a wrong secret, and a valid key the server has not
	// seen since it started: both wait for the window to close like a guess.
	guesses = append(guesses, "ak_"+id+"_"+strings.Repeat("f", 64), api.clientKey)
	for _, key := range guesses {
		res := me(key)
		wantError(t, res, http.StatusTooManyRequests, "rate_limit", "too_many_requests", "")
		if res.header.Get("Retry-After") == "" || res.header.Get("RateLimit-Remaining") != "0" {
			t.Errorf("429 headers: Retry-After %q, RateLimit-Remaining %q", res.header.Get("Retry-After"), res.header.Get("RateLimit-Remaining"))
		}
		if got := keys.reads.Load(); got != before {
			t.Fatalf("store reads over the budget: got %d, want none", got-before)
		}
	}
	if res := me(api.accountantKey); res.status != http.StatusOK {
		t.Errorf("a key the server knows, over the budget: got %d, want 200", res.status)
	}
}

func TestRateLimitConcurrent(t *testing.T) {
	api := newTestAPI(t)
	const max, callers = 50, 120
	key := api.mustMintKey(api.firm.ID, auth.KeySpec{RateLimitMax: max, RateLimitWindow: time.Hour})
	var ok, limited atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < callers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("GET", api.server.URL+"/v1/me", nil)
			req.Header.Set("Authorization", "Bearer "+key)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
			switch res.StatusCode {
			case http.StatusOK:
				ok.Add(1)
			case http.StatusTooManyRequests:
				limited.Add(1)
			default:
				t.Errorf("status %d", res.StatusCode)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != max || limited.Load() != callers-max {
		t.Errorf("got %d allowed and %d limited, want %d and %d", ok.Load(), limited.Load(), max, callers-max)
	}
}

func TestUnknownRoutes(t *testing.T) {
	api := newTestAPI(t)
	t.Run("unknown path", func(t *testing.T) {
		res := api.do(request{method: "GET", path: "/v1/nope", key: api.accountantKey})
		wantError(t, res, http.StatusNotFound, "not_found", "not_found", "no route for GET /v1/nope")
	})
	t.Run("outside /v1", func(t *testing.T) {
		res := api.do(request{method: "GET", path: "/", key: api.accountantKey})
		wantError(t, res, http.StatusNotFound, "not_found", "not_found", "no route for GET /")
	})
	t.Run("OPTIONS lists the allowed methods", func(t *testing.T) {
		req, _ := http.NewRequest("OPTIONS", api.server.URL+"/v1/tasks", nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || res.Header.Get("Allow") != "GET, OPTIONS, POST" || len(body) != 0 {
			t.Errorf("OPTIONS /v1/tasks: got %d, Allow %q, body %q; want 200, Allow %q, no body",
				res.StatusCode, res.Header.Get("Allow"), body, "GET, OPTIONS, POST")
		}
	})
	t.Run("wrong method", func(t *testing.T) {
		res := api.do(request{method: "DELETE", path: "/v1/me", key: api.accountantKey})
		wantError(t, res, http.StatusMethodNotAllowed, "bad_request", "method_not_allowed",
			"DELETE is not allowed on /v1/me (allowed: GET, OPTIONS)")
		if allow := res.header.Get("Allow"); allow != "GET, OPTIONS" {
			t.Errorf("Allow: got %q, want %q", allow, "GET, OPTIONS")
		}
	})
}

func TestHealth(t *testing.T) {
	api := newTestAPI(t)
	var got healthResponse
	res := api.do(request{method: "GET", path: "/v1/health"})
	res.decode(t, &got)
	if res.status != http.StatusOK || got != (healthResponse{Status: "ok", Version: "test"}) {
		t.Errorf("health: got %d %+v, want 200 ok", res.status, got)
	}
	if res.header.Get("RateLimit-Limit") != "" {
		t.Errorf("health is not rate limited, yet carries RateLimit-Limit")
	}

	api.store.Close()
	res = api.do(request{method: "GET", path: "/v1/health"})
	wantError(t, res, http.StatusServiceUnavailable, "unavailable", "database_unavailable", "the database does not answer")
}

func TestOpenAPIDocument(t *testing.T) {
	api := newTestAPI(t)
	res := api.do(request{method: "GET", path: "/v1/openapi.json"})
	doc, err := openapi3.NewLoader().LoadFromData(res.body)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Servers) != 1 || doc.Servers[0].URL != api.server.URL+"/v1" {
		t.Errorf("servers: got %v, want one with url %s/v1", doc.Servers, api.server.URL)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Errorf("openapi: got %s, want 3.1", doc.OpenAPI)
	}

	t.Run("every route is documented", func(t *testing.T) {
		for _, rt := range api.handler.routeTable() {
			if !strings.HasPrefix(rt.path, "/v1/") || rt.path == "/v1/docs" || strings.HasPrefix(rt.path, "/v1/docs/") {
				continue // the collect page and the reference: pages for people, outside the API the document describes
			}
			path := openAPIPath(rt.path)
			item := doc.Paths.Value(path)
			if item == nil || item.GetOperation(rt.method) == nil {
				t.Errorf("%s %s is served but not in openapi.json", rt.method, path)
				continue
			}
			op := item.GetOperation(rt.method)
			if rt.endpoint.access != public {
				for _, status := range []string{"401", "429", "500"} {
					if op.Responses.Value(status) == nil {
						t.Errorf("%s %s does not document %s", rt.method, path, status)
					}
				}
			}
			if rt.endpoint.permission != "" && op.Responses.Value("403") == nil {
				t.Errorf("%s %s needs %s but does not document 403", rt.method, path, rt.endpoint.permission)
			}
			if rt.endpoint.access == clientScoped {
				for _, status := range []string{"400", "404", "422"} {
					if op.Responses.Value(status) == nil {
						t.Errorf("%s %s takes x-client-id but does not document %s", rt.method, path, status)
					}
				}
			}
		}
	})
}

// TestReferenceNotAnOperation: the reference page and its files are pages
// for people, not operations of the API the reference shows.
func TestReferenceNotAnOperation(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(openAPISource)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/docs", "/docs/{asset}"} {
		if doc.Paths.Value(path) != nil {
			t.Errorf("openapi.json lists %s as an operation", path)
		}
	}
	for _, tag := range doc.Tags {
		if strings.Contains(tag.Description, "reference") {
			t.Errorf("tag %s says it holds the reference: %q", tag.Name, tag.Description)
		}
	}
	if !strings.Contains(doc.Info.Description, "the Accounting Collaboration API") || strings.Contains(doc.Info.Description, "the interface specification") {
		t.Errorf("the intro does not name the interface it documents: %q", doc.Info.Description)
	}
}

// openAPIPath turns a router path (/v1/tasks/:id) into the document's (/tasks/{id}).
func openAPIPath(routerPath string) string {
	parts := strings.Split(strings.TrimPrefix(routerPath, "/v1"), "/")
	for i, p := range parts {
		if strings.HasPrefix(p, ":") {
			parts[i] = "{" + p[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}
