package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"acctapi/auth"
	"acctapi/db"
	"acctapi/webhooks"
)

// fuzzFixture is one real API for a whole fuzz target, with records that
// fuzzed inputs may name: building it per input would cost more than the
// input itself.
type fuzzFixture struct {
	base *testAPI
	// acct, cli and otherAcct are keys (of the first firm, its client, and
	// the second firm) whose rate limit no fuzzing session reaches.
	acct, cli, otherAcct string
	// Records of the first firm's client; file has bytes in the store.
	ws, task, folder, label, file, clientUser string
	// fileContent is the file's bytes.
	fileContent []byte
	// Records of the first firm: an accountant user, a custom role, a
	// webhook subscription and one of its deliveries.
	acctUser, role, hook, delivery string
	// Records of the second firm, which answers must never show.
	otherWS, otherTask, otherHook string
	// A collect of the first firm's client and its first item.
	collect, item string
}

func newFuzzFixture(f *testing.F) *fuzzFixture {
	api := newTestAPI(f)
	ctx := context.Background()
	unlimited := func(firmID, clientID string) string {
		return api.mustMintKey(firmID, auth.KeySpec{ClientID: clientID, RateLimitMax: math.MaxInt32})
	}
	fx := &fuzzFixture{base: api,
		acct: unlimited(api.firm.ID, ""), cli: unlimited(api.firm.ID, api.client.ID), otherAcct: unlimited(api.other.firm.ID, "")}
	fx.ws = api.mustCreateWorkspace(api.client.ID, "Fuzz")
	fx.folder = api.mustCreateFolder(api.client.ID, fx.ws, "Folder")
	fx.label = api.flLabel(f, api.client.ID, fx.ws, "Label")
	fx.fileContent = flPDF
	fx.file = fuzzStoreFile(f, api, fx.ws, fx.fileContent)
	fx.clientUser = api.wsClientUser(api.firm.ID, api.client.ID, "member@fuzz.example", nil, nil, nil)
	fx.acctUser = api.wsAccountantUser(api.firm.ID, "accountant@fuzz.example")
	role, err := api.store.CreateRole(ctx, api.firm.ID, "Fuzz role")
	if err != nil {
		f.Fatal(err)
	}
	fx.role = role.ID
	// Task and workspace creations only, so that populate gives the
	// deliveries list pages and fuzzed writes of other kinds deliver nothing.
	fx.hook = fuzzWebhook(f, api, api.firm.ID, []string{db.EventTaskCreated, db.EventWorkspaceCreated})
	fx.otherHook = fuzzWebhook(f, api, api.other.firm.ID, []string{db.AllEvents})
	task, err := api.store.CreateTask(ctx, api.client.ID, db.TaskCreate{WorkspaceID: fx.ws, Title: "Fuzz"})
	if err != nil {
		f.Fatal(err)
	}
	fx.task = task.ID
	fx.otherWS = api.mustCreateWorkspace(api.other.client.ID, "Other")
	other, err := api.store.CreateTask(ctx, api.other.client.ID, db.TaskCreate{WorkspaceID: fx.otherWS, Title: "Other"})
	if err != nil {
		f.Fatal(err)
	}
	fx.otherTask = other.ID
	collect, err := api.store.CreateCollect(ctx, api.client.ID, db.CollectCreate{WorkspaceID: fx.ws, Title: "Fuzz",
		Items: []db.CollectItemCreate{{Title: "Statement", Required: true, FolderID: &fx.folder}}})
	if err != nil {
		f.Fatal(err)
	}
	fx.collect, fx.item = collect.ID, collect.Items[0].ID
	fx.populate(f)
	deliveries, err := api.store.ListDeliveries(ctx, api.firm.ID, fx.hook, db.PageRequest{Limit: 1, Sort: "createdAt"})
	if err != nil || len(deliveries.Items) == 0 {
		f.Fatalf("deliveries of the fixture's subscription: %v, %v", deliveries, err)
	}
	fx.delivery = deliveries.Items[0].ID
	return fx
}

// fuzzWebhook subscribes the firm to the events; the URL is never called.
func fuzzWebhook(f *testing.F, api *testAPI, firmID string, events []string) string {
	w, err := api.store.CreateWebhook(context.Background(), firmID, db.WebhookCreate{
		URL: "https://hooks.example.com/fuzz", Events: events, Secret: webhooks.NewSecret()})
	if err != nil {
		f.Fatal(err)
	}
	return w.ID
}

// populate gives every list a few pages' worth of items at limit 2.
func (fx *fuzzFixture) populate(f *testing.F) {
	api, ctx := fx.base, context.Background()
	due := api.clock.Now().Add(48 * time.Hour)
	for i := range 5 {
		in := db.TaskCreate{WorkspaceID: fx.ws, Title: fmt.Sprintf("Task %d", i)}
		if i%2 == 0 {
			in.ParentID, in.DueDate = &fx.task, &due
		}
		if _, err := api.store.CreateTask(ctx, api.client.ID, in); err != nil {
			f.Fatal(err)
		}
		api.mustCreateWorkspace(api.client.ID, fmt.Sprintf("Workspace %d", i))
		api.mustCreateFolder(api.client.ID, fx.ws, fmt.Sprintf("Folder %d", i))
		api.flLabel(f, api.client.ID, fx.ws, fmt.Sprintf("Label %d", i))
		api.mustCreateClient(api.firm.ID, fmt.Sprintf("Client %d", i))
		api.wsAccountantUser(api.firm.ID, fmt.Sprintf("accountant%d@fuzz.example", i))
		fuzzWebhook(f, api, api.firm.ID, []string{db.EventAccountantUserUpdated})
		collect := db.CollectCreate{WorkspaceID: fx.ws, Title: fmt.Sprintf("Collect %d", i), Items: []db.CollectItemCreate{{Title: "Item"}}}
		if i%2 == 0 {
			collect.TaskID, collect.DueDate = &fx.task, &due
		}
		if _, err := api.store.CreateCollect(ctx, api.client.ID, collect); err != nil {
			f.Fatal(err)
		}
		_, hash, err := auth.NewCollectToken()
		if err != nil {
			f.Fatal(err)
		}
		if _, err := api.store.CreateCollectSession(ctx, api.client.ID, fx.collect,
			db.CollectSessionCreate{ExpiresAt: due, TokenHash: hash}); err != nil {
			f.Fatal(err)
		}
	}
}

// fuzzStoreFile records a file of the workspace with its bytes in the store.
func fuzzStoreFile(f *testing.F, api *testAPI, workspaceID string, content []byte) string {
	pending, err := api.files.Write(bytes.NewReader(content), int64(len(content)))
	if err != nil {
		f.Fatal(err)
	}
	id := db.NewID()
	if err := api.files.Commit(pending, id); err != nil {
		f.Fatal(err)
	}
	_, err = api.store.CreateFile(context.Background(), api.client.ID, db.FileCreate{ID: id, WorkspaceID: workspaceID,
		Name: "receipt.pdf", MimeType: "application/pdf", Size: pending.Size, SHA256: pending.SHA256})
	if err != nil {
		f.Fatal(err)
	}
	return id
}

// on returns the fixture's API reporting to the test of one input.
func (fx *fuzzFixture) on(t *testing.T) *testAPI {
	api := *fx.base
	api.t = t
	return &api
}

// expand replaces the placeholders of a fuzzed input with the fixture's
// ids, so that inputs can name records that exist: the fuzzer cannot guess
// ids, and would otherwise never get past "not found".
func (fx *fuzzFixture) expand(s string) string {
	return strings.NewReplacer(
		"$W", fx.ws, "$T", fx.task, "$F", fx.folder, "$L", fx.label, "$A", fx.file, "$U", fx.clientUser,
		"$M", fx.acctUser, "$R", fx.role, "$C", fx.base.client.ID, "$O", fx.base.otherClient.ID,
		"$H", fx.hook, "$D", fx.delivery, "$K", fx.collect, "$I", fx.item,
		"$w", fx.otherWS, "$t", fx.otherTask, "$c", fx.base.other.client.ID, "$h", fx.otherHook,
	).Replace(s)
}

// fuzzStatuses are the statuses a request may get for what it sent; a 500
// is never one of them.
var fuzzStatuses = []int{http.StatusOK, http.StatusCreated, http.StatusBadRequest, http.StatusNotFound,
	http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity}

// fuzzCheckAnswer checks what every fuzzed request's answer must be: one of
// the statuses, a JSON body, the standard error body for an error (api.do
// has checked it against the OpenAPI document too). It returns the body of
// a 2xx, nil otherwise.
func fuzzCheckAnswer(t *testing.T, api *testAPI, res *response, statuses []int) map[string]any {
	t.Helper()
	if !slices.Contains(statuses, res.status) {
		t.Fatalf("status %d (body %s), want one of %v", res.status, res.body, statuses)
	}
	if !json.Valid(res.body) {
		t.Fatalf("status %d with a body that is not JSON: %q", res.status, res.body)
	}
	if res.status >= 300 {
		if res.status != http.StatusUnprocessableEntity {
			api.checkErrorShape(res)
		}
		return nil
	}
	var body map[string]any
	json.Unmarshal(res.body, &body)
	return body
}

// absent marks a field that an answer must not hold.
type absent struct{}

// wantFields checks that got holds each field of want with its value.
func wantFields(t *testing.T, what string, got, want map[string]any) {
	t.Helper()
	for name, w := range want {
		g, ok := got[name]
		switch {
		case w == absent{}:
			if ok {
				t.Errorf("%s: %s is %v, want it absent", what, name, g)
			}
		case !ok:
			t.Errorf("%s: no %s, want %#v", what, name, w)
		case !reflect.DeepEqual(g, w):
			t.Errorf("%s: %s is %#v, want %#v", what, name, g, w)
		}
	}
}

// Normalisations the API documents for accepted input, applied to the
// decoded JSON value of a field (nil for null).

func trimmed(v any) any {
	if v == nil {
		return nil
	}
	return strings.TrimSpace(v.(string))
}

func lowerID(v any) any {
	if v == nil {
		return nil
	}
	return strings.ToLower(v.(string))
}

func apiDate(v any) any {
	if v == nil {
		return nil
	}
	t, _ := time.Parse(time.RFC3339, v.(string))
	return apiTime(t.Truncate(time.Second))
}

// optionalName is a first or last name: absent from the answer unless sent.
func optionalName(in map[string]any, name string) any {
	if v, ok := in[name]; ok {
		return trimmed(v)
	}
	return absent{}
}

// fields applies a normalisation to the fields of in that were sent.
func fields(in map[string]any, want map[string]any, norm func(any) any, names ...string) {
	for _, name := range names {
		if v, ok := in[name]; ok {
			want[name] = norm(v)
		}
	}
}

func same(v any) any { return v }

// fuzzBodyEndpoint is an endpoint taking a JSON body, with what an accepted
// body must change: check compares the answer with the body sent and reads
// the record back.
type fuzzBodyEndpoint struct {
	method, path string
	check        func(t *testing.T, fx *fuzzFixture, api *testAPI, in, out map[string]any)
}

// fuzzBodyEndpoints are every endpoint that takes a JSON body; a fuzzed
// input's first byte chooses one.
var fuzzBodyEndpoints = []fuzzBodyEndpoint{
	{"POST", "/v1/tasks", func(t *testing.T, fx *fuzzFixture, api *testAPI, in, out map[string]any) {
		want := map[string]any{"title": trimmed(in["title"]), "workspaceId": lowerID(in["workspaceId"]),
			"text": in["text"], "dueDate": nil, "parentId": nil, "status": "OPEN", "destinationFolderId": nil}
		fields(in, want, apiDate, "dueDate")
		fields(in, want, lowerID, "parentId")
		wantFields(t, "created task", out, want)
		fuzzReadBack(t, fx, api, "/v1/tasks", out)
	}},
	{"PATCH", "/v1/tasks/$T", func(t *testing.T, fx *fuzzFixture, api *testAPI, in, out map[string]any) {
		want := map[string]any{"id": fx.task}
		fields(in, want, trimmed, "title")
		fields(in, want, same, "text", "status")
		fields(in, want, apiDate, "dueDate")
		fields(in, want, lowerID, "parentId", "destinationFolderId")
		wantFields(t, "updated task", out, want)
		fuzzReadBack(t, fx, api, "/v1/tasks", out)
		if ids, ok := in["assetFileIds"].([]any); ok {
			// No endpoint shows a task's asset files: the table does.
			want := []string{}
			for _, id := range ids {
				want = append(want, strings.ToLower(id.(string)))
			}
			slices.Sort(want)
			got := api.sqlColumn(t, `SELECT file_id FROM task_asset_files WHERE task_id = ? ORDER BY file_id`, fx.task)
			if want = slices.Compact(want); !slices.Equal(got, want) {
				t.Errorf("asset files of the task: stored %v, want %v", got, want)
			}
		}
	}},
	{"POST", "/v1/workspaces", func(t *testing.T, fx *fuzzFixture, api *testAPI, in, out map[string]any) {
		wantFields(t, "created workspace", out, map[string]any{"name": trimmed(in["name"]), "clientId": api.client.ID, "archivedAt": nil})
		fuzzReadBack(t, fx, api, "/v1/workspaces", out)
	}},
	{"PATCH", "/v1/workspaces/$W", func(t *testing.T, fx *fuzzFixture, api *testAPI, in, out map[string]any) {
		wantFields(t, "renamed workspace", out, map[string]any{"id": fx.ws, "name": trimmed(in["name"])})
		fuzzReadBack(t, fx, api, "/v1/workspaces", out)
	}},
	{"POST", "/v1/workspaces/$W/members", func(t *testing.T, fx *fuzzFixture, api *testAPI, in, out map[string]any) {
		wantFields(t, "added member", out, map[string]any{"workspaceId": fx.ws, "userId": lowerID(in["userId"])})
		if got := fuzzMember(t, fx, api, out["userId"].(string)); !reflect.DeepEqual(got, out) {
			t.Errorf("member read back: got %v, want %v", got, out)
		}
	}},
	{"DELETE", "/v1/workspaces/$W/members", func(t *testing.T, fx *fuzzFixture, api *testAPI, in, out map[string]any) {
		wantFields(t, "removed member", out, map[string]any{"object": "workspace_member", "deleted": true, "id": lowerID(in["userId"])})
		if got := fuzzMember(t, fx, api, out["id"].(string)); got != nil {
			t.Errorf("removed member %v is still listed", got)
		}
	}},
	{"POST", "/v1/workspaces/$W/folders", func(t *testing.T, fx *fuzzFixture, api *testAPI, in, out map[string]any) {
		want := map[string]any{"name": trimmed(in["name"]), "workspaceId": fx.ws, "parentId": lowerID(in["parentId"])}
		wantFields(t, "created folder", out, want)
		fuzzReadBack(t, fx, api, "/v1/workspaces/"+fx.ws+"/folders", out)
	}},
	{"POST", "/v1/workspaces/$W/labels", func(t *testing.T, fx *fuzzFixture, api *testAPI, in, out map[string]any) {
		wantFields(t, "created label", out, map[string]any{"name": trimmed(in["name"]), "workspaceId": fx.ws})
		fuzzReadBack(t, fx, api, "/v1/workspaces/"+fx.ws+"/labels", out)
	}},
	{"POST", "/v1/users", func(t *testing.T, fx *fuzzFixture, api *testAPI, in, out map[string]any) {
		want := map[string]any{"email": strings.ToLower(trimmed(in["email"]).(string)), "roles": []any{in["role"]},
			"firstName": optionalName(in, "firstName"), "lastName": optionalName(in, "lastName"), "mailed": false}
		wantFields(t, "invited user", out, want)
		id := out["id"].(string)
		fuzzClientUserRow(t, api, id, out)
		ids, _ := in["workspaceIds"].([]any)
		for _, ws := range ids {
			if ws := strings.ToLower(ws.(string)); ws == fx.ws && fuzzMember(t, fx, api, id) == nil {
				t.Errorf("invited user %s is not a member of workspace %s", id, ws)
			}
		}
	}},
	{"PATCH", "/v1/users/$U", func(t *testing.T, fx *fuzzFixture, api *testAPI, in, out map[string]any) {
		wantFields(t, "updated user", out, map[string]any{"id": fx.clientUser, "roles": []any{in["role"]}})
		fuzzClientUserRow(t, api, fx.clientUser, out)
	}},
	{"POST", "/v1/admin/clients", func(t *testing.T, fx *fuzzFixture, api *testAPI, in, out map[string]any) {
		want := map[string]any{"name": trimmed(in["name"]), "type": in["type"], "customId": nil, "legalName": nil, "archivedAt": nil}
		fields(in, want, trimmed, "customId", "legalName")
		wantFields(t, "created client", out, want)
		fuzzClientReadBack(t, fx, api, in, out, true)
	}},
	{"PATCH", "/v1/admin/clients/$C", func(t *testing.T, fx *fuzzFixture, api *testAPI, in, out map[string]any) {
		want := map[string]any{"id": api.client.ID}
		fields(in, want, trimmed, "name", "customId", "legalName")
		fields(in, want, same, "type")
		wantFields(t, "updated client", out, want)
		fuzzClientReadBack(t, fx, api, in, out, false)
	}},
	{"POST", "/v1/admin/users", func(t *testing.T, fx *fuzzFixture, api *testAPI, in, out map[string]any) {
		want := map[string]any{"email": strings.ToLower(trimmed(in["email"]).(string)),
			"firstName": optionalName(in, "firstName"), "lastName": optionalName(in, "lastName"), "mailed": false}
		wantFields(t, "invited accountant user", out, want)
		fuzzRole(t, in, out)
		// mailed belongs to the invitation's answer; reads show the user.
		user := maps.Clone(out)
		delete(user, "mailed")
		fuzzReadBack(t, fx, api, "/v1/admin/users", user)
	}},
	{"PATCH", "/v1/admin/users/$M", func(t *testing.T, fx *fuzzFixture, api *testAPI, in, out map[string]any) {
		wantFields(t, "updated accountant user", out, map[string]any{"id": fx.acctUser})
		fuzzRole(t, in, out)
		fuzzReadBack(t, fx, api, "/v1/admin/users", out)
	}},
	{"POST", "/v1/webhooks", func(t *testing.T, fx *fuzzFixture, api *testAPI, in, out map[string]any) {
		want := map[string]any{"url": trimmed(in["url"]), "events": webhookEventList(in["events"]), "clientId": lowerID(in["clientId"]),
			"description": trimmed(in["description"]), "status": "active", "failingSince": nil}
		wantFields(t, "created webhook", out, want)
		secret, _ := out["secret"].(string)
		if !whSecretForm.MatchString(secret) {
			t.Errorf("created webhook: secret %q, want whsec_ and the base64 of 32 bytes", secret)
		}
		// Read back without the secret, which only this answer shows.
		shown := maps.Clone(out)
		delete(shown, "secret")
		fuzzReadBack(t, fx, api, "/v1/webhooks", shown)
		// A subscription kept would get every later event: the fixture's
		// writes would cost more with each one.
		if res := api.do(request{method: "DELETE", path: "/v1/webhooks/" + out["id"].(string), key: fx.acct}); res.status != http.StatusOK {
			t.Fatalf("delete the created webhook: %d %s", res.status, res.body)
		}
	}},
	{"PATCH", "/v1/webhooks/$H", func(t *testing.T, fx *fuzzFixture, api *testAPI, in, out map[string]any) {
		want := map[string]any{"id": fx.hook}
		fields(in, want, trimmed, "url", "description")
		fields(in, want, lowerID, "clientId")
		fields(in, want, webhookEventList, "events")
		if enabled, ok := in["enabled"].(bool); ok {
			want["status"], want["failingSince"] = "disabled", nil
			if enabled {
				want["status"] = "active"
			}
		}
		wantFields(t, "updated webhook", out, want)
		fuzzReadBack(t, fx, api, "/v1/webhooks", out)
	}},
	{"POST", "/v1/collects", func(t *testing.T, fx *fuzzFixture, api *testAPI, in, out map[string]any) {
		want := map[string]any{"title": trimmed(in["title"]), "workspaceId": lowerID(in["workspaceId"]), "message": in["message"],
			"dueDate": nil, "taskId": nil, "status": "OPEN", "locale": "en", "submittedAt": nil}
		fields(in, want, apiDate, "dueDate")
		fields(in, want, lowerID, "taskId")
		fields(in, want, same, "locale")
		wantFields(t, "created collect", out, want)
		items, got := in["items"].([]any), out["items"].([]any)
		if len(items) != len(got) {
			t.Fatalf("created collect: %d items, want %d", len(got), len(items))
		}
		for i, item := range items {
			fuzzCollectItem(t, item.(map[string]any), got[i].(map[string]any), true)
		}
		fuzzReadBack(t, fx, api, "/v1/collects", out)
	}},
	{"PATCH", "/v1/collects/$K", func(t *testing.T, fx *fuzzFixture, api *testAPI, in, out map[string]any) {
		want := map[string]any{"id": fx.collect}
		fields(in, want, trimmed, "title")
		fields(in, want, same, "message", "status")
		fields(in, want, apiDate, "dueDate")
		wantFields(t, "updated collect", out, want)
		fuzzReadBack(t, fx, api, "/v1/collects", out)
	}},
	{"POST", "/v1/collects/$K/items", func(t *testing.T, fx *fuzzFixture, api *testAPI, in, out map[string]any) {
		items := out["items"].([]any)
		fuzzCollectItem(t, in, items[len(items)-1].(map[string]any), true)
		fuzzReadBack(t, fx, api, "/v1/collects", out)
	}},
	{"PATCH", "/v1/collects/$K/items/$I", func(t *testing.T, fx *fuzzFixture, api *testAPI, in, out map[string]any) {
		item := out["items"].([]any)[0].(map[string]any)
		wantFields(t, "updated item", item, map[string]any{"id": fx.item})
		fuzzCollectItem(t, in, item, false)
		fuzzReadBack(t, fx, api, "/v1/collects", out)
	}},
	{"POST", "/v1/collects/$K/sessions", func(t *testing.T, fx *fuzzFixture, api *testAPI, in, out map[string]any) {
		seconds := float64(defaultSessionLifetime)
		if v, ok := in["expiresIn"].(float64); ok {
			seconds = v
		}
		var label any
		if v, ok := in["label"].(string); ok && strings.TrimSpace(v) != "" {
			label = strings.TrimSpace(v)
		}
		// The test server sends no mail: an address is kept, nothing mailed.
		var email any
		if v, ok := in["email"].(string); ok {
			email = strings.ToLower(strings.TrimSpace(v))
		}
		reminders := email != nil && in["reminders"] != false
		expires := apiTime(api.clock.Now().Add(time.Duration(seconds) * time.Second))
		wantFields(t, "created session", out, map[string]any{"collectId": fx.collect, "label": label, "revokedAt": nil, "lastUsedAt": nil,
			"expiresAt": expires, "email": email, "reminders": reminders, "mail": nil, "mailed": false})
		token, _ := out["token"].(string)
		if !auth.ValidCollectToken(token) || out["url"] != api.server.URL+"/collect/"+token {
			t.Errorf("created session: token %q, url %v", token, out["url"])
		}
		shown := maps.Clone(out)
		delete(shown, "token")
		delete(shown, "url")
		delete(shown, "mailed")
		delete(shown, "warnings")
		fuzzReadBack(t, fx, api, "/v1/collects/"+fx.collect+"/sessions", shown)
	}},
}

// fuzzCollectItem checks an item of an answer against the item fields sent;
// a new item is required unless sent otherwise, and PENDING.
func fuzzCollectItem(t *testing.T, in, out map[string]any, created bool) {
	t.Helper()
	want := map[string]any{}
	if created {
		want = map[string]any{"required": true, "description": nil, "folderId": nil, "kind": nil, "fileIds": []any{}}
	} else {
		fields(in, want, trimmed, "rejectionReason")
		fields(in, want, same, "status")
	}
	fields(in, want, trimmed, "title")
	fields(in, want, same, "description", "required", "kind")
	fields(in, want, lowerID, "folderId")
	if created {
		// A new item is pending, whatever a body says of its status.
		want["status"], want["rejectionReason"] = "PENDING", nil
	}
	wantFields(t, "item", out, want)
}

// webhookEventList is an events list as stored: ["*"] when it holds "*",
// else the types sent without duplicates.
func webhookEventList(v any) any {
	out := []any{}
	for _, e := range v.([]any) {
		if e == db.AllEvents {
			return []any{db.AllEvents}
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// fuzzReadBack lists the record of an answer (the page that starts at it)
// and checks that it reads back as answered.
func fuzzReadBack(t *testing.T, fx *fuzzFixture, api *testAPI, list string, out map[string]any) {
	t.Helper()
	res := api.do(request{method: "GET", path: list + "?limit=1&cursor=" + out["id"].(string), key: fx.acct, clientID: api.client.ID})
	page := fuzzCheckAnswer(t, api, res, []int{http.StatusOK})
	if data, _ := page["data"].([]any); len(data) == 0 || !reflect.DeepEqual(data[0], out) {
		t.Errorf("%s read back %s, want %v", list, res.body, out)
	}
}

// fuzzMember returns the fixture workspace's member with the user id, nil
// when there is none.
func fuzzMember(t *testing.T, fx *fuzzFixture, api *testAPI, userID string) any {
	t.Helper()
	res := api.do(request{method: "GET", path: "/v1/workspaces/" + fx.ws + "/members", key: fx.acct, clientID: api.client.ID})
	if res.status != http.StatusOK {
		t.Fatalf("members: %d %s", res.status, res.body)
	}
	var members []map[string]any
	res.decode(t, &members)
	for _, m := range members {
		if m["userId"] == userID {
			return m
		}
	}
	return nil
}

// fuzzClientUserRow checks the stored client user against the answer: no
// endpoint reads one back.
func fuzzClientUserRow(t *testing.T, api *testAPI, id string, out map[string]any) {
	t.Helper()
	row := api.sqlColumn(t, `SELECT json_object('id', id, 'email', email, 'firstName', first_name, 'lastName', last_name,
		'roles', json_array(client_role)) FROM users WHERE id = ? AND client_id = ?`, id, api.client.ID)
	if len(row) != 1 {
		t.Fatalf("user %s: %d rows", id, len(row))
	}
	var stored map[string]any
	json.Unmarshal([]byte(row[0]), &stored)
	for name, v := range stored {
		if v == nil {
			stored[name] = absent{}
		}
	}
	wantFields(t, "stored user", out, stored)
}

// fuzzClientReadBack reads the client back, and its address, which answers
// do not show.
func fuzzClientReadBack(t *testing.T, fx *fuzzFixture, api *testAPI, in, out map[string]any, create bool) {
	t.Helper()
	id := out["id"].(string)
	res := api.do(request{method: "GET", path: "/v1/admin/clients/" + id, key: fx.acct})
	if got := fuzzCheckAnswer(t, api, res, []int{http.StatusOK}); !reflect.DeepEqual(got, out) {
		t.Errorf("client read back %s, want %v", res.body, out)
	}
	address, _ := in["address"].(map[string]any)
	if !create && address == nil {
		return
	}
	stored := api.admAddress(t, id)
	for i, name := range []string{"line1", "line2", "city", "postalCode", "countryCode"} {
		v, sent := address[name]
		if !sent && !create {
			continue
		}
		want := trimmed(v)
		if s, ok := want.(string); ok && name == "countryCode" {
			want = strings.ToUpper(s)
		}
		var got any
		if stored[i] != nil {
			got = *stored[i]
		}
		if got != want {
			t.Errorf("client %s address %s: stored %#v, want %#v", id, name, got, want)
		}
	}
}

// fuzzRole checks the role of an accountant user against the role sent: a
// built-in role's name or any role's id.
func fuzzRole(t *testing.T, in, out map[string]any) {
	t.Helper()
	roles, _ := out["roles"].([]any)
	if len(roles) != 1 {
		t.Fatalf("roles: got %v, want one", out["roles"])
	}
	role := roles[0].(map[string]any)
	sent := in["role"].(string)
	if slices.Contains(db.ClientRoles, sent) {
		wantFields(t, "role", role, map[string]any{"name": sent})
	} else {
		wantFields(t, "role", role, map[string]any{"id": strings.ToLower(sent)})
	}
}

// FuzzJSONBody sends a fuzzed JSON body to the endpoint the first byte
// chooses. An answer is never a 500; an accepted body reads back as sent,
// normalised as documented.
func FuzzJSONBody(f *testing.F) {
	seeds := [][]string{
		{`{"title":"File the VAT return","workspaceId":"$W"}`,
			`{"title":"  Sub  ","workspaceId":"$W","text":"","dueDate":"2026-12-31T23:59:59.999+02:00","parentId":"$T"}`,
			`{"title":"x","workspaceId":"$w"}`, `{"title":"","workspaceId":"$W"}`, `[]`, `null`},
		{`{"title":"Renamed","status":"IN_REVIEW","dueDate":null,"text":"notes"}`, `{"text":null}`,
			`{"assetFileIds":["$A"],"destinationFolderId":"$F"}`, `{"parentId":"$T"}`, `{"status":"DONE"}`, `{}`},
		{`{"name":"Receipts"}`, `{"name":" \t"}`, `{"name":123}`},
		{`{"name":"Renamed workspace"}`, `{"name":null}`},
		{`{"userId":"$U"}`, `{"userId":"$M"}`, `{"userId":"not-an-id"}`},
		{`{"userId":"$U"}`, `{"userId":"CNOSUCHUSER00000"}`},
		{`{"name":"2026","parentId":"$F"}`, `{"name":"Top","parentId":null}`},
		{`{"name":"tax"}`, `{"name":"tax"}`},
		{`{"email":" New@Example.COM ","role":"user","firstName":" Ada ","workspaceIds":["$W"]}`,
			`{"email":"a@b.c","role":"admin","lastName":""}`, `{"email":"nope","role":"owner"}`},
		{`{"role":"admin"}`, `{"role":"user"}`, `{"role":null}`},
		{`{"name":"Acme","type":"legal_person","customId":" 42 ","address":{"line1":"1 Main St","countryCode":"de","postalCode":""}}`,
			`{"name":"Solo","type":"natural_person","legalName":null}`, `{"name":"x","type":"x","address":{"countryCode":"ZZ"}}`},
		{`{"name":"Client One","legalName":"One GmbH","address":{"city":null,"countryCode":"fr"}}`, `{"address":[]}`},
		{`{"email":"acc@firm.example","role":"admin","firstName":"Bo"}`, `{"email":"custom@firm.example","role":"$R"}`,
			`{"email":"x@y.z","role":123}`},
		{`{"role":"$R"}`, `{"role":"user"}`, `{"role":"cnosuchrole0000"}`},
		{`{"url":" https://hooks.example.com/acct ","events":["task.created","file.created","task.created"],"clientId":"$C","description":" Ledger sync "}`,
			`{"url":"https://hooks.example.com/all","events":["task.deleted","*"],"clientId":null,"description":null}`,
			`{"url":"http://hooks.example.com/","events":["*"]}`, `{"url":"https://10.0.0.1/","events":["*"]}`,
			`{"url":"https://user:pw@hooks.example.com/#top","events":["*"]}`, `{"url":"https://[::ffff:169.254.169.254]/","events":["*"]}`,
			`{"url":"https://hooks.example.com/","events":[]}`, `{"url":"https://hooks.example.com/","events":["task.created"],"clientId":"$c"}`,
			`{"url":"https://hooks.example.com/","events":["nope"]}`, `{"url":"https://a.example.com","events":["user.invited","user.invited"],"description":"  "}`},
		{`{"url":"https://hooks.example.com/new","events":["client.updated","*"],"description":" x "}`, `{"clientId":"$O"}`,
			`{"clientId":null,"description":null}`, `{"enabled":false}`, `{"enabled":true}`, `{"url":null}`, `{"events":null}`,
			`{"clientId":"$c"}`, `{"url":"https://localhost/"}`, `{}`},
		{`{"workspaceId":"$W","title":" March ","taskId":"$T","locale":"de","dueDate":"2026-12-10T00:00:00+01:00","message":"Hi\nthere",` +
			`"items":[{"title":"Bank","folderId":"$F","description":"PDF"},{"title":"Receipts","required":false}]}`,
			`{"workspaceId":"$W","title":"x","items":[]}`, `{"workspaceId":"$w","title":"x","items":[{"title":"a"}]}`,
			`{"workspaceId":"$W","title":"x","items":[{"title":"a","folderId":"$F"}],"locale":"fr"}`},
		{`{"title":"Renamed","message":null,"dueDate":null}`, `{"status":"CLOSED"}`, `{"status":"OPEN"}`, `{"status":"SUBMITTED"}`, `{}`},
		{`{"title":"Payslips","required":false,"folderId":"$F"}`, `{"title":""}`, `{"title":"x","folderId":"$w"}`,
			`{"title":"Statements","kind":"bank_statement"}`, `{"title":"x","kind":"other"}`, `{"title":"x","kind":null}`},
		{`{"status":"REJECTED","rejectionReason":" blurry "}`, `{"title":"Bank","description":null,"folderId":null,"required":true}`,
			`{"rejectionReason":"x"}`, `{"status":"RECEIVED"}`, `{"folderId":"$F"}`, `{"kind":"payslip"}`, `{"kind":null}`, `{"kind":"Payslip"}`},
		{`{}`, `{"expiresIn":300,"label":" Anna "}`, `{"expiresIn":7776000}`, `{"expiresIn":299}`, `{"expiresIn":1e400}`, `{"label":""}`,
			`{"email":" Anna@Schmidt.Example "}`, `{"email":"anna@schmidt.example","reminders":false}`, `{"email":"no"}`, `{"reminders":true}`},
	}
	if len(seeds) != len(fuzzBodyEndpoints) {
		f.Fatalf("%d seed lists for %d endpoints", len(seeds), len(fuzzBodyEndpoints))
	}
	for i, bodies := range seeds {
		for _, body := range bodies {
			f.Add(byte(i), []byte(body))
		}
	}
	f.Add(byte(0), []byte(``))
	f.Add(byte(2), []byte(`{"name":"a"`))
	f.Add(byte(2), []byte("{\"name\":\"\xff\xfe\"}"))
	f.Add(byte(2), []byte(`{"name":"\ud800"}`))
	// The input rules of docs/decisions.md (Validation): strings that are not
	// UTF-8, lone and paired surrogates, control characters in names, ids and
	// free text, and date-times Go's parser alone would take.
	for _, in := range []struct {
		endpoint byte
		body     string
	}{
		{0, "{\"title\":\"caf\xc3\",\"workspaceId\":\"$W\"}"},
		{0, "{\"title\":\"x\",\"workspaceId\":\"$W\",\"no\xfete\":1}"},
		{0, `{"title":"\udc00\ud800","workspaceId":"$W"}`},
		{0, `{"title":"\ud83d\ude00 \\ud800","workspaceId":"$W"}`},
		{0, `{"title":"Q1\u0000VAT","workspaceId":"$W"}`},
		{0, `{"title":"  Q1 VAT\t\n","workspaceId":"$W","text":"a\tb\r\nc\u0085d"}`},
		{0, `{"title":"x","workspaceId":"$W\u0000","parentId":"$T\u0000"}`},
		{0, `{"title":"x","workspaceId":"$W","dueDate":"2026-01-02T03:04:05+24:00"}`},
		{0, `{"title":"x","workspaceId":"$W","dueDate":"2026-01-02T03:04:05-23:59"}`},
		{1, `{"dueDate":"2026-01-02T03:04:05+23:60","text":"\u001b[2J"}`},
		{1, `{"dueDate":"2026-01-02T03:04:05,5Z"}`},
		{1, `{"dueDate":"2026-01-02T3:04:05-00:00","destinationFolderId":"$F\u007f"}`},
		{2, `{"name":"a\u0000b"}`},
		{6, `{"name":"2026\u000a","parentId":"$F"}`},
		{8, `{"email":"a\u0000@example.com","role":"user","firstName":"A\u0009"}`},
		{10, `{"name":"Acme","type":"legal_person","address":{"line1":"1 Main St\r\nFlat 2","city":"\u0000"}}`},
		{14, `{"url":"https://hooks.example.com/\u0000","events":["*"],"description":"Ledger\nsync"}`},
	} {
		f.Add(in.endpoint, []byte(in.body))
	}
	fx := newFuzzFixture(f)
	f.Fuzz(func(t *testing.T, selector byte, body []byte) {
		api := fx.on(t)
		e := fuzzBodyEndpoints[int(selector)%len(fuzzBodyEndpoints)]
		body = []byte(fx.expand(string(body)))
		res := api.do(request{method: e.method, path: fx.expand(e.path), key: fx.acct, clientID: api.client.ID, body: body})
		out := fuzzCheckAnswer(t, api, res, fuzzStatuses)
		if out == nil {
			return
		}
		var in map[string]any
		dec := json.NewDecoder(bytes.NewReader(body))
		if err := dec.Decode(&in); err != nil {
			t.Fatalf("%s %s accepted %q, which is not a JSON object: %v", e.method, e.path, body, err)
		}
		e.check(t, fx, api, in, out)
	})
}
