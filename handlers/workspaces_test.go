package handlers

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"acctapi/auth"
	"acctapi/db"
)

// Tests of the workspace endpoints: GET, POST /workspaces, PATCH
// /workspaces/{id}, the members of a workspace, its folders and labels.
// Every call goes through api.do, so every answer is also checked against
// the served OpenAPI document.

// Well-formed ids that name nothing.
const (
	wsMissingID     = "cnoworkspacenoworkspace02"
	wsMissingUserID = "cnousernousernousernouser1"
)

// The exact field sets of the records, sorted.
var (
	wsWorkspaceFields  = []string{"archivedAt", "clientId", "createdAt", "id", "name", "updatedAt"}
	wsMemberFields     = []string{"createdAt", "isMuted", "updatedAt", "user", "userId", "workspaceId"}
	wsMemberUserFields = []string{"email", "firstName", "id", "image", "lastName"}
	wsFolderFields     = []string{"createdAt", "id", "name", "parentId", "updatedAt", "workspaceId"}
	wsLabelFields      = []string{"createdAt", "id", "name", "updatedAt", "workspaceId"}
	wsPageFields       = []string{"data", "pagination"}
	wsPaginationFields = []string{"limit", "nextCursor", "previousCursor", "total"}
	wsRemovedFields    = []string{"deleted", "id", "object"}
)

const (
	wsMissingClientMsg = "the x-client-id header is required: name the client this call acts for"
	wsUnauthorized     = "missing or invalid API key: send Authorization: Bearer <API_KEY>"
	wsInvalidJSON      = "the request body is not valid JSON"
	wsEmptyBody        = "the request body is empty: send a JSON object"
	wsUnsupportedMedia = "send the body as Content-Type: application/json"
	wsTooLarge         = "request body exceeds 1048576 bytes"
	wsInvalidCursor    = "the cursor names no item of this list"
	wsClientNotFound   = "client not found"
)

// ---- records as the API answers them -------------------------------------

type wsWorkspace struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	CreatedAt  string  `json:"createdAt"`
	UpdatedAt  string  `json:"updatedAt"`
	ArchivedAt *string `json:"archivedAt"`
	ClientID   string  `json:"clientId"`
}

type wsMemberUser struct {
	ID        string  `json:"id"`
	Email     string  `json:"email"`
	FirstName *string `json:"firstName"`
	LastName  *string `json:"lastName"`
	Image     *string `json:"image"`
}

type wsMember struct {
	CreatedAt   string       `json:"createdAt"`
	UpdatedAt   string       `json:"updatedAt"`
	WorkspaceID string       `json:"workspaceId"`
	IsMuted     bool         `json:"isMuted"`
	UserID      string       `json:"userId"`
	User        wsMemberUser `json:"user"`
}

type wsFolder struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	WorkspaceID string  `json:"workspaceId"`
	ParentID    *string `json:"parentId"`
	CreatedAt   string  `json:"createdAt"`
	UpdatedAt   string  `json:"updatedAt"`
}

type wsLabel struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	WorkspaceID string `json:"workspaceId"`
	CreatedAt   string `json:"createdAt"`
	UpdatedAt   string `json:"updatedAt"`
}

type wsRemoved struct {
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
	ID      string `json:"id"`
}

type wsPagination struct {
	Limit          int     `json:"limit"`
	Total          int     `json:"total"`
	NextCursor     *string `json:"nextCursor"`
	PreviousCursor *string `json:"previousCursor"`
}

type wsPage[T any] struct {
	Data       []T          `json:"data"`
	Pagination wsPagination `json:"pagination"`
}

// wsJSON shows a value in failure messages (pointers as their values).
func wsJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// wsIDOf returns the id of a workspace, folder or label.
func wsIDOf(v any) string {
	switch x := v.(type) {
	case wsWorkspace:
		return x.ID
	case wsFolder:
		return x.ID
	case wsLabel:
		return x.ID
	case wsMember:
		return x.UserID
	}
	panic(fmt.Sprintf("no id in %T", v))
}

func wsIDs[T any](items []T) []string {
	ids := make([]string, len(items))
	for i, item := range items {
		ids[i] = wsIDOf(item)
	}
	return ids
}

// ---- decoding with exact field sets ---------------------------------------

// wsKeys returns the sorted keys of a JSON object.
func wsKeys(t *testing.T, raw []byte) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not a JSON object: %s: %v", raw, err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func wsWantKeys(t *testing.T, what string, raw []byte, want []string) {
	t.Helper()
	if got := wsKeys(t, raw); !reflect.DeepEqual(got, want) {
		t.Errorf("%s fields: got %v, want %v (%s)", what, got, want, raw)
	}
}

// wsStrict decodes raw into v, refusing fields v does not name.
func wsStrict(t *testing.T, raw []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}

// wsCheckItem checks the exact fields of one record (and of a member's user).
func wsCheckItem(t *testing.T, raw []byte, fields []string) {
	t.Helper()
	wsWantKeys(t, "record", raw, fields)
	if reflect.DeepEqual(fields, wsMemberFields) {
		var m map[string]json.RawMessage
		json.Unmarshal(raw, &m)
		wsWantKeys(t, "member user", m["user"], wsMemberUserFields)
		if string(m["isMuted"]) != "false" && string(m["isMuted"]) != "true" {
			t.Errorf("isMuted: got %s, want a boolean", m["isMuted"])
		}
	}
}

// wsDecode checks the status and the exact fields of a record answer and
// decodes it.
func wsDecode[T any](t *testing.T, res *response, status int, fields []string) T {
	t.Helper()
	if res.status != status {
		t.Fatalf("status: got %d, want %d (body %s)", res.status, status, res.body)
	}
	if ct := res.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type: got %q, want application/json", ct)
	}
	wsCheckItem(t, res.body, fields)
	var v T
	wsStrict(t, res.body, &v)
	return v
}

// wsDecodePage checks a 200 list answer: the envelope, the pagination
// object and every item have exactly their fields; data is an array, never
// null.
func wsDecodePage[T any](t *testing.T, res *response, fields []string) wsPage[T] {
	t.Helper()
	if res.status != http.StatusOK {
		t.Fatalf("status: got %d, want 200 (body %s)", res.status, res.body)
	}
	wsWantKeys(t, "page", res.body, wsPageFields)
	var raw struct {
		Data       []json.RawMessage `json:"data"`
		Pagination json.RawMessage   `json:"pagination"`
	}
	res.decode(t, &raw)
	if raw.Data == nil {
		t.Errorf("data: got %s, want an array", res.body)
	}
	wsWantKeys(t, "pagination", raw.Pagination, wsPaginationFields)
	for _, item := range raw.Data {
		wsCheckItem(t, item, fields)
	}
	var page wsPage[T]
	wsStrict(t, res.body, &page)
	return page
}

// wsDecodeMembers checks a member list: a bare array of members.
func wsDecodeMembers(t *testing.T, res *response) []wsMember {
	t.Helper()
	if res.status != http.StatusOK {
		t.Fatalf("status: got %d, want 200 (body %s)", res.status, res.body)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(res.body, &raw); err != nil || raw == nil {
		t.Fatalf("members: got %s, want a bare JSON array (%v)", res.body, err)
	}
	for _, item := range raw {
		wsCheckItem(t, item, wsMemberFields)
	}
	var members []wsMember
	wsStrict(t, res.body, &members)
	return members
}

// ---- calls -----------------------------------------------------------------

func (api *testAPI) wsCreateWorkspace(t *testing.T, key, clientID string, body any) wsWorkspace {
	t.Helper()
	res := api.do(request{method: "POST", path: "/v1/workspaces", key: key, clientID: clientID, body: body})
	return wsDecode[wsWorkspace](t, res, http.StatusCreated, wsWorkspaceFields)
}

func (api *testAPI) wsListWorkspaces(t *testing.T, key, clientID, query string) wsPage[wsWorkspace] {
	t.Helper()
	res := api.do(request{method: "GET", path: "/v1/workspaces?" + query, key: key, clientID: clientID})
	return wsDecodePage[wsWorkspace](t, res, wsWorkspaceFields)
}

// wsAllWorkspaces returns every workspace of the client (at most 100).
func (api *testAPI) wsAllWorkspaces(t *testing.T, key, clientID string) []wsWorkspace {
	t.Helper()
	page := api.wsListWorkspaces(t, key, clientID, "limit=100")
	if page.Pagination.NextCursor != nil {
		t.Fatalf("more than 100 workspaces")
	}
	return page.Data
}

func (api *testAPI) wsMembers(t *testing.T, key, clientID, workspaceID string) []wsMember {
	t.Helper()
	res := api.do(request{method: "GET", path: "/v1/workspaces/" + workspaceID + "/members", key: key, clientID: clientID})
	return wsDecodeMembers(t, res)
}

func (api *testAPI) wsAddMember(t *testing.T, key, clientID, workspaceID, userID string) wsMember {
	t.Helper()
	res := api.do(request{method: "POST", path: "/v1/workspaces/" + workspaceID + "/members", key: key, clientID: clientID,
		body: map[string]any{"userId": userID}})
	return wsDecode[wsMember](t, res, http.StatusCreated, wsMemberFields)
}

func (api *testAPI) wsRemoveMember(t *testing.T, key, clientID, workspaceID, userID string) *response {
	t.Helper()
	return api.do(request{method: "DELETE", path: "/v1/workspaces/" + workspaceID + "/members", key: key, clientID: clientID,
		body: map[string]any{"userId": userID}})
}

func (api *testAPI) wsCreateFolder(t *testing.T, key, clientID, workspaceID string, body any) wsFolder {
	t.Helper()
	res := api.do(request{method: "POST", path: "/v1/workspaces/" + workspaceID + "/folders", key: key, clientID: clientID, body: body})
	return wsDecode[wsFolder](t, res, http.StatusCreated, wsFolderFields)
}

func (api *testAPI) wsListFolders(t *testing.T, key, clientID, workspaceID, query string) wsPage[wsFolder] {
	t.Helper()
	res := api.do(request{method: "GET", path: "/v1/workspaces/" + workspaceID + "/folders?" + query, key: key, clientID: clientID})
	return wsDecodePage[wsFolder](t, res, wsFolderFields)
}

func (api *testAPI) wsCreateLabel(t *testing.T, key, clientID, workspaceID, name string) wsLabel {
	t.Helper()
	res := api.do(request{method: "POST", path: "/v1/workspaces/" + workspaceID + "/labels", key: key, clientID: clientID,
		body: map[string]any{"name": name}})
	return wsDecode[wsLabel](t, res, http.StatusCreated, wsLabelFields)
}

func (api *testAPI) wsListLabels(t *testing.T, key, clientID, workspaceID, query string) wsPage[wsLabel] {
	t.Helper()
	res := api.do(request{method: "GET", path: "/v1/workspaces/" + workspaceID + "/labels?" + query, key: key, clientID: clientID})
	return wsDecodePage[wsLabel](t, res, wsLabelFields)
}

// ---- fixtures ----------------------------------------------------------------

// wsClientUser inserts a user of the client (there are no user endpoints
// yet) and returns its id. first, last and image may be nil.
func (api *testAPI) wsClientUser(firmID, clientID, email string, first, last, image *string) string {
	api.t.Helper()
	id := db.NewID()
	api.exec(`INSERT INTO users (id, firm_id, client_id, email, first_name, last_name, image, client_role, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, 'user', 0, 0)`, id, firmID, clientID, email, first, last, image)
	return id
}

// wsAccountantUser inserts an accountant user of the firm, with the firm's
// built-in role user, and returns its id.
func (api *testAPI) wsAccountantUser(firmID, email string) string {
	api.t.Helper()
	id := db.NewID()
	api.exec(`INSERT INTO users (id, firm_id, email, first_name, role_id, created_at, updated_at)
		SELECT ?, ?, ?, 'Accountant', id, 0, 0 FROM roles WHERE firm_id = ? AND name = 'user'`, id, firmID, email, firmID)
	if got := api.sqlColumn(api.t, `SELECT count(*) FROM users WHERE id = ?`, id); got[0] != "1" {
		api.t.Fatalf("accountant user %s was not created (no role user in firm %s?)", email, firmID)
	}
	return id
}

// wsState reads every row the workspace endpoints could touch, of every
// tenant: a refused call must leave all of it as it was.
func (api *testAPI) wsState(t *testing.T) map[string][]string {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+api.store.Path()+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	column := func(query string) []string {
		rows, err := conn.Query(query)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		defer rows.Close()
		values := []string{}
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			values = append(values, v)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return values
	}
	return map[string][]string{
		"workspaces": column(`SELECT id || ' ' || client_id || ' ' || name || ' ' || coalesce(archived_at, 'NULL')
			|| ' ' || created_at || ' ' || updated_at FROM workspaces ORDER BY id`),
		"members": column(`SELECT workspace_id || ' ' || user_id || ' ' || is_muted || ' ' || created_at
			|| ' ' || updated_at FROM workspace_members ORDER BY workspace_id, user_id`),
		"folders": column(`SELECT id || ' ' || client_id || ' ' || workspace_id || ' ' || coalesce(parent_id, 'NULL')
			|| ' ' || name || ' ' || created_at || ' ' || updated_at FROM folders ORDER BY id`),
		"labels": column(`SELECT id || ' ' || client_id || ' ' || workspace_id || ' ' || name || ' ' || created_at
			|| ' ' || updated_at FROM labels ORDER BY id`),
		"users": column(`SELECT id || ' ' || email || ' ' || coalesce(client_id, 'NULL') FROM users ORDER BY id`),
		"tasks": column(`SELECT id || ' ' || workspace_id || ' ' || coalesce(created_by_id, 'NULL') || ' ' || title
			|| ' ' || updated_at FROM tasks ORDER BY id`),
		"files": column(`SELECT id || ' ' || workspace_id || ' ' || coalesce(created_by_id, 'NULL') || ' '
			|| coalesce(task_id, 'NULL') || ' ' || coalesce(folder_id, 'NULL') FROM files ORDER BY id`),
	}
}

// wsUnchanged fails when the state differs from before.
func (api *testAPI) wsUnchanged(t *testing.T, before map[string][]string) {
	t.Helper()
	after := api.wsState(t)
	for table, rows := range before {
		if !reflect.DeepEqual(after[table], rows) {
			t.Errorf("%s changed by a refused call:\n got %v\nwant %v", table, after[table], rows)
		}
	}
}

// wsRefused is one request that must be refused with nothing changed.
type wsRefused struct {
	name  string
	send  func() *response
	check func(*testing.T, *response)
}

// wsRunRefused runs each case a minute after the last, so that a write that
// slipped through would also show in an updated_at.
func (api *testAPI) wsRunRefused(t *testing.T, cases []wsRefused) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := api.wsState(t)
			api.clock.Advance(time.Minute)
			c.check(t, c.send())
			api.wsUnchanged(t, before)
		})
	}
}

// ---- issues ------------------------------------------------------------------

func wsTooSmallString(path ...any) issue {
	return issue{Code: "too_small", Path: path, Minimum: bound(1), Type: "string", Inclusive: &yes, Exact: &no,
		Message: "String must contain at least 1 character(s)"}
}

func wsTooLongName(path ...any) issue {
	return tooBigString(200, "String must contain at most 200 character(s)", path...)
}

func wsNotFound(t *testing.T, res *response, message string) {
	t.Helper()
	wantError(t, res, http.StatusNotFound, "not_found", "not_found", message)
}

func wsWorkspaceNotFound(id string) string { return "workspace " + id + " not found" }

// wsNameCases are the bad names of every endpoint that takes one; each must
// answer 422 with exactly the issue.
func wsNameCases() []struct {
	name  string
	body  any
	issue issue
} {
	return []struct {
		name  string
		body  any
		issue issue
	}{
		{"missing name", map[string]any{"other": "x"}, requiredIssue("name")},
		{"empty name", map[string]any{"name": ""}, wsTooSmallString("name")},
		{"blank name", map[string]any{"name": " \t\n "}, wsTooSmallString("name")},
		{"name of 201 characters", map[string]any{"name": strings.Repeat("ü", 201)}, wsTooLongName("name")},
		{"huge name", map[string]any{"name": strings.Repeat("x", 500_000)}, wsTooLongName("name")},
		{"name null", `{"name":null}`, typeIssueAt("string", "null", "name")},
		{"name a number", map[string]any{"name": 42}, typeIssueAt("string", "number", "name")},
		{"name a boolean", map[string]any{"name": true}, typeIssueAt("string", "boolean", "name")},
		{"name an array", map[string]any{"name": []string{"x"}}, typeIssueAt("string", "array", "name")},
		{"name an object", map[string]any{"name": map[string]any{"x": 1}}, typeIssueAt("string", "object", "name")},
		{"body an array", `[{"name":"x"}]`, typeIssueAt("object", "array")},
		{"body a string", `"x"`, typeIssueAt("object", "string")},
		{"body null", `null`, typeIssueAt("object", "null")},
	}
}

// wsBodyCases are the bodies refused before validation, for an endpoint
// sending to path with key and client A.
func (api *testAPI) wsBodyCases(method, path string) []wsRefused {
	send := func(body any, header http.Header) func() *response {
		return func() *response {
			return api.do(request{method: method, path: path, key: api.accountantKey, clientID: api.client.ID, body: body, header: header})
		}
	}
	huge := `{"name":"` + strings.Repeat("a", maxJSONBody) + `"}`
	return []wsRefused{
		{"malformed JSON", send(`{"name":"x",}`, nil), func(t *testing.T, res *response) {
			wantError(t, res, http.StatusBadRequest, "bad_request", "invalid_json", wsInvalidJSON)
		}},
		{"truncated JSON", send(`{"name":`, nil), func(t *testing.T, res *response) {
			wantError(t, res, http.StatusBadRequest, "bad_request", "invalid_json", wsInvalidJSON)
		}},
		{"two JSON values", send(`{"name":"a"}{"name":"b"}`, nil), func(t *testing.T, res *response) {
			wantError(t, res, http.StatusBadRequest, "bad_request", "invalid_json", wsInvalidJSON)
		}},
		{"empty body", send("", nil), func(t *testing.T, res *response) {
			wantError(t, res, http.StatusBadRequest, "bad_request", "invalid_json", wsEmptyBody)
		}},
		{"not sent as JSON", send(`{"name":"x","userId":"`+wsMissingUserID+`"}`, http.Header{"Content-Type": {"text/plain"}}), func(t *testing.T, res *response) {
			wantError(t, res, http.StatusBadRequest, "bad_request", "unsupported_media_type", wsUnsupportedMedia)
		}},
		{"body over 1 MiB", send(huge, nil), func(t *testing.T, res *response) {
			wantError(t, res, http.StatusRequestEntityTooLarge, "bad_request", "payload_too_large", wsTooLarge)
		}},
	}
}

// wsAccessCases are the checks before the request itself: key (401),
// permission (403) and the client header (400, 422, 404), for an endpoint
// that needs perm; each case's name starts with the method.
func (api *testAPI) wsAccessCases(method, path string, body any, perm auth.Permission, lacking string) []wsRefused {
	send := func(key, clientID string) func() *response {
		return func() *response {
			return api.do(request{method: method, path: path, key: key, clientID: clientID, body: body})
		}
	}
	lackingKey := api.mustMintKey(api.firm.ID, auth.KeySpec{Permissions: []string{lacking}})
	lackingClientKey := api.mustMintKey(api.firm.ID, auth.KeySpec{ClientID: api.client.ID, Permissions: []string{lacking}})
	scope := "this API key lacks the permission " + string(perm)
	cases := []wsRefused{
		{"no key", send("", api.client.ID), func(t *testing.T, res *response) {
			wantError(t, res, http.StatusUnauthorized, "auth_error", "unauthorized", wsUnauthorized)
		}},
		{"unknown key", send("ak_nokey_"+strings.Repeat("0", 64), api.client.ID), func(t *testing.T, res *response) {
			wantError(t, res, http.StatusUnauthorized, "auth_error", "unauthorized", wsUnauthorized)
		}},
		{"accountant key with only " + lacking, send(lackingKey, api.client.ID), func(t *testing.T, res *response) {
			wantError(t, res, http.StatusForbidden, "auth_error", "missing_scope", scope)
		}},
		{"client key with only " + lacking, send(lackingClientKey, api.client.ID), func(t *testing.T, res *response) {
			wantError(t, res, http.StatusForbidden, "auth_error", "missing_scope", scope)
		}},
		{"permission before the client header", send(lackingKey, ""), func(t *testing.T, res *response) {
			wantError(t, res, http.StatusForbidden, "auth_error", "missing_scope", scope)
		}},
		{"missing x-client-id", send(api.accountantKey, ""), func(t *testing.T, res *response) {
			wantError(t, res, http.StatusBadRequest, "bad_request", "missing_client_id", wsMissingClientMsg)
		}},
		{"missing x-client-id with a client key", send(api.clientKey, ""), func(t *testing.T, res *response) {
			wantError(t, res, http.StatusBadRequest, "bad_request", "missing_client_id", wsMissingClientMsg)
		}},
		{"malformed x-client-id", send(api.accountantKey, "client-one"), func(t *testing.T, res *response) {
			wantIssues(t, res, "ValidationError", []issue{cuidIssue("headers", "x-client-id")})
		}},
		{"x-client-id of another firm's client", send(api.accountantKey, api.other.client.ID), func(t *testing.T, res *response) {
			wsNotFound(t, res, wsClientNotFound)
		}},
		{"x-client-id of no client", send(api.accountantKey, "cnoclientnoclientnoclient1"), func(t *testing.T, res *response) {
			wsNotFound(t, res, wsClientNotFound)
		}},
		{"client key naming another client of its firm", send(api.clientKey, api.otherClient.ID), func(t *testing.T, res *response) {
			wsNotFound(t, res, wsClientNotFound)
		}},
		{"other firm's accountant key naming client A", send(api.other.accountantKey, api.client.ID), func(t *testing.T, res *response) {
			wsNotFound(t, res, wsClientNotFound)
		}},
	}
	for i := range cases {
		cases[i].name = method + ": " + cases[i].name
	}
	return cases
}

// ---- POST /v1/workspaces ---------------------------------------------------------

func TestCreateWorkspace(t *testing.T) {
	api := newTestAPI(t)
	A, B := api.client.ID, api.otherClient.ID
	now := apiTime(api.clock.Now())

	t.Run("a new workspace has every field", func(t *testing.T) {
		got := api.wsCreateWorkspace(t, api.accountantKey, A, map[string]any{"name": "  Annual accounts 2026 \n"})
		want := wsWorkspace{ID: got.ID, Name: "Annual accounts 2026", CreatedAt: now, UpdatedAt: now, ClientID: A}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("workspace: got %s, want %s", wsJSON(got), wsJSON(want))
		}
		if !generatedID.MatchString(got.ID) {
			t.Errorf("id: got %q, want a generated cuid", got.ID)
		}
		if all := api.wsAllWorkspaces(t, api.clientKey, A); !reflect.DeepEqual(all, []wsWorkspace{got}) {
			t.Errorf("client A's workspaces: got %s, want only the new one", wsJSON(all))
		}
	})

	t.Run("archivedAt is null, not absent", func(t *testing.T) {
		res := api.do(request{method: "POST", path: "/v1/workspaces", key: api.accountantKey, clientID: A, body: map[string]any{"name": "Null"}})
		var raw map[string]json.RawMessage
		res.decode(t, &raw)
		if string(raw["archivedAt"]) != "null" {
			t.Errorf("archivedAt: got %s, want null", raw["archivedAt"])
		}
	})

	t.Run("with the client's own key", func(t *testing.T) {
		api.clock.Advance(time.Hour)
		got := api.wsCreateWorkspace(t, api.clientKey, A, map[string]any{"name": "Client's own"})
		if got.ClientID != A || got.CreatedAt != apiTime(api.clock.Now()) || got.UpdatedAt != got.CreatedAt || got.ArchivedAt != nil {
			t.Errorf("workspace: got %s", wsJSON(got))
		}
	})

	t.Run("the client comes from x-client-id", func(t *testing.T) {
		got := api.wsCreateWorkspace(t, api.accountantKey, B, map[string]any{"name": "For client B", "clientId": A})
		if got.ClientID != B {
			t.Errorf("clientId: got %s, want %s (the x-client-id, not the body)", got.ClientID, B)
		}
		if ids := wsIDs(api.wsAllWorkspaces(t, api.otherClientClientKey, B)); !reflect.DeepEqual(ids, []string{got.ID}) {
			t.Errorf("client B's workspaces: got %v, want [%s]", ids, got.ID)
		}
		for _, w := range api.wsAllWorkspaces(t, api.accountantKey, A) {
			if w.ID == got.ID {
				t.Errorf("client A's list shows client B's workspace %s", got.ID)
			}
		}
	})

	t.Run("unknown fields are ignored", func(t *testing.T) {
		got := api.wsCreateWorkspace(t, api.accountantKey, A, map[string]any{"name": "Ignored", "id": wsMissingID,
			"archivedAt": "2026-01-01T00:00:00Z", "createdAt": "2000-01-01T00:00:00Z", "clientId": api.other.client.ID, "extra": []int{1}})
		if got.ID == wsMissingID || got.ArchivedAt != nil || got.CreatedAt != apiTime(api.clock.Now()) || got.ClientID != A {
			t.Errorf("workspace: got %s, want the unknown and read-only fields ignored", wsJSON(got))
		}
	})

	t.Run("a name of 200 characters", func(t *testing.T) {
		name := strings.Repeat("ä", 200)
		if got := api.wsCreateWorkspace(t, api.accountantKey, A, map[string]any{"name": name}); got.Name != name {
			t.Errorf("name: got %d characters, want 200", len([]rune(got.Name)))
		}
	})

	t.Run("names need not be unique", func(t *testing.T) {
		a := api.wsCreateWorkspace(t, api.accountantKey, A, map[string]any{"name": "Twice"})
		b := api.wsCreateWorkspace(t, api.accountantKey, A, map[string]any{"name": "Twice"})
		if a.ID == b.ID {
			t.Errorf("two workspaces share the id %s", a.ID)
		}
	})

	t.Run("refused", func(t *testing.T) {
		post := func(body any) func() *response {
			return func() *response {
				return api.do(request{method: "POST", path: "/v1/workspaces", key: api.accountantKey, clientID: A, body: body})
			}
		}
		var cases []wsRefused
		for _, c := range wsNameCases() {
			cases = append(cases, wsRefused{c.name, post(c.body), func(t *testing.T, res *response) {
				wantIssues(t, res, "ValidationError", []issue{c.issue})
			}})
		}
		cases = append(cases, api.wsBodyCases("POST", "/v1/workspaces")...)
		cases = append(cases, api.wsAccessCases("POST", "/v1/workspaces", map[string]any{"name": "x"}, auth.WorkspacesWrite, "workspaces:read")...)
		api.wsRunRefused(t, cases)
	})
}

// ---- GET /v1/workspaces ----------------------------------------------------------

func TestListWorkspaces(t *testing.T) {
	api := newTestAPI(t)
	A, B, C := api.client.ID, api.otherClient.ID, api.other.client.ID

	t.Run("no workspaces: an empty page", func(t *testing.T) {
		res := api.do(request{method: "GET", path: "/v1/workspaces", key: api.accountantKey, clientID: A})
		want := `{"data":[],"pagination":{"limit":20,"total":0,"nextCursor":null,"previousCursor":null}}`
		if got := strings.TrimSpace(string(res.body)); res.status != http.StatusOK || got != want {
			t.Errorf("empty list: got %d %s, want 200 %s", res.status, got, want)
		}
	})

	// Three workspaces in one second and two a minute later: ties on
	// createdAt are broken by id.
	var created []wsWorkspace
	for i := range 5 {
		if i == 3 {
			api.clock.Advance(time.Minute)
		}
		created = append(created, api.wsCreateWorkspace(t, api.accountantKey, A, map[string]any{"name": fmt.Sprintf("W%d", i)}))
	}
	wsB := api.wsCreateWorkspace(t, api.otherClientClientKey, B, map[string]any{"name": "B's"})
	wsC := api.wsCreateWorkspace(t, api.other.clientKey, C, map[string]any{"name": "C's"})
	newest := append([]wsWorkspace(nil), created...)
	sort.Slice(newest, func(i, j int) bool {
		if newest[i].CreatedAt != newest[j].CreatedAt {
			return newest[i].CreatedAt > newest[j].CreatedAt
		}
		return newest[i].ID > newest[j].ID
	})
	oldest := reverseSlice(newest)

	t.Run("default: 20 per page, newest first, ties by id desc", func(t *testing.T) {
		page := api.wsListWorkspaces(t, api.accountantKey, A, "")
		if !reflect.DeepEqual(page.Data, newest) {
			t.Errorf("data:\n got %s\nwant %s", wsJSON(page.Data), wsJSON(newest))
		}
		want := wsPagination{Limit: 20, Total: 5}
		if !reflect.DeepEqual(page.Pagination, want) {
			t.Errorf("pagination: got %s, want %s", wsJSON(page.Pagination), wsJSON(want))
		}
	})

	t.Run("both kinds of key see the same list", func(t *testing.T) {
		a := api.wsListWorkspaces(t, api.accountantKey, A, "limit=100")
		c := api.wsListWorkspaces(t, api.clientKey, strings.ToUpper(A), "limit=100")
		if !reflect.DeepEqual(a, c) {
			t.Errorf("client key: got %s, want %s", wsJSON(c), wsJSON(a))
		}
	})

	t.Run("forward by nextCursor and back by previousCursor", func(t *testing.T) {
		type want struct {
			items      []wsWorkspace
			next, prev *string
		}
		checkPage := func(t *testing.T, query string, w want) wsPage[wsWorkspace] {
			t.Helper()
			page := api.wsListWorkspaces(t, api.accountantKey, A, query)
			if !reflect.DeepEqual(wsIDs(page.Data), wsIDs(w.items)) {
				t.Errorf("%s: got %v, want %v", query, wsIDs(page.Data), wsIDs(w.items))
			}
			wantPagination := wsPagination{Limit: 2, Total: 5, NextCursor: w.next, PreviousCursor: w.prev}
			if !reflect.DeepEqual(page.Pagination, wantPagination) {
				t.Errorf("%s: pagination got %s, want %s", query, wsJSON(page.Pagination), wsJSON(wantPagination))
			}
			return page
		}
		p1 := checkPage(t, "limit=2", want{newest[0:2], &newest[2].ID, nil})
		p2 := checkPage(t, "limit=2&cursor="+*p1.Pagination.NextCursor, want{newest[2:4], &newest[4].ID, &newest[0].ID})
		p3 := checkPage(t, "limit=2&cursor="+*p2.Pagination.NextCursor, want{newest[4:5], nil, &newest[2].ID})
		back2 := checkPage(t, "limit=2&cursor="+*p3.Pagination.PreviousCursor, want{newest[2:4], &newest[4].ID, &newest[0].ID})
		back1 := checkPage(t, "limit=2&cursor="+*back2.Pagination.PreviousCursor, want{newest[0:2], &newest[2].ID, nil})
		if !reflect.DeepEqual(back1, p1) || !reflect.DeepEqual(back2, p2) {
			t.Errorf("paging back gave other pages than paging forward")
		}
		// A cursor in the middle of a page: fewer than limit items before it.
		checkPage(t, "limit=2&cursor="+strings.ToUpper(newest[1].ID), want{newest[1:3], &newest[3].ID, &newest[0].ID})
	})

	t.Run("order=asc", func(t *testing.T) {
		page := api.wsListWorkspaces(t, api.accountantKey, A, "order=asc&sort=createdAt&limit=3")
		want := wsPagination{Limit: 3, Total: 5, NextCursor: &oldest[3].ID}
		if !reflect.DeepEqual(page.Data, oldest[:3]) || !reflect.DeepEqual(page.Pagination, want) {
			t.Errorf("asc: got %v %s, want %v %s", wsIDs(page.Data), wsJSON(page.Pagination), wsIDs(oldest[:3]), wsJSON(want))
		}
		page = api.wsListWorkspaces(t, api.accountantKey, A, "order=asc&limit=3&cursor="+oldest[3].ID)
		want = wsPagination{Limit: 3, Total: 5, PreviousCursor: &oldest[0].ID}
		if !reflect.DeepEqual(page.Data, oldest[3:]) || !reflect.DeepEqual(page.Pagination, want) {
			t.Errorf("asc page 2: got %v %s, want %v %s", wsIDs(page.Data), wsJSON(page.Pagination), wsIDs(oldest[3:]), wsJSON(want))
		}
	})

	t.Run("limit bounds", func(t *testing.T) {
		if page := api.wsListWorkspaces(t, api.accountantKey, A, "limit=1"); len(page.Data) != 1 || page.Pagination.Limit != 1 {
			t.Errorf("limit=1: got %d items, limit %d", len(page.Data), page.Pagination.Limit)
		}
		if page := api.wsListWorkspaces(t, api.accountantKey, A, "limit=100"); len(page.Data) != 5 || page.Pagination.Limit != 100 || page.Pagination.NextCursor != nil {
			t.Errorf("limit=100: got %d items, %s", len(page.Data), wsJSON(page.Pagination))
		}
	})

	t.Run("tenants", func(t *testing.T) {
		check := func(t *testing.T, key, clientID string, want []string) {
			t.Helper()
			page := api.wsListWorkspaces(t, key, clientID, "limit=100")
			if got := wsIDs(page.Data); !reflect.DeepEqual(got, want) || page.Pagination.Total != len(want) {
				t.Errorf("workspaces of %s: got %v (total %d), want %v", clientID, got, page.Pagination.Total, want)
			}
		}
		check(t, api.accountantKey, A, wsIDs(newest))
		check(t, api.clientKey, A, wsIDs(newest))
		check(t, api.accountantKey, B, []string{wsB.ID})
		check(t, api.otherClientClientKey, B, []string{wsB.ID})
		check(t, api.other.accountantKey, C, []string{wsC.ID})
		check(t, api.other.clientKey, C, []string{wsC.ID})
	})

	t.Run("a cursor of another client is an unknown cursor", func(t *testing.T) {
		unknown := api.do(request{method: "GET", path: "/v1/workspaces?cursor=" + wsMissingID, key: api.accountantKey, clientID: A})
		wantError(t, unknown, http.StatusBadRequest, "bad_request", "invalid_cursor", wsInvalidCursor)
		for _, id := range []string{wsB.ID, wsC.ID} {
			res := api.do(request{method: "GET", path: "/v1/workspaces?cursor=" + id, key: api.accountantKey, clientID: A})
			wantError(t, res, http.StatusBadRequest, "bad_request", "invalid_cursor", wsInvalidCursor)
			sameBodyButID(t, res, id, unknown, wsMissingID)
		}
	})

	t.Run("refused", func(t *testing.T) {
		get := func(query string) func() *response {
			return func() *response {
				return api.do(request{method: "GET", path: "/v1/workspaces?" + query, key: api.accountantKey, clientID: A})
			}
		}
		issues := func(want ...issue) func(*testing.T, *response) {
			return func(t *testing.T, res *response) { wantIssues(t, res, "ValidationError", want) }
		}
		limitSmall := issue{Code: "too_small", Path: []any{"query", "limit"}, Minimum: bound(1), Type: "number", Inclusive: &yes, Exact: &no,
			Message: "Number must be greater than or equal to 1"}
		limitBig := issue{Code: "too_big", Path: []any{"query", "limit"}, Maximum: bound(100), Type: "number", Inclusive: &yes, Exact: &no,
			Message: "Number must be less than or equal to 100"}
		sortIssue := func(received string) issue {
			return issue{Code: "invalid_enum_value", Path: []any{"query", "sort"}, Options: []string{"createdAt"}, Received: received,
				Message: "Invalid enum value. Expected 'createdAt', received '" + received + "'"}
		}
		orderIssue := func(received string) issue {
			return issue{Code: "invalid_enum_value", Path: []any{"query", "order"}, Options: []string{"asc", "desc"}, Received: received,
				Message: "Invalid enum value. Expected 'asc' | 'desc', received '" + received + "'"}
		}
		cases := []wsRefused{
			{"limit=0", get("limit=0"), issues(limitSmall)},
			{"limit=-1", get("limit=-1"), issues(limitSmall)},
			{"limit=101", get("limit=101"), issues(limitBig)},
			{"limit=abc", get("limit=abc"), issues(typeIssueAt("number", "nan", "query", "limit"))},
			{"limit empty", get("limit="), issues(typeIssueAt("number", "nan", "query", "limit"))},
			{"limit=1.5", get("limit=1.5"), issues(typeIssueAt("integer", "float", "query", "limit"))},
			{"sort=name", get("sort=name"), issues(sortIssue("name"))},
			{"sort=updatedAt", get("sort=updatedAt"), issues(sortIssue("updatedAt"))},
			{"order=up", get("order=up"), issues(orderIssue("up"))},
			{"order=DESC", get("order=DESC"), issues(orderIssue("DESC"))},
			{"cursor not a cuid", get("cursor=page-2"), issues(cuidIssue("query", "cursor"))},
			{"all at once, in order", get("order=sideways&sort=name&cursor=x&limit=0"),
				issues(limitSmall, cuidIssue("query", "cursor"), sortIssue("name"), orderIssue("sideways"))},
		}
		cases = append(cases, api.wsAccessCases("GET", "/v1/workspaces", nil, auth.WorkspacesRead, "tasks:read")...)
		api.wsRunRefused(t, cases)
	})
}

// ---- PATCH /v1/workspaces/{id} ------------------------------------------------------

func TestRenameWorkspace(t *testing.T) {
	api := newTestAPI(t)
	A, B, C := api.client.ID, api.otherClient.ID, api.other.client.ID
	ws := api.wsCreateWorkspace(t, api.accountantKey, A, map[string]any{"name": "Before"})
	wsB := api.wsCreateWorkspace(t, api.otherClientClientKey, B, map[string]any{"name": "B's"})
	wsC := api.wsCreateWorkspace(t, api.other.clientKey, C, map[string]any{"name": "C's"})
	patch := func(key, clientID, id string, body any) *response {
		return api.do(request{method: "PATCH", path: "/v1/workspaces/" + id, key: key, clientID: clientID, body: body})
	}
	current := func(t *testing.T, key, clientID, id string) wsWorkspace {
		t.Helper()
		for _, w := range api.wsAllWorkspaces(t, key, clientID) {
			if w.ID == id {
				return w
			}
		}
		t.Fatalf("workspace %s is not in the list of %s", id, clientID)
		return wsWorkspace{}
	}

	t.Run("renames, trims, and moves updatedAt only", func(t *testing.T) {
		api.clock.Advance(3 * time.Hour)
		got := wsDecode[wsWorkspace](t, patch(api.accountantKey, A, ws.ID, map[string]any{"name": "\t After  "}), http.StatusOK, wsWorkspaceFields)
		want := ws
		want.Name, want.UpdatedAt = "After", apiTime(api.clock.Now())
		if !reflect.DeepEqual(got, want) {
			t.Errorf("renamed: got %s, want %s", wsJSON(got), wsJSON(want))
		}
		if stored := current(t, api.accountantKey, A, ws.ID); !reflect.DeepEqual(stored, got) {
			t.Errorf("listed: got %s, want the answer %s", wsJSON(stored), wsJSON(got))
		}
		ws = got
	})

	t.Run("with the client key and an upper-case id", func(t *testing.T) {
		api.clock.Advance(time.Minute)
		got := wsDecode[wsWorkspace](t, patch(api.clientKey, A, strings.ToUpper(ws.ID), map[string]any{"name": "By the client", "id": wsB.ID}),
			http.StatusOK, wsWorkspaceFields)
		if got.ID != ws.ID || got.Name != "By the client" || got.UpdatedAt != apiTime(api.clock.Now()) || got.CreatedAt != ws.CreatedAt {
			t.Errorf("renamed: got %s", wsJSON(got))
		}
		if b := current(t, api.otherClientClientKey, B, wsB.ID); !reflect.DeepEqual(b, wsB) {
			t.Errorf("client B's workspace: got %s, want %s (the body's id is ignored)", wsJSON(b), wsJSON(wsB))
		}
		ws = got
	})

	t.Run("the same name again still moves updatedAt", func(t *testing.T) {
		api.clock.Advance(time.Minute)
		got := wsDecode[wsWorkspace](t, patch(api.accountantKey, A, ws.ID, map[string]any{"name": ws.Name}), http.StatusOK, wsWorkspaceFields)
		if got.Name != ws.Name || got.UpdatedAt != apiTime(api.clock.Now()) {
			t.Errorf("renamed to the same name: got %s", wsJSON(got))
		}
		ws = got
	})

	t.Run("an accountant key reaches every client of its firm", func(t *testing.T) {
		got := wsDecode[wsWorkspace](t, patch(api.accountantKey, B, wsB.ID, map[string]any{"name": "B renamed"}), http.StatusOK, wsWorkspaceFields)
		if got.ClientID != B || got.Name != "B renamed" {
			t.Errorf("client B's workspace: got %s", wsJSON(got))
		}
		wsB = got
	})

	t.Run("refused", func(t *testing.T) {
		send := func(id string, body any) func() *response {
			return func() *response { return patch(api.accountantKey, A, id, body) }
		}
		missing := patch(api.accountantKey, A, wsMissingID, map[string]any{"name": "x"})
		wsNotFound(t, missing, wsWorkspaceNotFound(wsMissingID))
		var cases []wsRefused
		for _, c := range wsNameCases() {
			cases = append(cases, wsRefused{c.name, send(ws.ID, c.body), func(t *testing.T, res *response) {
				wantIssues(t, res, "ValidationError", []issue{c.issue})
			}})
		}
		crossTenant := func(id string) func(*testing.T, *response) {
			return func(t *testing.T, res *response) {
				wsNotFound(t, res, wsWorkspaceNotFound(id))
				sameBodyButID(t, res, id, missing, wsMissingID)
			}
		}
		cases = append(cases,
			wsRefused{"bad path id", send("nope", map[string]any{"name": "x"}), func(t *testing.T, res *response) {
				wantIssues(t, res, "ValidationError", []issue{cuidIssue("params", "id")})
			}},
			wsRefused{"path id too long", send("c"+strings.Repeat("a", 64), map[string]any{"name": "x"}), func(t *testing.T, res *response) {
				wantIssues(t, res, "ValidationError", []issue{cuidIssue("params", "id")})
			}},
			wsRefused{"bad path id and a bad name, all reported", send("nope", map[string]any{"name": ""}), func(t *testing.T, res *response) {
				wantIssues(t, res, "ValidationError", []issue{cuidIssue("params", "id"), wsTooSmallString("name")})
			}},
			wsRefused{"unknown workspace", send(wsMissingID, map[string]any{"name": "x"}), func(t *testing.T, res *response) {
				wsNotFound(t, res, wsWorkspaceNotFound(wsMissingID))
			}},
			wsRefused{"workspace of client B, accountant key", send(wsB.ID, map[string]any{"name": "Hijacked"}), crossTenant(wsB.ID)},
			wsRefused{"workspace of client B, client key", func() *response { return patch(api.clientKey, A, wsB.ID, map[string]any{"name": "Hijacked"}) },
				crossTenant(wsB.ID)},
			wsRefused{"workspace of another firm", send(wsC.ID, map[string]any{"name": "Hijacked"}), crossTenant(wsC.ID)},
			wsRefused{"client A's workspace from another firm", func() *response {
				return patch(api.other.accountantKey, C, ws.ID, map[string]any{"name": "Hijacked"})
			}, crossTenant(ws.ID)},
			wsRefused{"client A's workspace named for client B", func() *response {
				return patch(api.accountantKey, B, ws.ID, map[string]any{"name": "Hijacked"})
			}, crossTenant(ws.ID)},
		)
		cases = append(cases, api.wsBodyCases("PATCH", "/v1/workspaces/"+ws.ID)...)
		cases = append(cases, api.wsAccessCases("PATCH", "/v1/workspaces/"+ws.ID, map[string]any{"name": "x"}, auth.WorkspacesWrite, "workspaces:read")...)
		api.wsRunRefused(t, cases)

		if got := current(t, api.accountantKey, A, ws.ID); !reflect.DeepEqual(got, ws) {
			t.Errorf("client A's workspace after refused calls: got %s, want %s", wsJSON(got), wsJSON(ws))
		}
		if got := current(t, api.other.clientKey, C, wsC.ID); !reflect.DeepEqual(got, wsC) {
			t.Errorf("client C's workspace after refused calls: got %s, want %s", wsJSON(got), wsJSON(wsC))
		}
	})

	t.Run("other methods", func(t *testing.T) {
		res := api.do(request{method: "GET", path: "/v1/workspaces/" + ws.ID, key: api.accountantKey, clientID: A})
		if res.status != http.StatusMethodNotAllowed || !strings.Contains(res.header.Get("Allow"), "PATCH") {
			t.Errorf("GET /v1/workspaces/{id}: got %d Allow %q, want 405 with PATCH allowed", res.status, res.header.Get("Allow"))
		}
	})
}

// ---- members ------------------------------------------------------------------

func TestWorkspaceMembers(t *testing.T) {
	api := newTestAPI(t)
	A, B, C := api.client.ID, api.otherClient.ID, api.other.client.ID
	firm1, firm2 := api.firm.ID, api.other.firm.ID
	ws := api.mustCreateWorkspace(A, "Main")
	ws2 := api.mustCreateWorkspace(A, "Second")
	wsB := api.mustCreateWorkspace(B, "B's")
	wsC := api.mustCreateWorkspace(C, "C's")

	anna := api.wsClientUser(firm1, A, "anna@client-a.example", ptr("Anna"), ptr("Amsel"), ptr("https://img.example/anna.png"))
	ben := api.wsClientUser(firm1, A, "ben@client-a.example", nil, nil, nil)
	bert := api.wsClientUser(firm1, B, "bert@client-b.example", ptr("Bert"), ptr("Bach"), nil)
	carl := api.wsClientUser(firm2, C, "carl@client-c.example", ptr("Carl"), ptr("Cello"), nil)
	accountant := api.wsAccountantUser(firm1, "acc@firm-one.example")
	otherAccountant := api.wsAccountantUser(firm2, "acc@firm-two.example")
	// Client B's workspace has a member, so that a call that reached it would
	// change something.
	api.wsAddMember(t, api.accountantKey, B, wsB, bert)
	api.wsAddMember(t, api.other.accountantKey, C, wsC, carl)

	add := func(key, clientID, workspaceID string, body any) *response {
		return api.do(request{method: "POST", path: "/v1/workspaces/" + workspaceID + "/members", key: key, clientID: clientID, body: body})
	}
	remove := func(key, clientID, workspaceID string, body any) *response {
		return api.do(request{method: "DELETE", path: "/v1/workspaces/" + workspaceID + "/members", key: key, clientID: clientID, body: body})
	}
	list := func(t *testing.T) []wsMember {
		t.Helper()
		return api.wsMembers(t, api.accountantKey, A, ws)
	}
	t0 := api.clock.Now()

	t.Run("no members: an empty array", func(t *testing.T) {
		res := api.do(request{method: "GET", path: "/v1/workspaces/" + ws + "/members", key: api.accountantKey, clientID: A})
		if got := strings.TrimSpace(string(res.body)); res.status != http.StatusOK || got != "[]" {
			t.Errorf("members: got %d %s, want 200 []", res.status, got)
		}
	})

	var annaMember, accountantMember wsMember
	t.Run("add a client user", func(t *testing.T) {
		annaMember = api.wsAddMember(t, api.accountantKey, A, ws, anna)
		want := wsMember{CreatedAt: apiTime(t0), UpdatedAt: apiTime(t0), WorkspaceID: ws, IsMuted: false, UserID: anna,
			User: wsMemberUser{ID: anna, Email: "anna@client-a.example", FirstName: ptr("Anna"), LastName: ptr("Amsel"), Image: ptr("https://img.example/anna.png")}}
		if !reflect.DeepEqual(annaMember, want) {
			t.Errorf("member: got %s, want %s", wsJSON(annaMember), wsJSON(want))
		}
		if got := list(t); !reflect.DeepEqual(got, []wsMember{want}) {
			t.Errorf("members: got %s, want %s", wsJSON(got), wsJSON([]wsMember{want}))
		}
	})

	t.Run("add an accountant user of the firm", func(t *testing.T) {
		api.clock.Advance(time.Minute)
		accountantMember = api.wsAddMember(t, api.clientKey, A, strings.ToUpper(ws), strings.ToUpper(accountant))
		want := wsMember{CreatedAt: apiTime(api.clock.Now()), UpdatedAt: apiTime(api.clock.Now()), WorkspaceID: ws, UserID: accountant,
			User: wsMemberUser{ID: accountant, Email: "acc@firm-one.example", FirstName: ptr("Accountant")}}
		if !reflect.DeepEqual(accountantMember, want) {
			t.Errorf("member: got %s, want %s", wsJSON(accountantMember), wsJSON(want))
		}
	})

	t.Run("null names and image are null, not absent", func(t *testing.T) {
		api.clock.Advance(time.Minute)
		res := add(api.accountantKey, A, ws, map[string]any{"userId": ben})
		m := wsDecode[wsMember](t, res, http.StatusCreated, wsMemberFields)
		var raw struct {
			User map[string]json.RawMessage `json:"user"`
		}
		res.decode(t, &raw)
		for _, k := range []string{"firstName", "lastName", "image"} {
			if string(raw.User[k]) != "null" {
				t.Errorf("user.%s: got %s, want null", k, raw.User[k])
			}
		}
		if m.User.Email != "ben@client-a.example" || m.UserID != ben {
			t.Errorf("member: got %s", wsJSON(m))
		}
	})

	t.Run("list: oldest membership first, both kinds of key", func(t *testing.T) {
		got := list(t)
		if ids := wsIDs(got); !reflect.DeepEqual(ids, []string{anna, accountant, ben}) {
			t.Errorf("members: got %v, want [anna accountant ben] = %v", ids, []string{anna, accountant, ben})
		}
		if !reflect.DeepEqual(got[0], annaMember) || !reflect.DeepEqual(got[1], accountantMember) {
			t.Errorf("listed members differ from the answers of POST: got %s", wsJSON(got))
		}
		if viaClient := api.wsMembers(t, api.clientKey, A, ws); !reflect.DeepEqual(viaClient, got) {
			t.Errorf("client key: got %s, want %s", wsJSON(viaClient), wsJSON(got))
		}
		if other := api.wsMembers(t, api.accountantKey, A, ws2); len(other) != 0 {
			t.Errorf("members of the second workspace: got %s, want none", wsJSON(other))
		}
	})

	t.Run("membership is per workspace", func(t *testing.T) {
		api.wsAddMember(t, api.accountantKey, A, ws2, anna)
		if ids := wsIDs(api.wsMembers(t, api.accountantKey, A, ws2)); !reflect.DeepEqual(ids, []string{anna}) {
			t.Errorf("members of the second workspace: got %v, want [%s]", ids, anna)
		}
	})

	t.Run("add, remove, list: every change shows at once", func(t *testing.T) {
		api.clock.Advance(time.Minute)
		api.wsAddMember(t, api.accountantKey, A, ws2, ben)
		if ids := wsIDs(api.wsMembers(t, api.accountantKey, A, ws2)); !reflect.DeepEqual(ids, []string{anna, ben}) {
			t.Errorf("after add: got %v, want [%s %s]", ids, anna, ben)
		}
		res := api.wsRemoveMember(t, api.clientKey, A, ws2, ben)
		got := wsDecode[wsRemoved](t, res, http.StatusOK, wsRemovedFields)
		if want := (wsRemoved{Object: "workspace_member", Deleted: true, ID: ben}); got != want {
			t.Errorf("removal: got %s, want %s", wsJSON(got), wsJSON(want))
		}
		if ids := wsIDs(api.wsMembers(t, api.accountantKey, A, ws2)); !reflect.DeepEqual(ids, []string{anna}) {
			t.Errorf("after remove: got %v, want [%s]", ids, anna)
		}
		if ids := wsIDs(list(t)); !reflect.DeepEqual(ids, []string{anna, accountant, ben}) {
			t.Errorf("the first workspace: got %v, want ben still a member there", ids)
		}
		api.clock.Advance(time.Minute)
		again := api.wsAddMember(t, api.accountantKey, A, ws2, ben)
		if again.CreatedAt != apiTime(api.clock.Now()) {
			t.Errorf("re-added member: createdAt %s, want %s (a new membership)", again.CreatedAt, apiTime(api.clock.Now()))
		}
	})

	t.Run("removing a member keeps their tasks and files", func(t *testing.T) {
		taskID, fileID := db.NewID(), db.NewID()
		api.exec(`INSERT INTO tasks (id, client_id, workspace_id, title, created_by_id, actor_type, created_at, updated_at)
			VALUES (?, ?, ?, 'Prepared by Anna', ?, 'USER', 0, 0)`, taskID, A, ws, anna)
		api.exec(`INSERT INTO files (id, client_id, workspace_id, task_id, created_by_id, name, mimetype, size, sha256, document_date, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, 'anna.pdf', 'application/pdf', 3, x'00', 0, 0, 0)`, fileID, A, ws, taskID, anna)
		apiTask := api.createTask(t, api.clientKey, A, map[string]any{"title": "Via the API", "workspaceId": ws})
		apiFile := api.mustCreateFile(A, ws, apiTask.ID)
		tasksBefore := api.allTasks(t, api.accountantKey, A)
		before := api.wsState(t)

		api.clock.Advance(time.Minute)
		res := api.wsRemoveMember(t, api.accountantKey, A, ws, strings.ToUpper(anna))
		got := wsDecode[wsRemoved](t, res, http.StatusOK, wsRemovedFields)
		if want := (wsRemoved{Object: "workspace_member", Deleted: true, ID: anna}); got != want {
			t.Errorf("removal: got %s, want %s (the id in lower case)", wsJSON(got), wsJSON(want))
		}
		if ids := wsIDs(list(t)); !reflect.DeepEqual(ids, []string{accountant, ben}) {
			t.Errorf("members after removal: got %v, want [%s %s]", ids, accountant, ben)
		}
		after := api.wsState(t)
		for _, table := range []string{"tasks", "files", "users", "workspaces", "folders", "labels"} {
			if !reflect.DeepEqual(after[table], before[table]) {
				t.Errorf("%s changed by removing a member:\n got %v\nwant %v", table, after[table], before[table])
			}
		}
		if tasksAfter := api.allTasks(t, api.accountantKey, A); !reflect.DeepEqual(tasksAfter, tasksBefore) {
			t.Errorf("tasks after removal: got %v, want %v", tasksAfter, tasksBefore)
		}
		if task := api.allTasks(t, api.accountantKey, A)[taskID]; deref(task.CreatedByID) != anna {
			t.Errorf("the member's task: got %v, want createdById %s", task, anna)
		}
		if got := api.sqlColumn(t, `SELECT created_by_id || ' ' || task_id FROM files WHERE id = ?`, fileID); !reflect.DeepEqual(got, []string{anna + " " + taskID}) {
			t.Errorf("the member's file: got %v", got)
		}
		if got := api.sqlColumn(t, `SELECT task_id FROM files WHERE id = ?`, apiFile); !reflect.DeepEqual(got, []string{apiTask.ID}) {
			t.Errorf("the file of the API task: got %v", got)
		}
		if ids := wsIDs(api.wsMembers(t, api.accountantKey, A, ws2)); !reflect.DeepEqual(ids, []string{anna, ben}) {
			t.Errorf("the second workspace: got %v, want anna still a member there", ids)
		}
	})

	t.Run("refused", func(t *testing.T) {
		missingList := api.do(request{method: "GET", path: "/v1/workspaces/" + wsMissingID + "/members", key: api.accountantKey, clientID: A})
		wsNotFound(t, missingList, wsWorkspaceNotFound(wsMissingID))
		missingAdd := add(api.accountantKey, A, wsMissingID, map[string]any{"userId": ben})
		wsNotFound(t, missingAdd, wsWorkspaceNotFound(wsMissingID))
		missingRemove := remove(api.accountantKey, A, wsMissingID, map[string]any{"userId": ben})
		wsNotFound(t, missingRemove, wsWorkspaceNotFound(wsMissingID))
		unknownUser := add(api.accountantKey, A, ws, map[string]any{"userId": wsMissingUserID})
		wsNotFound(t, unknownUser, "user "+wsMissingUserID+" not found")

		sameAs := func(want *response, id string) func(*testing.T, *response) {
			return func(t *testing.T, res *response) {
				wantError(t, res, want.status, "not_found", "not_found", "")
				sameBodyButID(t, res, id, want, wsMissingID)
			}
		}
		userNotFound := func(id string) func(*testing.T, *response) {
			return func(t *testing.T, res *response) {
				wsNotFound(t, res, "user "+id+" not found")
				sameBodyButID(t, res, id, unknownUser, wsMissingUserID)
			}
		}
		conflict := func(id string) func(*testing.T, *response) {
			return func(t *testing.T, res *response) {
				wantError(t, res, http.StatusConflict, "conflict", "conflict", "user "+id+" is a member of the workspace already")
			}
		}
		notMember := func(id string) func(*testing.T, *response) {
			return func(t *testing.T, res *response) {
				wsNotFound(t, res, "user "+id+" is not a member of the workspace")
			}
		}
		call := func(f func(key, clientID, workspaceID string, body any) *response, key, clientID, workspaceID string, body any) func() *response {
			return func() *response { return f(key, clientID, workspaceID, body) }
		}
		listOf := func(key, clientID, workspaceID string) func() *response {
			return func() *response {
				return api.do(request{method: "GET", path: "/v1/workspaces/" + workspaceID + "/members", key: key, clientID: clientID})
			}
		}
		issues := func(want ...issue) func(*testing.T, *response) {
			return func(t *testing.T, res *response) { wantIssues(t, res, "ValidationError", want) }
		}
		acc, cli := api.accountantKey, api.clientKey
		cases := []wsRefused{
			// Who may be added.
			{"add a member twice", call(add, acc, A, ws, map[string]any{"userId": ben}), conflict(ben)},
			{"add a member twice, upper-case id", call(add, cli, A, ws, map[string]any{"userId": strings.ToUpper(accountant)}), conflict(accountant)},
			{"add an unknown user", call(add, acc, A, ws, map[string]any{"userId": wsMissingUserID}), userNotFound(wsMissingUserID)},
			{"add a user of client B", call(add, acc, A, ws, map[string]any{"userId": bert}), userNotFound(bert)},
			{"add a user of client B with the client key", call(add, cli, A, ws, map[string]any{"userId": bert}), userNotFound(bert)},
			{"add a user of another firm's client", call(add, acc, A, ws, map[string]any{"userId": carl}), userNotFound(carl)},
			{"add another firm's accountant user", call(add, acc, A, ws, map[string]any{"userId": otherAccountant}), userNotFound(otherAccountant)},
			{"add a client user of A to client B's workspace", call(add, acc, B, wsB, map[string]any{"userId": anna}), userNotFound(anna)},
			// Who may be removed.
			{"remove a user who is not a member", call(remove, acc, A, ws, map[string]any{"userId": anna}), notMember(anna)},
			{"remove an unknown user", call(remove, acc, A, ws, map[string]any{"userId": wsMissingUserID}), notMember(wsMissingUserID)},
			{"remove client B's member from A's workspace", call(remove, acc, A, ws, map[string]any{"userId": bert}), notMember(bert)},
			// Workspaces of other clients: the same answer as for none.
			{"list client B's workspace", listOf(acc, A, wsB), sameAs(missingList, wsB)},
			{"list client B's workspace, client key", listOf(cli, A, wsB), sameAs(missingList, wsB)},
			{"list another firm's workspace", listOf(acc, A, wsC), sameAs(missingList, wsC)},
			{"list A's workspace from another firm", listOf(api.other.accountantKey, C, ws), sameAs(missingList, ws)},
			{"list A's workspace named for client B", listOf(api.otherClientClientKey, B, ws), sameAs(missingList, ws)},
			{"add to client B's workspace", call(add, acc, A, wsB, map[string]any{"userId": ben}), sameAs(missingAdd, wsB)},
			{"add B's own user to B's workspace via A", call(add, acc, A, wsB, map[string]any{"userId": bert}), sameAs(missingAdd, wsB)},
			{"add to another firm's workspace", call(add, cli, A, wsC, map[string]any{"userId": ben}), sameAs(missingAdd, wsC)},
			{"remove from client B's workspace", call(remove, acc, A, wsB, map[string]any{"userId": bert}), sameAs(missingRemove, wsB)},
			{"remove from client B's workspace, client key", call(remove, cli, A, wsB, map[string]any{"userId": bert}), sameAs(missingRemove, wsB)},
			{"remove from another firm's workspace", call(remove, acc, A, wsC, map[string]any{"userId": carl}), sameAs(missingRemove, wsC)},
			{"remove from A's workspace via another firm", call(remove, api.other.accountantKey, C, ws, map[string]any{"userId": ben}), sameAs(missingRemove, ws)},
			// Validation.
			{"list: bad path id", listOf(acc, A, "nope"), issues(cuidIssue("params", "id"))},
			{"add: missing userId", call(add, acc, A, ws, map[string]any{"user": ben}), issues(requiredIssue("userId"))},
			{"add: userId null", call(add, acc, A, ws, `{"userId":null}`), issues(typeIssueAt("string", "null", "userId"))},
			{"add: userId a number", call(add, acc, A, ws, map[string]any{"userId": 7}), issues(typeIssueAt("string", "number", "userId"))},
			{"add: userId an array", call(add, acc, A, ws, map[string]any{"userId": []string{ben}}), issues(typeIssueAt("string", "array", "userId"))},
			{"add: userId not a cuid", call(add, acc, A, ws, map[string]any{"userId": "ben@client-a.example"}), issues(cuidIssue("userId"))},
			{"add: userId too long", call(add, acc, A, ws, map[string]any{"userId": "c" + strings.Repeat("b", 100_000)}), issues(cuidIssue("userId"))},
			{"add: bad path id and no userId, all reported", call(add, acc, A, "x", map[string]any{}), issues(cuidIssue("params", "id"), requiredIssue("userId"))},
			{"add: body an array", call(add, acc, A, ws, `[]`), issues(typeIssueAt("object", "array"))},
			{"remove: missing userId", call(remove, acc, A, ws, map[string]any{"id": ben}), issues(requiredIssue("userId"))},
			{"remove: userId a boolean", call(remove, acc, A, ws, map[string]any{"userId": false}), issues(typeIssueAt("string", "boolean", "userId"))},
			{"remove: userId not a cuid", call(remove, acc, A, ws, map[string]any{"userId": "c-1"}), issues(cuidIssue("userId"))},
			{"remove: bad path id and bad userId, all reported", call(remove, acc, A, "c", map[string]any{"userId": 1}),
				issues(cuidIssue("params", "id"), typeIssueAt("string", "number", "userId"))},
		}
		for _, method := range []string{"POST", "DELETE"} {
			for _, c := range api.wsBodyCases(method, "/v1/workspaces/"+ws+"/members") {
				c.name = method + ": " + c.name
				cases = append(cases, c)
			}
		}
		cases = append(cases, api.wsAccessCases("GET", "/v1/workspaces/"+ws+"/members", nil, auth.MembersRead, "workspaces:read")...)
		cases = append(cases, api.wsAccessCases("POST", "/v1/workspaces/"+ws+"/members", map[string]any{"userId": anna}, auth.MembersWrite, "members:read")...)
		cases = append(cases, api.wsAccessCases("DELETE", "/v1/workspaces/"+ws+"/members", map[string]any{"userId": ben}, auth.MembersWrite, "members:read")...)
		membersBefore := list(t)
		api.wsRunRefused(t, cases)
		if got := list(t); !reflect.DeepEqual(got, membersBefore) {
			t.Errorf("members after refused calls: got %s, want %s", wsJSON(got), wsJSON(membersBefore))
		}
		if ids := wsIDs(api.wsMembers(t, api.otherClientClientKey, B, wsB)); !reflect.DeepEqual(ids, []string{bert}) {
			t.Errorf("client B's members: got %v, want [%s]", ids, bert)
		}
		if ids := wsIDs(api.wsMembers(t, api.other.clientKey, C, wsC)); !reflect.DeepEqual(ids, []string{carl}) {
			t.Errorf("client C's members: got %v, want [%s]", ids, carl)
		}
	})

	t.Run("an accountant user of the firm may join any client's workspace", func(t *testing.T) {
		m := api.wsAddMember(t, api.accountantKey, B, wsB, accountant)
		if m.WorkspaceID != wsB || m.UserID != accountant {
			t.Errorf("member: got %s", wsJSON(m))
		}
		if ids := wsIDs(api.wsMembers(t, api.otherClientClientKey, B, wsB)); !reflect.DeepEqual(ids, []string{bert, accountant}) {
			t.Errorf("client B's members: got %v, want [%s %s]", ids, bert, accountant)
		}
	})
}

// ---- folders --------------------------------------------------------------------

func TestWorkspaceFolders(t *testing.T) {
	api := newTestAPI(t)
	A, B, C := api.client.ID, api.otherClient.ID, api.other.client.ID
	ws := api.mustCreateWorkspace(A, "Main")
	ws2 := api.mustCreateWorkspace(A, "Second")
	wsB := api.mustCreateWorkspace(B, "B's")
	wsC := api.mustCreateWorkspace(C, "C's")
	folderB := api.wsCreateFolder(t, api.otherClientClientKey, B, wsB, map[string]any{"name": "Receipts"})
	folderC := api.wsCreateFolder(t, api.other.clientKey, C, wsC, map[string]any{"name": "Receipts"})
	folderWS2 := api.wsCreateFolder(t, api.accountantKey, A, ws2, map[string]any{"name": "Receipts"})
	post := func(key, clientID, workspaceID string, body any) *response {
		return api.do(request{method: "POST", path: "/v1/workspaces/" + workspaceID + "/folders", key: key, clientID: clientID, body: body})
	}
	api.clock.Advance(time.Hour)

	var receipts, year, yearReceipts, deeper wsFolder
	t.Run("a top-level folder has every field", func(t *testing.T) {
		res := post(api.accountantKey, A, ws, map[string]any{"name": "  Receipts "})
		receipts = wsDecode[wsFolder](t, res, http.StatusCreated, wsFolderFields)
		now := apiTime(api.clock.Now())
		want := wsFolder{ID: receipts.ID, Name: "Receipts", WorkspaceID: ws, CreatedAt: now, UpdatedAt: now}
		if !reflect.DeepEqual(receipts, want) {
			t.Errorf("folder: got %s, want %s", wsJSON(receipts), wsJSON(want))
		}
		if !generatedID.MatchString(receipts.ID) {
			t.Errorf("id: got %q, want a generated cuid", receipts.ID)
		}
		var raw map[string]json.RawMessage
		res.decode(t, &raw)
		if string(raw["parentId"]) != "null" {
			t.Errorf("parentId: got %s, want null", raw["parentId"])
		}
	})

	t.Run("nested folders, with the client key", func(t *testing.T) {
		api.clock.Advance(time.Minute)
		year = api.wsCreateFolder(t, api.clientKey, A, ws, map[string]any{"name": "2026", "parentId": nil})
		if year.ParentID != nil {
			t.Errorf("parentId null: got %s, want a top-level folder", deref(year.ParentID))
		}
		api.clock.Advance(time.Minute)
		// The same name under another parent is fine.
		yearReceipts = api.wsCreateFolder(t, api.clientKey, A, strings.ToUpper(ws), map[string]any{"name": "receipts", "parentId": strings.ToUpper(year.ID)})
		now := apiTime(api.clock.Now())
		want := wsFolder{ID: yearReceipts.ID, Name: "receipts", WorkspaceID: ws, ParentID: ptr(year.ID), CreatedAt: now, UpdatedAt: now}
		if !reflect.DeepEqual(yearReceipts, want) {
			t.Errorf("nested folder: got %s, want %s", wsJSON(yearReceipts), wsJSON(want))
		}
		deeper = api.wsCreateFolder(t, api.accountantKey, A, ws, map[string]any{"name": "Receipts", "parentId": yearReceipts.ID})
		if deref(deeper.ParentID) != yearReceipts.ID {
			t.Errorf("third level: got parent %s, want %s", deref(deeper.ParentID), yearReceipts.ID)
		}
	})

	t.Run("list: every folder of the workspace, flat, newest first", func(t *testing.T) {
		page := api.wsListFolders(t, api.accountantKey, A, ws, "")
		if page.Pagination.Total != 4 || len(page.Data) != 4 || page.Pagination.Limit != 20 || page.Pagination.NextCursor != nil || page.Pagination.PreviousCursor != nil {
			t.Fatalf("folders: got %s", wsJSON(page))
		}
		// The two newest share their second: ties by id, desc.
		newest := []wsFolder{yearReceipts, deeper}
		if newest[0].ID < newest[1].ID {
			newest[0], newest[1] = newest[1], newest[0]
		}
		if want := append(newest, year, receipts); !reflect.DeepEqual(page.Data, want) {
			t.Errorf("folders newest first:\n got %s\nwant %s", wsJSON(page.Data), wsJSON(want))
		}
		for _, f := range page.Data {
			if f.WorkspaceID != ws {
				t.Errorf("folder of another workspace listed: %s", wsJSON(f))
			}
		}
		if viaClient := api.wsListFolders(t, api.clientKey, A, ws, ""); !reflect.DeepEqual(viaClient, page) {
			t.Errorf("client key: got %s, want %s", wsJSON(viaClient), wsJSON(page))
		}
		if other := api.wsListFolders(t, api.accountantKey, A, ws2, ""); !reflect.DeepEqual(other.Data, []wsFolder{folderWS2}) {
			t.Errorf("folders of the second workspace: got %s, want only %s", wsJSON(other.Data), folderWS2.ID)
		}
	})

	t.Run("list sorted by name, case-insensitively, paged both ways", func(t *testing.T) {
		wsN := api.mustCreateWorkspace(A, "Names")
		var made []wsFolder
		for _, name := range []string{"b", "C", "a", "D", "e"} {
			api.clock.Advance(time.Second)
			made = append(made, api.wsCreateFolder(t, api.accountantKey, A, wsN, map[string]any{"name": name}))
		}
		byName := []wsFolder{made[2], made[0], made[1], made[3], made[4]} // a b C D e
		page := api.wsListFolders(t, api.accountantKey, A, wsN, "sort=name&order=asc&limit=2")
		if !reflect.DeepEqual(page.Data, byName[:2]) || deref(page.Pagination.NextCursor) != byName[2].ID || page.Pagination.PreviousCursor != nil || page.Pagination.Total != 5 {
			t.Errorf("page 1: got %v %s, want %v", wsIDs(page.Data), wsJSON(page.Pagination), wsIDs(byName[:2]))
		}
		page = api.wsListFolders(t, api.accountantKey, A, wsN, "sort=name&order=asc&limit=2&cursor="+*page.Pagination.NextCursor)
		if !reflect.DeepEqual(page.Data, byName[2:4]) || deref(page.Pagination.NextCursor) != byName[4].ID || deref(page.Pagination.PreviousCursor) != byName[0].ID {
			t.Errorf("page 2: got %v %s, want %v", wsIDs(page.Data), wsJSON(page.Pagination), wsIDs(byName[2:4]))
		}
		page = api.wsListFolders(t, api.accountantKey, A, wsN, "sort=name&limit=5")
		if !reflect.DeepEqual(page.Data, reverseSlice(byName)) {
			t.Errorf("sort=name desc: got %v, want %v", wsIDs(page.Data), wsIDs(reverseSlice(byName)))
		}
		page = api.wsListFolders(t, api.accountantKey, A, wsN, "sort=createdAt&order=asc")
		if !reflect.DeepEqual(page.Data, made) {
			t.Errorf("sort=createdAt asc: got %v, want %v", wsIDs(page.Data), wsIDs(made))
		}
	})

	t.Run("the same name in another workspace is fine", func(t *testing.T) {
		f := api.wsCreateFolder(t, api.accountantKey, A, ws2, map[string]any{"name": "2026"})
		if f.WorkspaceID != ws2 || f.ParentID != nil {
			t.Errorf("folder: got %s", wsJSON(f))
		}
	})

	t.Run("refused", func(t *testing.T) {
		missing := post(api.accountantKey, A, wsMissingID, map[string]any{"name": "x"})
		wsNotFound(t, missing, wsWorkspaceNotFound(wsMissingID))
		missingList := api.do(request{method: "GET", path: "/v1/workspaces/" + wsMissingID + "/folders", key: api.accountantKey, clientID: A})
		wsNotFound(t, missingList, wsWorkspaceNotFound(wsMissingID))
		unknownParent := post(api.accountantKey, A, ws, map[string]any{"name": "x", "parentId": wsMissingID})
		wsNotFound(t, unknownParent, "folder "+wsMissingID+" not found in the workspace")

		send := func(key, clientID, workspaceID string, body any) func() *response {
			return func() *response { return post(key, clientID, workspaceID, body) }
		}
		get := func(key, clientID, workspaceID, query string) func() *response {
			return func() *response {
				return api.do(request{method: "GET", path: "/v1/workspaces/" + workspaceID + "/folders?" + query, key: key, clientID: clientID})
			}
		}
		sameAs := func(want *response, id string) func(*testing.T, *response) {
			return func(t *testing.T, res *response) {
				wantError(t, res, http.StatusNotFound, "not_found", "not_found", "")
				sameBodyButID(t, res, id, want, wsMissingID)
			}
		}
		conflict := func(name string) func(*testing.T, *response) {
			return func(t *testing.T, res *response) {
				wantError(t, res, http.StatusConflict, "conflict", "conflict", "a folder named "+name+" exists in this place already")
			}
		}
		issues := func(want ...issue) func(*testing.T, *response) {
			return func(t *testing.T, res *response) { wantIssues(t, res, "ValidationError", want) }
		}
		acc, cli := api.accountantKey, api.clientKey
		var cases []wsRefused
		for _, c := range wsNameCases() {
			cases = append(cases, wsRefused{c.name, send(acc, A, ws, c.body), issues(c.issue)})
		}
		sortIssue := issue{Code: "invalid_enum_value", Path: []any{"query", "sort"}, Options: []string{"createdAt", "name"}, Received: "title",
			Message: "Invalid enum value. Expected 'createdAt' | 'name', received 'title'"}
		cases = append(cases, []wsRefused{
			{"a second Receipts at the top, other case", send(acc, A, ws, map[string]any{"name": "receipts"}), conflict("receipts")},
			{"a second Receipts at the top, same case, padded", send(cli, A, ws, map[string]any{"name": " Receipts  "}), conflict("Receipts")},
			{"a second receipts under 2026", send(acc, A, ws, map[string]any{"name": "RECEIPTS", "parentId": year.ID}), conflict("RECEIPTS")},
			{"parent in another workspace of the client", send(acc, A, ws, map[string]any{"name": "x", "parentId": folderWS2.ID}), sameAs(unknownParent, folderWS2.ID)},
			{"parent of client B", send(acc, A, ws, map[string]any{"name": "x", "parentId": folderB.ID}), sameAs(unknownParent, folderB.ID)},
			{"parent of another firm", send(acc, A, ws, map[string]any{"name": "x", "parentId": folderC.ID}), sameAs(unknownParent, folderC.ID)},
			{"parent is the workspace", send(acc, A, ws, map[string]any{"name": "x", "parentId": ws}), sameAs(unknownParent, ws)},
			{"unknown parent", send(acc, A, ws, map[string]any{"name": "x", "parentId": wsMissingID}), func(t *testing.T, res *response) {
				wsNotFound(t, res, "folder "+wsMissingID+" not found in the workspace")
			}},
			{"create in client B's workspace", send(acc, A, wsB, map[string]any{"name": "Stolen"}), sameAs(missing, wsB)},
			{"create in client B's workspace, client key", send(cli, A, wsB, map[string]any{"name": "Stolen"}), sameAs(missing, wsB)},
			{"create in client B's workspace under B's folder", send(acc, A, wsB, map[string]any{"name": "Stolen", "parentId": folderB.ID}), sameAs(missing, wsB)},
			{"create in another firm's workspace", send(acc, A, wsC, map[string]any{"name": "Stolen"}), sameAs(missing, wsC)},
			{"create in A's workspace from another firm", send(api.other.accountantKey, C, ws, map[string]any{"name": "Stolen"}), sameAs(missing, ws)},
			{"list client B's workspace", get(acc, A, wsB, ""), sameAs(missingList, wsB)},
			{"list client B's workspace, client key", get(cli, A, wsB, ""), sameAs(missingList, wsB)},
			{"list another firm's workspace", get(acc, A, wsC, ""), sameAs(missingList, wsC)},
			{"list A's workspace named for client B", get(api.otherClientClientKey, B, ws, ""), sameAs(missingList, ws)},
			{"parentId not a cuid", send(acc, A, ws, map[string]any{"name": "x", "parentId": "2026"}), issues(cuidIssue("parentId"))},
			{"parentId a number", send(acc, A, ws, map[string]any{"name": "x", "parentId": 2026}), issues(typeIssueAt("string", "number", "parentId"))},
			{"bad path id, no name, bad parentId: all reported", send(acc, A, "ws", map[string]any{"parentId": true}),
				issues(cuidIssue("params", "id"), requiredIssue("name"), typeIssueAt("string", "boolean", "parentId"))},
			{"list: bad path id and bad query, all reported", get(acc, A, "ws", "limit=1000&sort=title&order=&cursor=c"),
				issues(cuidIssue("params", "id"),
					issue{Code: "too_big", Path: []any{"query", "limit"}, Maximum: bound(100), Type: "number", Inclusive: &yes, Exact: &no,
						Message: "Number must be less than or equal to 100"},
					cuidIssue("query", "cursor"), sortIssue,
					issue{Code: "invalid_enum_value", Path: []any{"query", "order"}, Options: []string{"asc", "desc"}, Received: "",
						Message: "Invalid enum value. Expected 'asc' | 'desc', received ''"})},
			{"list: a folder of another workspace as cursor", get(acc, A, ws, "cursor="+folderWS2.ID), func(t *testing.T, res *response) {
				wantError(t, res, http.StatusBadRequest, "bad_request", "invalid_cursor", wsInvalidCursor)
			}},
			{"list: a folder of client B as cursor", get(acc, A, ws, "cursor="+folderB.ID), func(t *testing.T, res *response) {
				wantError(t, res, http.StatusBadRequest, "bad_request", "invalid_cursor", wsInvalidCursor)
			}},
		}...)
		cases = append(cases, api.wsBodyCases("POST", "/v1/workspaces/"+ws+"/folders")...)
		cases = append(cases, api.wsAccessCases("GET", "/v1/workspaces/"+ws+"/folders", nil, auth.WorkspacesRead, "members:read")...)
		cases = append(cases, api.wsAccessCases("POST", "/v1/workspaces/"+ws+"/folders", map[string]any{"name": "x"}, auth.WorkspacesWrite, "workspaces:read")...)
		api.wsRunRefused(t, cases)

		if page := api.wsListFolders(t, api.otherClientClientKey, B, wsB, ""); !reflect.DeepEqual(page.Data, []wsFolder{folderB}) {
			t.Errorf("client B's folders: got %s, want only %s", wsJSON(page.Data), folderB.ID)
		}
		if page := api.wsListFolders(t, api.other.clientKey, C, wsC, ""); !reflect.DeepEqual(page.Data, []wsFolder{folderC}) {
			t.Errorf("client C's folders: got %s, want only %s", wsJSON(page.Data), folderC.ID)
		}
	})
}

// ---- labels ---------------------------------------------------------------------

func TestWorkspaceLabels(t *testing.T) {
	api := newTestAPI(t)
	A, B, C := api.client.ID, api.otherClient.ID, api.other.client.ID
	ws := api.mustCreateWorkspace(A, "Main")
	ws2 := api.mustCreateWorkspace(A, "Second")
	wsB := api.mustCreateWorkspace(B, "B's")
	wsC := api.mustCreateWorkspace(C, "C's")
	labelB := api.wsCreateLabel(t, api.otherClientClientKey, B, wsB, "Tax")
	labelC := api.wsCreateLabel(t, api.other.clientKey, C, wsC, "Tax")
	post := func(key, clientID, workspaceID string, body any) *response {
		return api.do(request{method: "POST", path: "/v1/workspaces/" + workspaceID + "/labels", key: key, clientID: clientID, body: body})
	}
	api.clock.Advance(time.Hour)

	var tax, urgent wsLabel
	t.Run("a new label has every field", func(t *testing.T) {
		tax = api.wsCreateLabel(t, api.accountantKey, A, ws, " Tax ")
		now := apiTime(api.clock.Now())
		want := wsLabel{ID: tax.ID, Name: "Tax", WorkspaceID: ws, CreatedAt: now, UpdatedAt: now}
		if !reflect.DeepEqual(tax, want) {
			t.Errorf("label: got %s, want %s", wsJSON(tax), wsJSON(want))
		}
		if !generatedID.MatchString(tax.ID) {
			t.Errorf("id: got %q, want a generated cuid", tax.ID)
		}
	})

	t.Run("with the client key; unknown fields are ignored", func(t *testing.T) {
		api.clock.Advance(time.Minute)
		res := post(api.clientKey, A, strings.ToUpper(ws), map[string]any{"name": "urgent", "workspaceId": ws2, "parentId": "junk", "color": 3})
		urgent = wsDecode[wsLabel](t, res, http.StatusCreated, wsLabelFields)
		if urgent.WorkspaceID != ws || urgent.Name != "urgent" || urgent.CreatedAt != apiTime(api.clock.Now()) {
			t.Errorf("label: got %s", wsJSON(urgent))
		}
	})

	t.Run("case folds ASCII only, as documented", func(t *testing.T) {
		// docs/decisions.md: names clash "ASCII case-insensitively".
		ws3 := api.mustCreateWorkspace(A, "Unicode")
		upper := api.wsCreateLabel(t, api.accountantKey, A, ws3, "Übersicht")
		lower := api.wsCreateLabel(t, api.accountantKey, A, ws3, "übersicht")
		if upper.ID == lower.ID {
			t.Errorf("two labels share the id %s", upper.ID)
		}
		wantError(t, post(api.accountantKey, A, ws3, map[string]any{"name": "üBERSICHT"}), http.StatusConflict, "conflict", "conflict",
			"a label named üBERSICHT exists in this workspace already")
	})

	t.Run("the same name in another workspace is fine", func(t *testing.T) {
		l := api.wsCreateLabel(t, api.accountantKey, A, ws2, "TAX")
		if l.WorkspaceID != ws2 || l.Name != "TAX" {
			t.Errorf("label: got %s", wsJSON(l))
		}
	})

	t.Run("list: the workspace's labels only, paged, sortable by name", func(t *testing.T) {
		page := api.wsListLabels(t, api.accountantKey, A, ws, "")
		want := wsPage[wsLabel]{Data: []wsLabel{urgent, tax}, Pagination: wsPagination{Limit: 20, Total: 2}}
		if !reflect.DeepEqual(page, want) {
			t.Errorf("labels: got %s, want %s", wsJSON(page), wsJSON(want))
		}
		if viaClient := api.wsListLabels(t, api.clientKey, A, ws, ""); !reflect.DeepEqual(viaClient, page) {
			t.Errorf("client key: got %s, want %s", wsJSON(viaClient), wsJSON(page))
		}
		page = api.wsListLabels(t, api.accountantKey, A, ws, "sort=name&order=asc&limit=1")
		want = wsPage[wsLabel]{Data: []wsLabel{tax}, Pagination: wsPagination{Limit: 1, Total: 2, NextCursor: &urgent.ID}}
		if !reflect.DeepEqual(page, want) {
			t.Errorf("by name: got %s, want %s", wsJSON(page), wsJSON(want))
		}
		page = api.wsListLabels(t, api.accountantKey, A, ws, "sort=name&order=asc&limit=1&cursor="+urgent.ID)
		want = wsPage[wsLabel]{Data: []wsLabel{urgent}, Pagination: wsPagination{Limit: 1, Total: 2, PreviousCursor: &tax.ID}}
		if !reflect.DeepEqual(page, want) {
			t.Errorf("by name, page 2: got %s, want %s", wsJSON(page), wsJSON(want))
		}
		if page := api.wsListLabels(t, api.accountantKey, A, ws2, ""); page.Pagination.Total != 1 || page.Data[0].Name != "TAX" {
			t.Errorf("labels of the second workspace: got %s", wsJSON(page))
		}
	})

	t.Run("refused", func(t *testing.T) {
		missing := post(api.accountantKey, A, wsMissingID, map[string]any{"name": "x"})
		wsNotFound(t, missing, wsWorkspaceNotFound(wsMissingID))
		missingList := api.do(request{method: "GET", path: "/v1/workspaces/" + wsMissingID + "/labels", key: api.accountantKey, clientID: A})
		wsNotFound(t, missingList, wsWorkspaceNotFound(wsMissingID))
		send := func(key, clientID, workspaceID string, body any) func() *response {
			return func() *response { return post(key, clientID, workspaceID, body) }
		}
		get := func(key, clientID, workspaceID, query string) func() *response {
			return func() *response {
				return api.do(request{method: "GET", path: "/v1/workspaces/" + workspaceID + "/labels?" + query, key: key, clientID: clientID})
			}
		}
		sameAs := func(want *response, id string) func(*testing.T, *response) {
			return func(t *testing.T, res *response) {
				wantError(t, res, http.StatusNotFound, "not_found", "not_found", "")
				sameBodyButID(t, res, id, want, wsMissingID)
			}
		}
		conflict := func(name string) func(*testing.T, *response) {
			return func(t *testing.T, res *response) {
				wantError(t, res, http.StatusConflict, "conflict", "conflict", "a label named "+name+" exists in this workspace already")
			}
		}
		issues := func(want ...issue) func(*testing.T, *response) {
			return func(t *testing.T, res *response) { wantIssues(t, res, "ValidationError", want) }
		}
		acc, cli := api.accountantKey, api.clientKey
		var cases []wsRefused
		for _, c := range wsNameCases() {
			cases = append(cases, wsRefused{c.name, send(acc, A, ws, c.body), issues(c.issue)})
		}
		cases = append(cases, []wsRefused{
			{"duplicate, other case", send(acc, A, ws, map[string]any{"name": "tAX"}), conflict("tAX")},
			{"duplicate, padded, client key", send(cli, A, ws, map[string]any{"name": "  URGENT\t"}), conflict("URGENT")},
			{"create in client B's workspace", send(acc, A, wsB, map[string]any{"name": "Stolen"}), sameAs(missing, wsB)},
			{"create in client B's workspace, client key", send(cli, A, wsB, map[string]any{"name": "Stolen"}), sameAs(missing, wsB)},
			{"create in another firm's workspace", send(acc, A, wsC, map[string]any{"name": "Stolen"}), sameAs(missing, wsC)},
			{"create in A's workspace from another firm", send(api.other.accountantKey, C, ws, map[string]any{"name": "Stolen"}), sameAs(missing, ws)},
			{"list client B's workspace", get(acc, A, wsB, ""), sameAs(missingList, wsB)},
			{"list client B's workspace, client key", get(cli, A, wsB, ""), sameAs(missingList, wsB)},
			{"list another firm's workspace", get(acc, A, wsC, ""), sameAs(missingList, wsC)},
			{"list A's workspace named for client B", get(api.otherClientClientKey, B, ws, ""), sameAs(missingList, ws)},
			{"bad path id and no name, all reported", send(acc, A, "labels", map[string]any{}), issues(cuidIssue("params", "id"), requiredIssue("name"))},
			{"list: limit=0.5 and sort=createdat", get(acc, A, ws, "limit=0.5&sort=createdat"), issues(
				typeIssueAt("integer", "float", "query", "limit"),
				issue{Code: "invalid_enum_value", Path: []any{"query", "sort"}, Options: []string{"createdAt", "name"}, Received: "createdat",
					Message: "Invalid enum value. Expected 'createdAt' | 'name', received 'createdat'"})},
			{"list: a label of client B as cursor", get(acc, A, ws, "cursor="+labelB.ID), func(t *testing.T, res *response) {
				wantError(t, res, http.StatusBadRequest, "bad_request", "invalid_cursor", wsInvalidCursor)
			}},
		}...)
		cases = append(cases, api.wsBodyCases("POST", "/v1/workspaces/"+ws+"/labels")...)
		cases = append(cases, api.wsAccessCases("GET", "/v1/workspaces/"+ws+"/labels", nil, auth.WorkspacesRead, "files:read")...)
		cases = append(cases, api.wsAccessCases("POST", "/v1/workspaces/"+ws+"/labels", map[string]any{"name": "x"}, auth.WorkspacesWrite, "workspaces:read")...)
		api.wsRunRefused(t, cases)

		if page := api.wsListLabels(t, api.otherClientClientKey, B, wsB, ""); !reflect.DeepEqual(page.Data, []wsLabel{labelB}) {
			t.Errorf("client B's labels: got %s, want only %s", wsJSON(page.Data), labelB.ID)
		}
		if page := api.wsListLabels(t, api.other.clientKey, C, wsC, ""); !reflect.DeepEqual(page.Data, []wsLabel{labelC}) {
			t.Errorf("client C's labels: got %s, want only %s", wsJSON(page.Data), labelC.ID)
		}
	})
}

// ---- isolation across every operation ----------------------------------------------

// TestWorkspaceIsolation sends every workspace operation, with both kinds of
// key of client A, at a workspace of client B (same firm) and of client C
// (another firm): each answers exactly what it answers for a workspace that
// does not exist, and changes nothing. The accountant key then reaches
// client B's workspace when x-client-id names B, so the 404s are about the
// client, not the workspace.
func TestWorkspaceIsolation(t *testing.T) {
	api := newTestAPI(t)
	A, B, C := api.client.ID, api.otherClient.ID, api.other.client.ID
	wsA := api.mustCreateWorkspace(A, "A's")
	wsB := api.mustCreateWorkspace(B, "B's")
	wsC := api.mustCreateWorkspace(C, "C's")
	userA := api.wsClientUser(api.firm.ID, A, "a@a.example", nil, nil, nil)
	userB := api.wsClientUser(api.firm.ID, B, "b@b.example", nil, nil, nil)
	userC := api.wsClientUser(api.other.firm.ID, C, "c@c.example", nil, nil, nil)
	accountant := api.wsAccountantUser(api.firm.ID, "acc@one.example")
	api.wsAddMember(t, api.accountantKey, B, wsB, userB)
	api.wsAddMember(t, api.other.accountantKey, C, wsC, userC)
	api.wsCreateFolder(t, api.accountantKey, B, wsB, map[string]any{"name": "B folder"})
	api.wsCreateLabel(t, api.accountantKey, B, wsB, "B label")

	type op struct {
		name, method, suffix string
		body                 func(target string) any
	}
	userFor := map[string]string{wsB: userB, wsC: userC, wsMissingID: userB}
	ops := []op{
		{"PATCH workspace", "PATCH", "", func(string) any { return map[string]any{"name": "Hijacked"} }},
		{"GET members", "GET", "/members", nil},
		// Adding the firm's accountant user would succeed on B's workspace
		// through x-client-id B.
		{"POST members", "POST", "/members", func(string) any { return map[string]any{"userId": accountant} }},
		// Removing the workspace's own member would succeed through its client.
		{"DELETE members", "DELETE", "/members", func(target string) any { return map[string]any{"userId": userFor[target]} }},
		{"GET folders", "GET", "/folders", nil},
		{"POST folders", "POST", "/folders", func(string) any { return map[string]any{"name": "Stolen"} }},
		{"GET labels", "GET", "/labels", nil},
		{"POST labels", "POST", "/labels", func(string) any { return map[string]any{"name": "Stolen"} }},
	}
	send := func(o op, key, clientID, target string) *response {
		var body any
		if o.body != nil {
			body = o.body(target)
		}
		return api.do(request{method: o.method, path: "/v1/workspaces/" + target + o.suffix, key: key, clientID: clientID, body: body})
	}
	keys := []struct{ name, key string }{{"accountant key", api.accountantKey}, {"client key", api.clientKey}}
	for _, o := range ops {
		t.Run(o.name, func(t *testing.T) {
			for _, k := range keys {
				missing := send(o, k.key, A, wsMissingID)
				wsNotFound(t, missing, wsWorkspaceNotFound(wsMissingID))
				for _, target := range []struct{ name, id string }{{"client B", wsB}, {"client C", wsC}} {
					t.Run(k.name+" at "+target.name, func(t *testing.T) {
						before := api.wsState(t)
						api.clock.Advance(time.Minute)
						res := send(o, k.key, A, target.id)
						wsNotFound(t, res, wsWorkspaceNotFound(target.id))
						sameBodyButID(t, res, target.id, missing, wsMissingID)
						api.wsUnchanged(t, before)
					})
				}
			}
		})
	}

	t.Run("lists show client A's records only", func(t *testing.T) {
		api.wsAddMember(t, api.clientKey, A, wsA, userA)
		folder := api.wsCreateFolder(t, api.clientKey, A, wsA, map[string]any{"name": "A folder"})
		label := api.wsCreateLabel(t, api.clientKey, A, wsA, "A label")
		for _, k := range keys {
			if ids := wsIDs(api.wsAllWorkspaces(t, k.key, A)); !reflect.DeepEqual(ids, []string{wsA}) {
				t.Errorf("%s: workspaces got %v, want [%s]", k.name, ids, wsA)
			}
			if ids := wsIDs(api.wsMembers(t, k.key, A, wsA)); !reflect.DeepEqual(ids, []string{userA}) {
				t.Errorf("%s: members got %v, want [%s]", k.name, ids, userA)
			}
			if page := api.wsListFolders(t, k.key, A, wsA, ""); !reflect.DeepEqual(wsIDs(page.Data), []string{folder.ID}) || page.Pagination.Total != 1 {
				t.Errorf("%s: folders got %s, want [%s]", k.name, wsJSON(page), folder.ID)
			}
			if page := api.wsListLabels(t, k.key, A, wsA, ""); !reflect.DeepEqual(wsIDs(page.Data), []string{label.ID}) || page.Pagination.Total != 1 {
				t.Errorf("%s: labels got %s, want [%s]", k.name, wsJSON(page), label.ID)
			}
		}
	})

	t.Run("the accountant key reaches client B's workspace through x-client-id B", func(t *testing.T) {
		for _, o := range ops {
			res := send(o, api.accountantKey, B, wsB)
			if res.status != http.StatusOK && res.status != http.StatusCreated {
				t.Errorf("%s on client B's workspace with x-client-id B: got %d %s, want success", o.name, res.status, res.body)
			}
		}
		if ids := wsIDs(api.wsMembers(t, api.otherClientClientKey, B, wsB)); !reflect.DeepEqual(ids, []string{accountant}) {
			t.Errorf("client B's members: got %v, want [%s] (userB removed, the accountant added)", ids, accountant)
		}
	})
}

// TestListLimitParsing is the regression test of a bug in handlers/validate.go,
// query.int, which every list reads limit with, fixed in e4c241f ("strict
// decimal query numbers"): a whole number beyond the int64 range was
// answered "Expected integer, received float" (float64(int64(f)) != f after
// the conversion overflowed) instead of too_big/too_small; limit=NaN was
// "received float" instead of "received nan" (docs/decisions.md); and
// limit=0x1p4 was accepted as 16 (strconv.ParseFloat takes Go's hex floats).
func TestListLimitParsing(t *testing.T) {
	api := newTestAPI(t)
	limitSmall := issue{Code: "too_small", Path: []any{"query", "limit"}, Minimum: bound(1), Type: "number", Inclusive: &yes, Exact: &no,
		Message: "Number must be greater than or equal to 1"}
	limitBig := issue{Code: "too_big", Path: []any{"query", "limit"}, Maximum: bound(100), Type: "number", Inclusive: &yes, Exact: &no,
		Message: "Number must be less than or equal to 100"}
	notANumber := typeIssueAt("number", "nan", "query", "limit")
	for _, c := range []struct {
		limit string
		want  issue
	}{
		{"100000000000000000000", limitBig},
		{"9223372036854775808", limitBig},
		{"-100000000000000000000", limitSmall},
		{"NaN", notANumber},
		{"0x1p4", notANumber},
	} {
		t.Run("limit="+c.limit, func(t *testing.T) {
			res := api.do(request{method: "GET", path: "/v1/workspaces?limit=" + c.limit, key: api.accountantKey, clientID: api.client.ID})
			if res.status != http.StatusUnprocessableEntity {
				t.Errorf("limit=%s answered %d %s, want 422 %s", c.limit, res.status, bytes.TrimSpace(res.body), wsJSON(c.want))
				return
			}
			var body validationBody
			res.decode(t, &body)
			if got, want := wsJSON(body.Error.Issues), wsJSON([]issue{c.want}); got != want {
				t.Errorf("limit=%s reported as %s, want %s", c.limit, got, want)
			}
		})
	}
}
