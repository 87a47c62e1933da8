package handlers

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"acctapi/auth"
)

// Tests of the client-user endpoints: POST /v1/users and PATCH /v1/users/{id}.
// Every call goes through api.do, so every
// answer is also checked against the served OpenAPI document.

// Well-formed ids that name nothing.
const (
	cuMissingUserID      = "cnousernousernousernouser9"
	cuMissingWorkspaceID = "cnoworkspacenoworkspace09"
)

// cuFields and cuNamedFields are the exact field sets of a Client user,
// without and with the names.
var (
	cuFields      = []string{"createdAt", "email", "id", "roles"}
	cuNamedFields = []string{"createdAt", "email", "firstName", "id", "lastName", "roles"}
)

// cuRoleOptions are the roles of a client user, as validation names them.
var cuRoleOptions = []string{"admin", "user"}

// cuUser is a Client user as the API answers it.
type cuUser struct {
	ID        string   `json:"id"`
	CreatedAt string   `json:"createdAt"`
	Email     string   `json:"email"`
	FirstName *string  `json:"firstName"`
	LastName  *string  `json:"lastName"`
	Roles     []string `json:"roles"`
}

// cuKeys returns the sorted field names of a JSON object.
func cuKeys(t *testing.T, raw []byte) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// cuDecode checks the status and the exact field set of a Client user answer
// and decodes it.
func cuDecode(t *testing.T, res *response, status int, fields []string) cuUser {
	t.Helper()
	if res.status != status {
		t.Fatalf("status: got %d, want %d (body %s)", res.status, status, res.body)
	}
	if status == http.StatusCreated {
		r := *res
		r.body = takeMailed(t, res.body)
		res = &r
	}
	if got := cuKeys(t, res.body); !reflect.DeepEqual(got, fields) {
		t.Errorf("client user fields: got %v, want %v (body %s)", got, fields, res.body)
	}
	var u cuUser
	dec := json.NewDecoder(strings.NewReader(string(res.body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&u); err != nil {
		t.Fatalf("decode %s: %v", res.body, err)
	}
	return u
}

func (api *testAPI) cuInvite(t *testing.T, key, clientID string, body any) cuUser {
	t.Helper()
	res := api.do(request{method: "POST", path: "/v1/users", key: key, clientID: clientID, body: body})
	fields := slices.Clone(cuFields)
	if m, ok := body.(map[string]any); ok {
		for _, name := range []string{"firstName", "lastName"} {
			if m[name] != nil {
				fields = append(fields, name)
			}
		}
	}
	sort.Strings(fields)
	return cuDecode(t, res, http.StatusCreated, fields)
}

// cuCount runs a count query on the test database.
func (api *testAPI) cuCount(t *testing.T, query string, args ...any) int {
	t.Helper()
	values := api.sqlColumn(t, query, args...)
	if len(values) != 1 {
		t.Fatalf("%s: got %d rows, want 1", query, len(values))
	}
	n, err := strconv.Atoi(values[0])
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// cuRequiredEnum is the issue of a missing enum field: Zod names the options
// as the type it expected.
func cuRequiredEnum(options []string, path ...any) issue {
	return issue{Code: "invalid_type", Path: path, Expected: cuExpected(options), Received: "undefined", Message: "Required"}
}

// cuEnumType is the issue of an enum field of the wrong JSON type.
func cuEnumType(options []string, received string, path ...any) issue {
	return issue{Code: "invalid_type", Path: path, Expected: cuExpected(options), Received: received,
		Message: "Expected " + cuExpected(options) + ", received " + received}
}

// cuEnumValue is the issue of a string that is none of the options.
func cuEnumValue(options []string, received string, path ...any) issue {
	return issue{Code: "invalid_enum_value", Path: path, Options: options, Received: received,
		Message: "Invalid enum value. Expected " + cuExpected(options) + ", received '" + received + "'"}
}

func cuExpected(options []string) string {
	quoted := make([]string, len(options))
	for i, o := range options {
		quoted[i] = "'" + o + "'"
	}
	return strings.Join(quoted, " | ")
}

func cuEmailIssue(path ...any) issue {
	return issue{Code: "invalid_string", Path: path, Validation: "email", Message: "Invalid email"}
}

func cuTooSmall(min int64, path ...any) issue {
	return issue{Code: "too_small", Path: path, Minimum: bound(min), Type: "string", Inclusive: &yes, Exact: &no,
		Message: "String must contain at least " + strconv.FormatInt(min, 10) + " character(s)"}
}

func cuTooBig(max int64, path ...any) issue {
	return tooBigString(max, "String must contain at most "+strconv.FormatInt(max, 10)+" character(s)", path...)
}

func TestUsersInvite(t *testing.T) {
	api := newTestAPI(t)
	A, B := api.client.ID, api.otherClient.ID
	ws1 := api.mustCreateWorkspace(A, "Main")
	ws2 := api.mustCreateWorkspace(A, "Second")
	ws3 := api.mustCreateWorkspace(A, "Third")
	wsB := api.mustCreateWorkspace(B, "B's")
	wsOtherFirm := api.mustCreateWorkspace(api.other.client.ID, "Firm two's")
	post := func(key, clientID string, body any) *response {
		return api.do(request{method: "POST", path: "/v1/users", key: key, clientID: clientID, body: body})
	}
	now := apiTime(api.clock.Now())
	users := func(t *testing.T) int {
		t.Helper()
		return api.cuCount(t, `SELECT count(*) FROM users`)
	}
	members := func(t *testing.T) int {
		t.Helper()
		return api.cuCount(t, `SELECT count(*) FROM workspace_members`)
	}

	var anna cuUser
	t.Run("a new user has exactly the Client user fields", func(t *testing.T) {
		anna = api.cuInvite(t, api.accountantKey, A, map[string]any{"email": " \tAnna.Admin@Example.COM  ", "role": "admin"})
		if !generatedID.MatchString(anna.ID) {
			t.Errorf("id: got %q, want a generated cuid", anna.ID)
		}
		want := cuUser{ID: anna.ID, CreatedAt: now, Email: "anna.admin@example.com", Roles: []string{"admin"}}
		if !reflect.DeepEqual(anna, want) {
			t.Errorf("user: got %+v, want %+v", anna, want)
		}
		row := api.sqlColumn(t, `SELECT client_id || ' ' || firm_id || ' ' || client_role || ' ' || coalesce(role_id, 'NULL')
			|| ' ' || invited_at || ' ' || created_at FROM users WHERE id = ?`, anna.ID)
		wantRow := A + " " + api.firm.ID + " admin NULL " + strconv.FormatInt(api.clock.Now().Unix(), 10) + " " +
			strconv.FormatInt(api.clock.Now().Unix(), 10)
		if !reflect.DeepEqual(row, []string{wantRow}) {
			t.Errorf("stored user: got %v, want [%s]", row, wantRow)
		}
	})

	t.Run("names are returned when provided, trimmed", func(t *testing.T) {
		got := api.cuInvite(t, api.accountantKey, A, map[string]any{"email": "berta@example.com", "role": "user",
			"firstName": "  Berta ", "lastName": "Berater\n"})
		if deref(got.FirstName) != "Berta" || deref(got.LastName) != "Berater" || !reflect.DeepEqual(got.Roles, []string{"user"}) {
			t.Errorf("user: got %+v, want Berta Berater with roles [user]", got)
		}
	})

	t.Run("only a first name", func(t *testing.T) {
		res := post(api.accountantKey, A, map[string]any{"email": "first.only@example.com", "role": "user", "firstName": "Carl"})
		got := cuDecode(t, res, http.StatusCreated, []string{"createdAt", "email", "firstName", "id", "roles"})
		if deref(got.FirstName) != "Carl" || got.LastName != nil {
			t.Errorf("names: got %s %s, want Carl and no last name", deref(got.FirstName), deref(got.LastName))
		}
	})

	t.Run("joins the workspaces named at once", func(t *testing.T) {
		// Ids are case-insensitive; a duplicate joins once.
		got := api.cuInvite(t, api.accountantKey, A, map[string]any{"email": "member@example.com", "role": "user",
			"workspaceIds": []string{ws1, strings.ToUpper(ws2), ws1}})
		for _, ws := range []string{ws1, ws2} {
			res := api.do(request{method: "GET", path: "/v1/workspaces/" + ws + "/members", key: api.accountantKey, clientID: A})
			if res.status != http.StatusOK {
				t.Fatalf("members of %s: got %d %s", ws, res.status, res.body)
			}
			var list []struct {
				UserID      string `json:"userId"`
				WorkspaceID string `json:"workspaceId"`
				CreatedAt   string `json:"createdAt"`
				IsMuted     bool   `json:"isMuted"`
				User        struct {
					Email string `json:"email"`
				} `json:"user"`
			}
			res.decode(t, &list)
			if len(list) != 1 || list[0].UserID != got.ID || list[0].WorkspaceID != ws || list[0].User.Email != "member@example.com" ||
				list[0].IsMuted || list[0].CreatedAt != now {
				t.Errorf("members of %s: got %s, want only %s, unmuted, since %s", ws, res.body, got.ID, now)
			}
		}
		if n := api.cuCount(t, `SELECT count(*) FROM workspace_members WHERE user_id = ?`, got.ID); n != 2 {
			t.Errorf("memberships: got %d, want 2", n)
		}
		if n := api.cuCount(t, `SELECT count(*) FROM workspace_members WHERE workspace_id = ?`, ws3); n != 0 {
			t.Errorf("members of the workspace not named: got %d, want 0", n)
		}
	})

	t.Run("an empty workspaceIds joins nothing", func(t *testing.T) {
		got := api.cuInvite(t, api.accountantKey, A, map[string]any{"email": "nobody@example.com", "role": "user", "workspaceIds": []string{}})
		if n := api.cuCount(t, `SELECT count(*) FROM workspace_members WHERE user_id = ?`, got.ID); n != 0 {
			t.Errorf("memberships: got %d, want 0", n)
		}
	})

	t.Run("with the client's own key", func(t *testing.T) {
		got := api.cuInvite(t, api.clientKey, A, map[string]any{"email": "by.client@example.com", "role": "user", "workspaceIds": []string{ws3}})
		if n := api.cuCount(t, `SELECT count(*) FROM users WHERE id = ? AND client_id = ?`, got.ID, A); n != 1 {
			t.Errorf("user of client A: got %d, want 1", n)
		}
	})

	t.Run("the same email in another client is another user", func(t *testing.T) {
		got := api.cuInvite(t, api.otherClientClientKey, B, map[string]any{"email": "anna.admin@example.com", "role": "user"})
		if got.ID == anna.ID {
			t.Errorf("id: got %s, the id of client A's user", got.ID)
		}
		other := api.cuInvite(t, api.other.accountantKey, api.other.client.ID, map[string]any{"email": "anna.admin@example.com", "role": "admin"})
		if n := api.cuCount(t, `SELECT count(*) FROM users WHERE email = 'anna.admin@example.com'`); n != 3 {
			t.Errorf("users with the email: got %d, want 3 (%s, %s, %s)", n, anna.ID, got.ID, other.ID)
		}
	})

	t.Run("the same email twice in one client is a conflict", func(t *testing.T) {
		for _, email := range []string{"anna.admin@example.com", "  ANNA.Admin@example.com\n"} {
			before, beforeMembers := users(t), members(t)
			res := post(api.accountantKey, A, map[string]any{"email": email, "role": "user", "workspaceIds": []string{ws3}})
			wantError(t, res, http.StatusConflict, "conflict", "conflict", "the client has a user with the email anna.admin@example.com")
			if after, afterMembers := users(t), members(t); after != before || afterMembers != beforeMembers {
				t.Errorf("after the conflict: %d users and %d memberships, want %d and %d", after, afterMembers, before, beforeMembers)
			}
		}
		// With the client key too.
		wantError(t, post(api.clientKey, A, map[string]any{"email": "Anna.Admin@Example.com", "role": "admin"}),
			http.StatusConflict, "conflict", "conflict", "the client has a user with the email anna.admin@example.com")
	})

	t.Run("all or nothing: a workspace that is not the client's", func(t *testing.T) {
		for _, c := range []struct {
			name, foreign string
			ids           []string
			index         int
		}{
			{"another client's, last", wsB, []string{ws1, wsB}, 1},
			{"another client's, first", wsB, []string{wsB, ws1, ws2}, 0},
			{"another firm's", wsOtherFirm, []string{ws1, ws2, wsOtherFirm}, 2},
			{"unknown", cuMissingWorkspaceID, []string{ws3, cuMissingWorkspaceID}, 1},
		} {
			t.Run(c.name, func(t *testing.T) {
				before, beforeMembers := users(t), members(t)
				res := post(api.accountantKey, A, map[string]any{"email": "all.or.nothing@example.com", "role": "admin", "workspaceIds": c.ids})
				wantError(t, res, http.StatusNotFound, "not_found", "not_found", "workspace "+c.foreign+" not found")
				if n := api.cuCount(t, `SELECT count(*) FROM users WHERE email = 'all.or.nothing@example.com'`); n != 0 {
					t.Errorf("users with the email: got %d, want 0", n)
				}
				if after, afterMembers := users(t), members(t); after != before || afterMembers != beforeMembers {
					t.Errorf("after the 404: %d users and %d memberships, want %d and %d", after, afterMembers, before, beforeMembers)
				}
			})
		}
		// The foreign answers are the answer about an unknown workspace.
		unknown := post(api.accountantKey, A, map[string]any{"email": "x@example.com", "role": "admin", "workspaceIds": []string{cuMissingWorkspaceID}})
		for _, foreign := range []string{wsB, wsOtherFirm} {
			res := post(api.accountantKey, A, map[string]any{"email": "x@example.com", "role": "admin", "workspaceIds": []string{foreign}})
			sameBodyButID(t, res, foreign, unknown, cuMissingWorkspaceID)
		}
		// The email is free afterwards.
		api.cuInvite(t, api.accountantKey, A, map[string]any{"email": "all.or.nothing@example.com", "role": "admin", "workspaceIds": []string{ws1}})
	})

	t.Run("validation", func(t *testing.T) {
		long := strings.Repeat("a", 243) + "@example.com" // 255 characters
		cases := []struct {
			name string
			body any
			want []issue
		}{
			{"missing email and role, both at once", map[string]any{"workspaceIds": []string{ws1}},
				[]issue{requiredIssue("email"), cuRequiredEnum(cuRoleOptions, "role")}},
			{"empty object", map[string]any{}, []issue{requiredIssue("email"), cuRequiredEnum(cuRoleOptions, "role")}},
			{"bad email", map[string]any{"email": "not-an-email", "role": "user"}, []issue{cuEmailIssue("email")}},
			{"email with a space inside", map[string]any{"email": "anna admin@example.com", "role": "user"}, []issue{cuEmailIssue("email")}},
			{"email without a dot in the domain", map[string]any{"email": "anna@localhost", "role": "user"}, []issue{cuEmailIssue("email")}},
			{"blank email", map[string]any{"email": "   ", "role": "user"}, []issue{cuEmailIssue("email")}},
			{"email of 255 characters", map[string]any{"email": long, "role": "user"}, []issue{cuTooBig(254, "email")}},
			{"role owner", map[string]any{"email": "a@example.com", "role": "owner"}, []issue{cuEnumValue(cuRoleOptions, "owner", "role")}},
			{"role in another case", map[string]any{"email": "a@example.com", "role": "Admin"}, []issue{cuEnumValue(cuRoleOptions, "Admin", "role")}},
			{"role custom", map[string]any{"email": "a@example.com", "role": "custom"}, []issue{cuEnumValue(cuRoleOptions, "custom", "role")}},
			{"role null", map[string]any{"email": "a@example.com", "role": nil}, []issue{cuEnumType(cuRoleOptions, "null", "role")}},
			{"role a number", map[string]any{"email": "a@example.com", "role": 1}, []issue{typeIssueAt("'admin' | 'user'", "number", "role")}},
			{"email a number", map[string]any{"email": 42, "role": "user"}, []issue{typeIssueAt("string", "number", "email")}},
			{"bad workspaceIds elements", map[string]any{"email": "a@example.com", "role": "user", "workspaceIds": []any{ws1, "x", 5, "c-notacuid"}},
				[]issue{cuidIssue("workspaceIds", 1), typeIssueAt("string", "number", "workspaceIds", 2), cuidIssue("workspaceIds", 3)}},
			{"workspaceIds not an array", map[string]any{"email": "a@example.com", "role": "user", "workspaceIds": ws1},
				[]issue{typeIssueAt("array", "string", "workspaceIds")}},
			{"workspaceIds null", map[string]any{"email": "a@example.com", "role": "user", "workspaceIds": nil},
				[]issue{typeIssueAt("array", "null", "workspaceIds")}},
			{"blank and long names", map[string]any{"email": "a@example.com", "role": "user", "firstName": " ", "lastName": strings.Repeat("ä", 101)},
				[]issue{cuTooSmall(1, "firstName"), cuTooBig(100, "lastName")}},
			{"names null", map[string]any{"email": "a@example.com", "role": "user", "firstName": nil, "lastName": 7},
				[]issue{typeIssueAt("string", "null", "firstName"), typeIssueAt("string", "number", "lastName")}},
			{"every field wrong", map[string]any{"email": "nope", "role": "owner", "workspaceIds": []any{"bad"}, "firstName": ""},
				[]issue{cuEmailIssue("email"), cuEnumValue(cuRoleOptions, "owner", "role"), cuidIssue("workspaceIds", 0), cuTooSmall(1, "firstName")}},
			{"not an object", []string{"a@example.com"}, []issue{typeIssueAt("object", "array")}},
		}
		before, beforeMembers := users(t), members(t)
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				wantIssues(t, post(api.accountantKey, A, c.body), "ZodError", c.want)
			})
		}
		if after, afterMembers := users(t), members(t); after != before || afterMembers != beforeMembers {
			t.Errorf("after the 422s: %d users and %d memberships, want %d and %d", after, afterMembers, before, beforeMembers)
		}
		t.Run("a bad x-client-id is reported on its own", func(t *testing.T) {
			wantIssues(t, post(api.accountantKey, "nope", map[string]any{}), "ZodError", []issue{cuidIssue("headers", "x-client-id")})
		})
	})

	t.Run("refused before the body is read", func(t *testing.T) {
		body := map[string]any{"email": "refused@example.com", "role": "user"}
		writeOnlyTasks := api.mustMintKey(api.firm.ID, auth.KeySpec{Permissions: []string{"users:read", "tasks:write"}})
		clientReadOnly := api.mustMintKey(api.firm.ID, auth.KeySpec{ClientID: A, Permissions: []string{"users:read"}})
		cases := []struct {
			name  string
			res   *response
			check func(*testing.T, *response)
		}{
			{"no key", post("", A, body), func(t *testing.T, res *response) {
				wantError(t, res, http.StatusUnauthorized, "auth_error", "unauthorized", "")
			}},
			{"a key without users:write", post(writeOnlyTasks, A, body), func(t *testing.T, res *response) {
				wantError(t, res, http.StatusForbidden, "auth_error", "missing_scope", "this API key lacks the permission users:write")
			}},
			{"a client key without users:write", post(clientReadOnly, A, body), func(t *testing.T, res *response) {
				wantError(t, res, http.StatusForbidden, "auth_error", "missing_scope", "this API key lacks the permission users:write")
			}},
			{"no x-client-id", post(api.accountantKey, "", body), func(t *testing.T, res *response) {
				wantError(t, res, http.StatusBadRequest, "bad_request", "missing_client_id", "")
			}},
			{"client B's key for client A", post(api.otherClientClientKey, A, body), func(t *testing.T, res *response) {
				wantError(t, res, http.StatusNotFound, "not_found", "not_found", "client not found")
			}},
			{"client A's key for client B", post(api.clientKey, B, body), func(t *testing.T, res *response) {
				wantError(t, res, http.StatusNotFound, "not_found", "not_found", "client not found")
			}},
			{"the other firm's key for client A", post(api.other.accountantKey, A, body), func(t *testing.T, res *response) {
				wantError(t, res, http.StatusNotFound, "not_found", "not_found", "client not found")
			}},
			{"an unknown client", post(api.accountantKey, "cnoclientnoclientnoclient1", body), func(t *testing.T, res *response) {
				wantError(t, res, http.StatusNotFound, "not_found", "not_found", "client not found")
			}},
			{"malformed JSON", post(api.accountantKey, A, `{"email":`), func(t *testing.T, res *response) {
				wantError(t, res, http.StatusBadRequest, "bad_request", "invalid_json", "the request body is not valid JSON")
			}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) { c.check(t, c.res) })
		}
		if n := api.cuCount(t, `SELECT count(*) FROM users WHERE email = 'refused@example.com'`); n != 0 {
			t.Errorf("users created by refused calls: got %d, want 0", n)
		}
	})
}

func TestUsersUpdateRole(t *testing.T) {
	api := newTestAPI(t)
	A, B := api.client.ID, api.otherClient.ID
	user := api.cuInvite(t, api.accountantKey, A, map[string]any{"email": "dora@example.com", "role": "user", "firstName": "Dora", "lastName": "Dahl"})
	plain := api.cuInvite(t, api.accountantKey, A, map[string]any{"email": "plain@example.com", "role": "admin"})
	userB := api.cuInvite(t, api.accountantKey, B, map[string]any{"email": "b@example.com", "role": "user"})
	userOtherFirm := api.cuInvite(t, api.other.accountantKey, api.other.client.ID, map[string]any{"email": "c@example.com", "role": "user"})
	accountant := api.admInviteUser(t, api.accountantKey, map[string]any{"email": "acct@example.com", "role": "admin"})
	patch := func(key, clientID, id string, body any) *response {
		return api.do(request{method: "PATCH", path: "/v1/users/" + id, key: key, clientID: clientID, body: body})
	}
	role := func(t *testing.T, id string) string {
		t.Helper()
		got := api.sqlColumn(t, `SELECT coalesce(client_role, 'NULL') FROM users WHERE id = ?`, id)
		if len(got) != 1 {
			t.Fatalf("user %s: %d rows", id, len(got))
		}
		return got[0]
	}

	t.Run("a new role", func(t *testing.T) {
		api.clock.Advance(time.Minute)
		got := cuDecode(t, patch(api.accountantKey, A, user.ID, map[string]any{"role": "admin"}), http.StatusOK, cuNamedFields)
		want := user
		want.Roles = []string{"admin"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("user: got %+v, want %+v", got, want)
		}
		if r := role(t, user.ID); r != "admin" {
			t.Errorf("stored role: got %s, want admin", r)
		}
		if got := api.sqlColumn(t, `SELECT updated_at FROM users WHERE id = ?`, user.ID); !reflect.DeepEqual(got, []string{strconv.FormatInt(api.clock.Now().Unix(), 10)}) {
			t.Errorf("updated_at: got %v, want %d", got, api.clock.Now().Unix())
		}
	})

	t.Run("back with the client's own key and an upper-case id", func(t *testing.T) {
		got := cuDecode(t, patch(api.clientKey, A, strings.ToUpper(user.ID), map[string]any{"role": "user"}), http.StatusOK, cuNamedFields)
		if !reflect.DeepEqual(got.Roles, []string{"user"}) || got.ID != user.ID {
			t.Errorf("user: got %+v, want %s with roles [user]", got, user.ID)
		}
	})

	t.Run("the same role again", func(t *testing.T) {
		got := cuDecode(t, patch(api.accountantKey, A, plain.ID, map[string]any{"role": "admin"}), http.StatusOK, cuFields)
		if !reflect.DeepEqual(got, plain) {
			t.Errorf("user: got %+v, want %+v", got, plain)
		}
	})

	t.Run("validation", func(t *testing.T) {
		cases := []struct {
			name string
			id   string
			body any
			want []issue
		}{
			{"role absent", user.ID, map[string]any{}, []issue{cuRequiredEnum(cuRoleOptions, "role")}},
			{"role absent, other fields ignored", user.ID, map[string]any{"email": "x@example.com"}, []issue{cuRequiredEnum(cuRoleOptions, "role")}},
			{"role null", user.ID, map[string]any{"role": nil}, []issue{cuEnumType(cuRoleOptions, "null", "role")}},
			{"role owner", user.ID, map[string]any{"role": "owner"}, []issue{cuEnumValue(cuRoleOptions, "owner", "role")}},
			{"role an array", user.ID, map[string]any{"role": []string{"admin"}}, []issue{typeIssueAt("'admin' | 'user'", "array", "role")}},
			{"bad id and no role, both at once", "nope", map[string]any{}, []issue{cuidIssue("params", "id"), cuRequiredEnum(cuRoleOptions, "role")}},
			{"bad id", "c-1234567890", map[string]any{"role": "admin"}, []issue{cuidIssue("params", "id")}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				wantIssues(t, patch(api.accountantKey, A, c.id, c.body), "ZodError", c.want)
			})
		}
		if r := role(t, user.ID); r != "user" {
			t.Errorf("stored role after the 422s: got %s, want user", r)
		}
	})

	t.Run("a user of another client is not found, as an unknown one", func(t *testing.T) {
		unknown := patch(api.accountantKey, A, cuMissingUserID, map[string]any{"role": "admin"})
		wantError(t, unknown, http.StatusNotFound, "not_found", "not_found", "user "+cuMissingUserID+" not found")
		for _, c := range []struct {
			name, key, id string
		}{
			{"client B's user with the accountant key", api.accountantKey, userB.ID},
			{"client B's user with client A's key", api.clientKey, userB.ID},
			{"another firm's client user", api.accountantKey, userOtherFirm.ID},
			{"an accountant user of the firm", api.accountantKey, accountant.ID},
		} {
			t.Run(c.name, func(t *testing.T) {
				sameBodyButID(t, patch(c.key, A, c.id, map[string]any{"role": "admin"}), c.id, unknown, cuMissingUserID)
			})
		}
		if r := role(t, userB.ID); r != "user" {
			t.Errorf("client B's user's role: got %s, want user (unchanged)", r)
		}
		if r := role(t, userOtherFirm.ID); r != "user" {
			t.Errorf("the other firm's user's role: got %s, want user (unchanged)", r)
		}
		if r := role(t, accountant.ID); r != "NULL" {
			t.Errorf("accountant user's client role: got %s, want NULL", r)
		}
		// Client B reaches its own user.
		got := cuDecode(t, patch(api.otherClientClientKey, B, userB.ID, map[string]any{"role": "admin"}), http.StatusOK, cuFields)
		if !reflect.DeepEqual(got.Roles, []string{"admin"}) {
			t.Errorf("client B's user: got %+v, want roles [admin]", got)
		}
	})

	t.Run("refused before the body is read", func(t *testing.T) {
		readOnly := api.mustMintKey(api.firm.ID, auth.KeySpec{Permissions: []string{"users:read"}})
		body := map[string]any{"role": "admin"}
		wantError(t, patch("", A, user.ID, body), http.StatusUnauthorized, "auth_error", "unauthorized", "")
		wantError(t, patch(readOnly, A, user.ID, body), http.StatusForbidden, "auth_error", "missing_scope",
			"this API key lacks the permission users:write")
		wantError(t, patch(api.accountantKey, "", user.ID, body), http.StatusBadRequest, "bad_request", "missing_client_id", "")
		wantError(t, patch(api.otherClientClientKey, A, user.ID, body), http.StatusNotFound, "not_found", "not_found", "client not found")
		wantError(t, patch(api.other.accountantKey, A, user.ID, body), http.StatusNotFound, "not_found", "not_found", "client not found")
		if r := role(t, user.ID); r != "user" {
			t.Errorf("stored role after refused calls: got %s, want user", r)
		}
	})
}
