package handlers

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/julienschmidt/httprouter"

	"acctapi/auth"
	"acctapi/db"
)

// The endpoints of later issues are built from the machinery tested here:
// probe routes under /v1/test/ go through the real route checks, body
// decoding, validation and error path, exactly as an endpoint does.

func addProbeRoutes(api *testAPI) {
	h := api.handler
	h.handle(h.router, http.MethodPost, "/v1/test/probe/:id", endpoint{access: clientScoped, permission: auth.TasksWrite}, probe(h))
	h.handle(h.router, http.MethodPost, "/v1/test/zod/:id", endpoint{access: clientScoped, permission: auth.UsersWrite, zod: true}, probe(h))
	h.handle(h.router, http.MethodGet, "/v1/test/client", endpoint{access: clientScoped}, func(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
		writeJSON(w, http.StatusOK, map[string]string{"clientId": stateOf(r).clientID})
	})
	h.handle(h.router, http.MethodGet, "/v1/test/fail/:what", endpoint{access: keyed}, func(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
		switch p.ByName("what") {
		case "panic":
			panic("boom: secret internals")
		case "internal":
			h.fail(w, r, errors.New("disk on fire at /var/secret/path"))
		case "notfound":
			h.fail(w, r, db.Errorf(db.ENOTFOUND, "task not found"))
		case "conflict":
			h.fail(w, r, db.Errorf(db.ECONFLICT, "a user with this email exists"))
		case "invalid":
			h.fail(w, r, &db.Error{Code: db.EINVALID, Message: "a task cannot be its own parent", Field: []any{"ParentID"}})
		case "cursor":
			h.fail(w, r, db.Errorf(db.EINVALIDCURSOR, "unknown cursor"))
		}
	})
}

// probe decodes one field of every kind and echoes what it read.
func probe(h *Handler) httprouter.Handle {
	return func(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
		var v validator
		id := v.pathID(p, "id")
		q := v.query(r.URL.Query())
		limit := q.int("limit", 1, 100, 20)
		sort := q.enum("sort", []string{"createdAt", "title"}, "createdAt")
		cursor := q.id("cursor")
		body, err := decodeBody(w, r, &v)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		title := body.string("title", stringRule{presence: required, trim: true, min: 1, max: 10})
		text := body.string("text", stringRule{presence: nullable})
		status := body.enum("status", []string{"OPEN", "DONE"}, optional)
		due := body.time("dueDate", nullable)
		parent := body.id("parentId", nullable)
		files := body.ids("fileIds", optional)
		email := body.email("email", optional)
		muted := body.bool("isMuted", optional)
		address, _ := body.object("address", optional)
		city := address.string("city", stringRule{presence: required, max: 5})
		if err := v.err(); err != nil {
			h.fail(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "limit": limit, "sort": sort, "cursor": cursor,
			"title": title.Value, "text": text, "status": status, "dueDate": due,
			"parentId": parent, "fileIds": files, "email": email, "isMuted": muted, "city": city,
			"client": stateOf(r).clientID,
		})
	}
}

const probeID = "cprobeprobeprobeprobe0001"

func TestClientHeader(t *testing.T) {
	api := newTestAPI(t)
	addProbeRoutes(api)
	get := func(key, clientID string) *response {
		return api.do(request{method: "GET", path: "/v1/test/client", key: key, clientID: clientID})
	}
	notFound := func(t *testing.T, res *response) {
		t.Helper()
		wantError(t, res, http.StatusNotFound, "not_found", "not_found", "client not found")
	}

	t.Run("accountant key reaches its firm's clients", func(t *testing.T) {
		for _, c := range []*db.Client{api.client, api.otherClient} {
			if res := get(api.accountantKey, c.ID); res.status != http.StatusOK || !strings.Contains(string(res.body), c.ID) {
				t.Errorf("client %s: got %d %s, want 200", c.ID, res.status, res.body)
			}
		}
	})
	t.Run("ids are case-insensitive", func(t *testing.T) {
		if res := get(api.accountantKey, strings.ToUpper(api.client.ID)); res.status != http.StatusOK {
			t.Errorf("upper-case id: got %d, want 200", res.status)
		}
		// Only ASCII letters fold: a Unicode letter whose lower case is an
		// ASCII one (the Kelvin sign, the long s) stays itself, so that no
		// other spelling names a record.
		var v validator
		if id, ok := checkID(&v, nil, "cABC\u212aDEF\u017fGH"); !ok || id != "cabc\u212adef\u017fgh" {
			t.Errorf("checkID: got %q, %v; want only the ASCII letters lower-cased", id, ok)
		}
	})
	t.Run("client key reaches its own client", func(t *testing.T) {
		if res := get(api.clientKey, api.client.ID); res.status != http.StatusOK {
			t.Errorf("got %d, want 200", res.status)
		}
	})
	t.Run("missing", func(t *testing.T) {
		wantError(t, get(api.accountantKey, ""), http.StatusBadRequest, "bad_request", "missing_client_id",
			"the x-client-id header is required: name the client this call acts for")
	})
	t.Run("not a cuid", func(t *testing.T) {
		for _, bad := range []string{"42", "c-1234567890", "client one", "c" + strings.Repeat("a", 100)} {
			wantIssues(t, get(api.accountantKey, bad), "ValidationError", []issue{
				{Code: "invalid_string", Path: []any{"headers", "x-client-id"}, Validation: "cuid", Message: "Invalid cuid"},
			})
		}
	})
	t.Run("another firm's client is indistinguishable from none", func(t *testing.T) {
		// Found by its own firm first, so that the server remembers it: what
		// it remembers is per firm.
		if res := get(api.other.accountantKey, api.other.client.ID); res.status != http.StatusOK {
			t.Fatalf("firm two's own client: got %d, want 200", res.status)
		}
		notFound(t, get(api.accountantKey, api.other.client.ID))
		notFound(t, get(api.accountantKey, "cnonexistentclient0000001"))
		notFound(t, get(api.other.accountantKey, api.client.ID))
	})
	t.Run("client key cannot reach another client of its firm", func(t *testing.T) {
		notFound(t, get(api.clientKey, api.otherClient.ID))
		notFound(t, get(api.otherClientClientKey, api.client.ID))
		notFound(t, get(api.clientKey, api.other.client.ID))
	})
	t.Run("authentication comes first", func(t *testing.T) {
		wantError(t, get("", ""), http.StatusUnauthorized, "auth_error", "unauthorized", "")
	})
}

func TestPermissions(t *testing.T) {
	api := newTestAPI(t)
	addProbeRoutes(api)
	readOnly := api.mustMintKey(api.firm.ID, auth.KeySpec{Permissions: []string{"tasks:read"}})
	res := api.do(request{method: "POST", path: "/v1/test/probe/" + probeID, key: readOnly, clientID: api.client.ID, body: map[string]any{"title": "x"}})
	wantError(t, res, http.StatusForbidden, "auth_error", "missing_scope", "this API key lacks the permission tasks:write")

	t.Run("the permission is checked before the client header", func(t *testing.T) {
		res := api.do(request{method: "POST", path: "/v1/test/probe/" + probeID, key: readOnly, body: map[string]any{"title": "x"}})
		wantError(t, res, http.StatusForbidden, "auth_error", "missing_scope", "")
	})
}

func TestBodyDecoding(t *testing.T) {
	api := newTestAPI(t)
	addProbeRoutes(api)
	post := func(body any, header http.Header) *response {
		return api.do(request{method: "POST", path: "/v1/test/probe/" + probeID, key: api.accountantKey, clientID: api.client.ID, body: body, header: header})
	}

	t.Run("valid", func(t *testing.T) {
		res := post(`{"title":"  Taxes  ","text":null,"status":"DONE","dueDate":"2026-12-01T10:00:00+02:00",
			"parentId":"CPARENTPARENT1","fileIds":["cfile00001","cfile00001","cfile00002"],"email":" Anna@Example.COM ",
			"isMuted":true,"address":{"city":"Köln"},"unknown":{"ignored":[1,2]}}`, nil)
		if res.status != http.StatusOK {
			t.Fatalf("got %d %s, want 200", res.status, res.body)
		}
		var got map[string]any
		res.decode(t, &got)
		checks := map[string]any{
			"title": "Taxes", "id": probeID, "limit": float64(20), "sort": "createdAt",
			"client": api.client.ID,
		}
		for k, want := range checks {
			if got[k] != want {
				t.Errorf("%s: got %v, want %v", k, got[k], want)
			}
		}
		field := func(name string) map[string]any { return got[name].(map[string]any) }
		if f := field("text"); f["Set"] != true || f["Null"] != true {
			t.Errorf("text: got %v, want set to null", f)
		}
		if f := field("dueDate"); f["Value"] != "2026-12-01T08:00:00Z" {
			t.Errorf("dueDate: got %v, want normalised to UTC", f["Value"])
		}
		if f := field("parentId"); f["Value"] != "cparentparent1" {
			t.Errorf("parentId: got %v, want lower case", f["Value"])
		}
		if f := field("fileIds"); len(f["Value"].([]any)) != 2 {
			t.Errorf("fileIds: got %v, want two, without the duplicate", f["Value"])
		}
		if f := field("email"); f["Value"] != "anna@example.com" {
			t.Errorf("email: got %v, want trimmed and lower-cased", f["Value"])
		}
		if f := field("status"); f["Set"] != true || f["Value"] != "DONE" {
			t.Errorf("status: got %v", f)
		}
		if f := field("city"); f["Value"] != "Köln" {
			t.Errorf("city: got %v", f)
		}
	})

	t.Run("absent is not null", func(t *testing.T) {
		res := post(`{"title":"x"}`, nil)
		if res.status != http.StatusOK {
			t.Fatalf("got %d %s", res.status, res.body)
		}
		var raw map[string]any
		res.decode(t, &raw)
		if f := raw["dueDate"].(map[string]any); f["Set"] != false || f["Null"] != false {
			t.Errorf("absent dueDate: got %v, want neither set nor null", f)
		}
	})

	t.Run("malformed JSON", func(t *testing.T) {
		for _, body := range []string{`{"title":`, `{title: "x"}`, `{"a":1}{"b":2}`, "\xff\xfe"} {
			wantError(t, post(body, nil), http.StatusBadRequest, "bad_request", "invalid_json", "the request body is not valid JSON")
		}
	})
	t.Run("empty body", func(t *testing.T) {
		wantError(t, post("", nil), http.StatusBadRequest, "bad_request", "invalid_json", "the request body is empty: send a JSON object")
	})
	t.Run("wrong content type", func(t *testing.T) {
		for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "application/jsonp", ";;"} {
			res := post(`{"title":"x"}`, http.Header{"Content-Type": {ct}})
			wantError(t, res, http.StatusBadRequest, "bad_request", "unsupported_media_type", "send the body as Content-Type: application/json")
		}
		if res := post(`{"title":"x"}`, http.Header{"Content-Type": {"application/json; charset=utf-8"}}); res.status != http.StatusOK {
			t.Errorf("application/json with charset: got %d, want 200", res.status)
		}
	})
	t.Run("body over 1 MiB", func(t *testing.T) {
		huge := `{"title":"` + strings.Repeat("a", maxJSONBody) + `"}`
		wantError(t, post(huge, nil), http.StatusRequestEntityTooLarge, "bad_request", "payload_too_large", "request body exceeds 1048576 bytes")
	})
	t.Run("body over 1 MiB without Content-Length", func(t *testing.T) {
		huge := strings.NewReader(`{"title":"` + strings.Repeat("a", maxJSONBody) + `"}`)
		req, _ := http.NewRequest("POST", api.server.URL+"/v1/test/probe/"+probeID, struct{ *strings.Reader }{huge})
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+api.accountantKey)
		req.Header.Set("x-client-id", api.client.ID)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("chunked huge body: got %d, want 413", res.StatusCode)
		}
	})
	t.Run("not an object", func(t *testing.T) {
		for body, kind := range map[string]string{`[1]`: "array", `"x"`: "string", `3`: "number", `null`: "null", `true`: "boolean"} {
			wantIssues(t, post(body, nil), "ValidationError", []issue{
				{Code: "invalid_type", Path: []any{}, Expected: "object", Received: kind, Message: "Expected object, received " + kind},
			})
		}
	})
}

func TestValidationIssues(t *testing.T) {
	api := newTestAPI(t)
	addProbeRoutes(api)
	post := func(path, body string) *response {
		return api.do(request{method: "POST", path: path, key: api.accountantKey, clientID: api.client.ID, body: body})
	}
	yes, no := true, false
	bound := func(n int64) *int64 { return &n }

	t.Run("missing required field", func(t *testing.T) {
		wantIssues(t, post("/v1/test/probe/"+probeID, `{}`), "ValidationError", []issue{
			{Code: "invalid_type", Path: []any{"title"}, Expected: "string", Received: "undefined", Message: "Required"},
		})
	})

	t.Run("every issue at once, in order", func(t *testing.T) {
		res := post("/v1/test/probe/nope?limit=0&sort=size&cursor=x", `{"title":"","text":5,"status":"done","dueDate":"yesterday",
			"parentId":null,"fileIds":["cfile00001",7,"bad"],"email":"no-at-sign","isMuted":"yes","address":{"city":"Düsseldorf"}}`)
		wantIssues(t, res, "ValidationError", []issue{
			{Code: "invalid_string", Path: []any{"params", "id"}, Validation: "cuid", Message: "Invalid cuid"},
			{Code: "too_small", Path: []any{"query", "limit"}, Minimum: bound(1), Type: "number", Inclusive: &yes, Exact: &no, Message: "Number must be greater than or equal to 1"},
			{Code: "invalid_enum_value", Path: []any{"query", "sort"}, Options: []string{"createdAt", "title"}, Received: "size", Message: "Invalid enum value. Expected 'createdAt' | 'title', received 'size'"},
			{Code: "invalid_string", Path: []any{"query", "cursor"}, Validation: "cuid", Message: "Invalid cuid"},
			{Code: "too_small", Path: []any{"title"}, Minimum: bound(1), Type: "string", Inclusive: &yes, Exact: &no, Message: "String must contain at least 1 character(s)"},
			{Code: "invalid_type", Path: []any{"text"}, Expected: "string", Received: "number", Message: "Expected string, received number"},
			{Code: "invalid_enum_value", Path: []any{"status"}, Options: []string{"OPEN", "DONE"}, Received: "done", Message: "Invalid enum value. Expected 'OPEN' | 'DONE', received 'done'"},
			{Code: "invalid_string", Path: []any{"dueDate"}, Validation: "datetime", Message: "Invalid datetime"},
			{Code: "invalid_type", Path: []any{"fileIds", 1}, Expected: "string", Received: "number", Message: "Expected string, received number"},
			{Code: "invalid_string", Path: []any{"fileIds", 2}, Validation: "cuid", Message: "Invalid cuid"},
			{Code: "invalid_string", Path: []any{"email"}, Validation: "email", Message: "Invalid email"},
			{Code: "invalid_type", Path: []any{"isMuted"}, Expected: "boolean", Received: "string", Message: "Expected boolean, received string"},
			{Code: "too_big", Path: []any{"address", "city"}, Maximum: bound(5), Type: "string", Inclusive: &yes, Exact: &no, Message: "String must contain at most 5 character(s)"},
		})
	})

	t.Run("query numbers", func(t *testing.T) {
		for query, want := range map[string]issue{
			"limit=abc": {Code: "invalid_type", Path: []any{"query", "limit"}, Expected: "number", Received: "nan", Message: "Expected number, received nan"},
			"limit=":    {Code: "invalid_type", Path: []any{"query", "limit"}, Expected: "number", Received: "nan", Message: "Expected number, received nan"},
			"limit=1.5": {Code: "invalid_type", Path: []any{"query", "limit"}, Expected: "integer", Received: "float", Message: "Expected integer, received float"},
			"limit=101": {Code: "too_big", Path: []any{"query", "limit"}, Maximum: bound(100), Type: "number", Inclusive: &yes, Exact: &no, Message: "Number must be less than or equal to 100"},
		} {
			wantIssues(t, post("/v1/test/probe/"+probeID+"?"+query, `{"title":"x"}`), "ValidationError", []issue{want})
		}
	})

	t.Run("null where not allowed, wrong container types", func(t *testing.T) {
		res := post("/v1/test/probe/"+probeID, `{"title":null,"status":null,"fileIds":{"a":1},"address":[1]}`)
		wantIssues(t, res, "ValidationError", []issue{
			{Code: "invalid_type", Path: []any{"title"}, Expected: "string", Received: "null", Message: "Expected string, received null"},
			{Code: "invalid_type", Path: []any{"status"}, Expected: "'OPEN' | 'DONE'", Received: "null", Message: "Expected 'OPEN' | 'DONE', received null"},
			{Code: "invalid_type", Path: []any{"fileIds"}, Expected: "array", Received: "object", Message: "Expected array, received object"},
			{Code: "invalid_type", Path: []any{"address"}, Expected: "object", Received: "array", Message: "Expected object, received array"},
		})
	})

	t.Run("huge strings and arrays", func(t *testing.T) {
		ids := make([]string, maxIDList+1)
		for i := range ids {
			ids[i] = "cfile" + strings.Repeat("0", 10)
		}
		res := api.do(request{method: "POST", path: "/v1/test/probe/" + probeID, key: api.accountantKey, clientID: api.client.ID,
			body: map[string]any{"title": strings.Repeat("ü", 11), "fileIds": ids, "email": strings.Repeat("a", 250) + "@b.de"}})
		wantIssues(t, res, "ValidationError", []issue{
			{Code: "too_big", Path: []any{"title"}, Maximum: bound(10), Type: "string", Inclusive: &yes, Exact: &no, Message: "String must contain at most 10 character(s)"},
			{Code: "too_big", Path: []any{"fileIds"}, Maximum: bound(maxIDList), Type: "array", Inclusive: &yes, Exact: &no, Message: "Array must contain at most 100 element(s)"},
			{Code: "too_big", Path: []any{"email"}, Maximum: bound(maxEmail), Type: "string", Inclusive: &yes, Exact: &no, Message: "String must contain at most 254 character(s)"},
		})
	})

	t.Run("ZodError on the endpoints that name it so", func(t *testing.T) {
		wantIssues(t, post("/v1/test/zod/"+probeID, `{}`), "ZodError", []issue{
			{Code: "invalid_type", Path: []any{"title"}, Expected: "string", Received: "undefined", Message: "Required"},
		})
	})
}

func TestErrorPath(t *testing.T) {
	api := newTestAPI(t)
	addProbeRoutes(api)
	get := func(what string) *response {
		return api.do(request{method: "GET", path: "/v1/test/fail/" + what, key: api.accountantKey})
	}
	internal := "internal server error; the request id identifies it in the server log"

	t.Run("a panic answers 500 and the server goes on", func(t *testing.T) {
		res := get("panic")
		wantError(t, res, http.StatusInternalServerError, "internal_error", "internal_error", internal)
		if strings.Contains(string(res.body), "boom") {
			t.Errorf("the panic value leaked: %s", res.body)
		}
		if !strings.Contains(api.logs.String(), "boom: secret internals") {
			t.Errorf("the panic is not in the log")
		}
		if res := api.do(request{method: "GET", path: "/v1/me", key: api.accountantKey}); res.status != http.StatusOK {
			t.Errorf("after a panic: got %d, want 200", res.status)
		}
	})
	t.Run("an unknown error answers a generic 500 and logs the cause", func(t *testing.T) {
		res := get("internal")
		wantError(t, res, http.StatusInternalServerError, "internal_error", "internal_error", internal)
		logs := api.logs.String()
		if !strings.Contains(logs, "disk on fire") || !strings.Contains(logs, res.header.Get("X-Request-Id")) {
			t.Errorf("the log lacks the cause or the request id")
		}
	})
	t.Run("store errors", func(t *testing.T) {
		wantError(t, get("notfound"), http.StatusNotFound, "not_found", "not_found", "task not found")
		wantError(t, get("conflict"), http.StatusConflict, "conflict", "conflict", "a user with this email exists")
		wantError(t, get("cursor"), http.StatusBadRequest, "bad_request", "invalid_cursor", "unknown cursor")
		wantIssues(t, get("invalid"), "ValidationError", []issue{
			{Code: "custom", Path: []any{"parentId"}, Message: "a task cannot be its own parent"},
		})
	})
	t.Run("the request log", func(t *testing.T) {
		api.do(request{method: "GET", path: "/v1/me", key: api.accountantKey})
		keyID, _, _ := auth.ParseKey(api.accountantKey)
		var found bool
		for _, line := range strings.Split(api.logs.String(), "\n") {
			if strings.Contains(line, `"route":"/v1/me"`) && strings.Contains(line, `"status":200`) &&
				strings.Contains(line, `"key_id":"`+keyID+`"`) && strings.Contains(line, `"request_id":"`) &&
				strings.Contains(line, `"method":"GET"`) && strings.Contains(line, `"duration_ms":`) {
				found = true
			}
		}
		if !found {
			t.Errorf("no request log line with method, route, status, duration, key id and request id:\n%s", api.logs.String())
		}
	})
}

func TestCallerGoesAway(t *testing.T) {
	api := newTestAPI(t)
	h := api.handler
	h.handle(h.router, http.MethodGet, "/v1/test/slow", endpoint{access: keyed}, func(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
		<-r.Context().Done()
		h.fail(w, r, r.Context().Err())
	})
	req, _ := http.NewRequest("GET", api.server.URL+"/v1/test/slow", nil)
	req.Header.Set("Authorization", "Bearer "+api.accountantKey)
	client := &http.Client{Timeout: 200 * time.Millisecond}
	if _, err := client.Do(req); err == nil {
		t.Fatal("the slow request answered; want the client to time out")
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(api.logs.String(), `"canceled":true`) {
		if time.Now().After(deadline) {
			t.Fatalf("no request log line marked canceled:\n%s", api.logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if strings.Contains(api.logs.String(), `"level":"ERROR"`) {
		t.Errorf("a caller hanging up was logged as an error:\n%s", api.logs.String())
	}
}

// TestAPIPath checks how the store's field names become the API's paths.
func TestAPIPath(t *testing.T) {
	for _, tc := range []struct {
		field []any
		want  []any
	}{
		{nil, []any{}},
		{[]any{"Cursor"}, []any{"query", "cursor"}},
		{[]any{"WorkspaceID"}, []any{"workspaceId"}},
		{[]any{"LabelIDs", 2}, []any{"labelIds", 2}},
		{[]any{"DestinationFolderID"}, []any{"destinationFolderId"}},
		{[]any{"URL"}, []any{"url"}},
		{[]any{"Name"}, []any{"name"}},
	} {
		if got := apiPath(tc.field); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("apiPath(%v): got %#v, want %#v", tc.field, got, tc.want)
		}
	}
}
