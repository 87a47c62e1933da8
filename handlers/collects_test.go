package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"acctapi/auth"
	"acctapi/db"
)

// clCollect is a Collect as the API answers it.
type clCollect struct {
	ID          string   `json:"id"`
	WorkspaceID string   `json:"workspaceId"`
	TaskID      *string  `json:"taskId"`
	Title       string   `json:"title"`
	Message     *string  `json:"message"`
	DueDate     *string  `json:"dueDate"`
	Status      string   `json:"status"`
	Locale      string   `json:"locale"`
	Items       []clItem `json:"items"`
	CreatedAt   string   `json:"createdAt"`
	UpdatedAt   string   `json:"updatedAt"`
	SubmittedAt *string  `json:"submittedAt"`
}

type clItem struct {
	ID              string   `json:"id"`
	Title           string   `json:"title"`
	Description     *string  `json:"description"`
	Required        bool     `json:"required"`
	FolderID        *string  `json:"folderId"`
	Status          string   `json:"status"`
	RejectionReason *string  `json:"rejectionReason"`
	Kind            *string  `json:"kind"`
	TransactionID   *string  `json:"transactionId"`
	FileIDs         []string `json:"fileIds"`
}

var clCollectFields = []string{"createdAt", "dueDate", "id", "items", "locale", "message", "status", "submittedAt", "taskId", "title", "updatedAt", "workspaceId"}

// clSession is a collect session; Token and URL only on create.
type clSession struct {
	ID         string   `json:"id"`
	CollectID  string   `json:"collectId"`
	Label      *string  `json:"label"`
	ExpiresAt  string   `json:"expiresAt"`
	CreatedAt  string   `json:"createdAt"`
	RevokedAt  *string  `json:"revokedAt"`
	LastUsedAt *string  `json:"lastUsedAt"`
	Token      string   `json:"token"`
	URL        string   `json:"url"`
	Warnings   []string `json:"warnings"`
}

// clView is the uploader's view of a link.
type clView struct {
	FirmName   string `json:"firmName"`
	ClientName string `json:"clientName"`
	ExpiresAt  string `json:"expiresAt"`
	Collect    struct {
		Title   string  `json:"title"`
		Message *string `json:"message"`
		DueDate *string `json:"dueDate"`
		Status  string  `json:"status"`
		Items   []struct {
			ID              string       `json:"id"`
			Title           string       `json:"title"`
			Description     *string      `json:"description"`
			Required        bool         `json:"required"`
			Status          string       `json:"status"`
			RejectionReason *string      `json:"rejectionReason"`
			Kind            *string      `json:"kind"`
			TransactionID   *string      `json:"transactionId"`
			Files           []clViewFile `json:"files"`
		} `json:"items"`
	} `json:"collect"`
}

type clUploadedFile struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Size      int64  `json:"size"`
	MimeType  string `json:"mimetype"`
	CreatedAt string `json:"createdAt"`
}

// clViewFile is a file in the uploader's view: what its reading found too.
type clViewFile struct {
	clUploadedFile
	Kind         *string `json:"kind"`
	KindMismatch bool    `json:"kindMismatch"`
}

// clFixture is a client's workspace with a task and a folder.
type clFixture struct {
	key, clientID, workspaceID, taskID, folderID string
}

func (api *testAPI) clFixture(t *testing.T, key, clientID string) clFixture {
	t.Helper()
	ws := api.mustCreateWorkspace(clientID, "Books")
	res := api.do(request{method: "POST", path: "/v1/tasks", key: key, clientID: clientID, body: map[string]any{"title": "March", "workspaceId": ws}})
	if res.status != http.StatusCreated {
		t.Fatalf("create task: %d %s", res.status, res.body)
	}
	var task struct{ ID string }
	res.decode(t, &task)
	return clFixture{key: key, clientID: clientID, workspaceID: ws, taskID: task.ID, folderID: api.mustCreateFolder(clientID, ws, "Bank")}
}

// body is a valid new collect of the fixture: a required item filed in the
// folder and an optional one.
func (f clFixture) body() map[string]any {
	return map[string]any{
		"workspaceId": f.workspaceID, "taskId": f.taskID, "title": "Documents for March", "message": "Please upload them.",
		"dueDate": "2026-12-10T00:00:00Z",
		"items": []any{
			map[string]any{"title": "Bank statement", "description": "All accounts", "folderId": f.folderID},
			map[string]any{"title": "Receipts", "required": false},
		},
	}
}

func (api *testAPI) clDo(f clFixture, method, path string, body any) *response {
	return api.do(request{method: method, path: path, key: f.key, clientID: f.clientID, body: body})
}

// clDecodeCollect checks the status and the exact fields of a Collect answer.
func clDecodeCollect(t *testing.T, res *response, status int) clCollect {
	t.Helper()
	if res.status != status {
		t.Fatalf("status: got %d, want %d (body %s)", res.status, status, res.body)
	}
	var c clCollect
	flStrict(t, res.body, &c, clCollectFields)
	for _, it := range c.Items {
		if it.FileIDs == nil {
			t.Errorf("item %s: fileIds null, want an array", it.ID)
		}
	}
	return c
}

func (api *testAPI) clMustCreate(t *testing.T, f clFixture) clCollect {
	t.Helper()
	return clDecodeCollect(t, api.clDo(f, "POST", "/v1/collects", f.body()), http.StatusCreated)
}

func (api *testAPI) clMustSession(t *testing.T, f clFixture, collectID string, body map[string]any) clSession {
	t.Helper()
	res := api.clDo(f, "POST", "/v1/collects/"+collectID+"/sessions", body)
	if res.status != http.StatusCreated {
		t.Fatalf("create session: %d %s", res.status, res.body)
	}
	var s clSession
	res.decode(t, &s)
	return s
}

// clUpload uploads the parts to an item through a link, without a key.
func (api *testAPI) clUpload(t *testing.T, token, itemID string, parts ...flPart) *response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, api.server.URL+"/v1/collect-sessions/"+token+"/items/"+itemID+"/files",
		bytes.NewReader(flBody(t, parts...)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", flMultipart)
	return api.flSend(t, req)
}

func (api *testAPI) clMustUpload(t *testing.T, token, itemID string, parts ...flPart) clUploadedFile {
	t.Helper()
	res := api.clUpload(t, token, itemID, parts...)
	if res.status != http.StatusCreated {
		t.Fatalf("upload: %d %s", res.status, res.body)
	}
	var f clUploadedFile
	flStrict(t, res.body, &f, []string{"createdAt", "id", "mimetype", "name", "size"})
	return f
}

func (api *testAPI) clView(t *testing.T, token string) (*response, clView) {
	t.Helper()
	res := api.do(request{method: "GET", path: "/v1/collect-sessions/" + token})
	var v clView
	if res.status == http.StatusOK {
		res.decode(t, &v)
	}
	return res, v
}

// issuePaths are the paths of a 422 answer's issues, each joined with dots.
func issuePaths(t *testing.T, res *response) []string {
	t.Helper()
	if res.status != http.StatusUnprocessableEntity {
		t.Fatalf("status: got %d, want 422 (body %s)", res.status, res.body)
	}
	var body validationBody
	res.decode(t, &body)
	var paths []string
	for _, is := range body.Error.Issues {
		parts := make([]string, len(is.Path))
		for i, p := range is.Path {
			parts[i] = fmt.Sprint(p)
		}
		paths = append(paths, strings.Join(parts, "."))
	}
	return paths
}

// wantCollectExpired checks the one 410 answer of an expired or closed link.
func wantCollectExpired(t *testing.T, res *response) {
	t.Helper()
	want := `{"status_code":410,"type":"bad_request","code":"collect_token_expired","message":"this collect link has expired or its request was closed: ask the sender for a new link"}`
	if res.status != http.StatusGone || strings.TrimSpace(string(res.body)) != want {
		t.Errorf("got %d %s, want 410 %s", res.status, res.body, want)
	}
}

func (api *testAPI) clCount(t *testing.T, f clFixture) int {
	t.Helper()
	res := api.clDo(f, "GET", "/v1/collects", nil)
	var page struct{ Pagination struct{ Total int } }
	res.decode(t, &page)
	return page.Pagination.Total
}

func TestCollectCreate(t *testing.T) {
	api := newTestAPI(t)
	for _, tt := range []struct{ name, key string }{{"accountant key", api.accountantKey}, {"client key", api.clientKey}} {
		t.Run(tt.name, func(t *testing.T) {
			f := api.clFixture(t, tt.key, api.client.ID)
			c := api.clMustCreate(t, f)
			if c.WorkspaceID != f.workspaceID || c.TaskID == nil || *c.TaskID != f.taskID || c.Title != "Documents for March" ||
				c.Message == nil || *c.Message != "Please upload them." || c.DueDate == nil || *c.DueDate != "2026-12-10T00:00:00Z" ||
				c.Status != "OPEN" || c.Locale != "en" || c.SubmittedAt != nil || c.CreatedAt != "2026-11-21T12:00:00Z" {
				t.Errorf("collect: got %+v", c)
			}
			if len(c.Items) != 2 {
				t.Fatalf("items: got %d, want 2", len(c.Items))
			}
			first, second := c.Items[0], c.Items[1]
			if first.Title != "Bank statement" || !first.Required || first.FolderID == nil || *first.FolderID != f.folderID ||
				first.Status != "PENDING" || first.RejectionReason != nil || len(first.FileIDs) != 0 || *first.Description != "All accounts" {
				t.Errorf("first item: got %+v", first)
			}
			if second.Title != "Receipts" || second.Required || second.FolderID != nil || second.Description != nil {
				t.Errorf("second item: got %+v", second)
			}
			get := clDecodeCollect(t, api.clDo(f, "GET", "/v1/collects/"+c.ID, nil), http.StatusOK)
			if !reflect.DeepEqual(get, c) {
				t.Errorf("GET: got %+v, want %+v", get, c)
			}
		})
	}

	t.Run("locale de, no optional fields", func(t *testing.T) {
		f := api.clFixture(t, api.accountantKey, api.client.ID)
		c := clDecodeCollect(t, api.clDo(f, "POST", "/v1/collects", map[string]any{"workspaceId": f.workspaceID, "title": "  Belege  ",
			"locale": "de", "items": []any{map[string]any{"title": "Kontoauszug"}}}), http.StatusCreated)
		if c.Locale != "de" || c.Title != "Belege" || c.TaskID != nil || c.Message != nil || c.DueDate != nil || !c.Items[0].Required {
			t.Errorf("collect: got %+v", c)
		}
	})

	t.Run("refused input changes nothing", func(t *testing.T) {
		f := api.clFixture(t, api.accountantKey, api.client.ID)
		before := api.clCount(t, f)
		with := func(changes map[string]any) map[string]any {
			body := f.body()
			for k, v := range changes {
				if v == nil {
					delete(body, k)
				} else {
					body[k] = v
				}
			}
			return body
		}
		many := make([]any, 51)
		for i := range many {
			many[i] = map[string]any{"title": fmt.Sprint("item ", i)}
		}
		long := strings.Repeat("x", 501)
		for _, tt := range []struct {
			name  string
			body  any
			paths []string
		}{
			{"empty object", map[string]any{}, []string{"workspaceId", "title", "items"}},
			{"no items", with(map[string]any{"items": []any{}}), []string{"items"}},
			{"51 items", with(map[string]any{"items": many}), []string{"items"}},
			{"items not an array", with(map[string]any{"items": "bank"}), []string{"items"}},
			{"item not an object", with(map[string]any{"items": []any{"bank"}}), []string{"items.0"}},
			{"item without title", with(map[string]any{"items": []any{map[string]any{"required": "yes"}}}), []string{"items.0.title", "items.0.required"}},
			{"item folder malformed", with(map[string]any{"items": []any{map[string]any{"title": "a", "folderId": "nope"}}}), []string{"items.0.folderId"}},
			{"item description too long", with(map[string]any{"items": []any{map[string]any{"title": "a", "description": strings.Repeat("d", 2001)}}}), []string{"items.0.description"}},
			{"blank title", with(map[string]any{"title": "   "}), []string{"title"}},
			{"title too long", with(map[string]any{"title": long}), []string{"title"}},
			{"title with a NUL", with(map[string]any{"title": "a\x00b"}), []string{"title"}},
			{"title a number", with(map[string]any{"title": 7}), []string{"title"}},
			{"message too long", with(map[string]any{"message": strings.Repeat("m", 10001)}), []string{"message"}},
			{"message null", with(map[string]any{"message": json.RawMessage("null")}), []string{"message"}},
			{"locale fr", with(map[string]any{"locale": "fr"}), []string{"locale"}},
			{"due date not a date", with(map[string]any{"dueDate": "tomorrow"}), []string{"dueDate"}},
			{"task malformed", with(map[string]any{"taskId": "task-1"}), []string{"taskId"}},
			{"workspace missing", with(map[string]any{"workspaceId": nil}), []string{"workspaceId"}},
			{"body an array", []any{}, []string{""}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				res := api.clDo(f, "POST", "/v1/collects", tt.body)
				if got := issuePaths(t, res); !slices.Equal(got, tt.paths) {
					t.Errorf("issue paths: got %q, want %q (%s)", got, tt.paths, res.body)
				}
			})
		}
		other := api.clFixture(t, api.accountantKey, api.client.ID)
		otherClient := api.clFixture(t, api.accountantKey, api.otherClient.ID)
		for _, tt := range []struct {
			name string
			body map[string]any
		}{
			{"workspace of another client", with(map[string]any{"workspaceId": otherClient.workspaceID, "taskId": nil, "items": []any{map[string]any{"title": "a"}}})},
			{"task of another workspace", with(map[string]any{"taskId": other.taskID})},
			{"folder of another workspace", with(map[string]any{"items": []any{map[string]any{"title": "a", "folderId": other.folderID}}})},
			{"unknown workspace", with(map[string]any{"workspaceId": "cunknown00000000000000000"})},
		} {
			t.Run(tt.name, func(t *testing.T) {
				wantError(t, api.clDo(f, "POST", "/v1/collects", tt.body), http.StatusNotFound, "not_found", "not_found", "")
			})
		}
		wantError(t, api.clDo(f, "POST", "/v1/collects", `{"title":`), http.StatusBadRequest, "bad_request", "invalid_json", "")
		wantError(t, api.do(request{method: "POST", path: "/v1/collects", key: f.key, clientID: f.clientID, body: `{}`,
			header: http.Header{"Content-Type": {"text/plain"}}}), http.StatusBadRequest, "bad_request", "unsupported_media_type", "")
		huge := `{"title":"` + strings.Repeat("x", 1<<20) + `"}`
		wantError(t, api.clDo(f, "POST", "/v1/collects", huge), http.StatusRequestEntityTooLarge, "bad_request", "payload_too_large", "")
		if after := api.clCount(t, f); after != before {
			t.Errorf("collects after refused requests: got %d, want %d", after, before)
		}
	})
}

func TestCollectList(t *testing.T) {
	api := newTestAPI(t)
	f := api.clFixture(t, api.clientKey, api.client.ID)
	second := api.clFixture(t, api.clientKey, api.client.ID)
	var ids []string
	for i, title := range []string{"b", "A", "c"} {
		api.clock.Advance(time.Second)
		fx := f
		if i == 2 {
			fx = second
		}
		body := fx.body()
		body["title"] = title
		c := clDecodeCollect(t, api.clDo(fx, "POST", "/v1/collects", body), http.StatusCreated)
		ids = append(ids, c.ID)
	}
	clDecodeCollect(t, api.clDo(f, "PATCH", "/v1/collects/"+ids[0], map[string]any{"status": "CLOSED"}), http.StatusOK)
	// Another client's collect is never listed.
	otherFx := api.clFixture(t, api.otherClientClientKey, api.otherClient.ID)
	api.clMustCreate(t, otherFx)

	list := func(query string) ([]string, *string) {
		t.Helper()
		res := api.clDo(f, "GET", "/v1/collects"+query, nil)
		if res.status != http.StatusOK {
			t.Fatalf("GET /v1/collects%s: %d %s", query, res.status, res.body)
		}
		var page struct {
			Data       []clCollect
			Pagination struct {
				Total      int
				NextCursor *string
			}
		}
		res.decode(t, &page)
		var got []string
		for _, c := range page.Data {
			got = append(got, c.ID)
		}
		return got, page.Pagination.NextCursor
	}
	for _, tt := range []struct {
		query string
		want  []string
	}{
		{"", []string{ids[2], ids[1], ids[0]}},
		{"?order=asc", ids},
		{"?sort=title&order=asc", []string{ids[1], ids[0], ids[2]}},
		{"?workspaceId=" + second.workspaceID, []string{ids[2]}},
		{"?taskId=" + f.taskID, []string{ids[1], ids[0]}},
		{"?status=CLOSED", []string{ids[0]}},
		{"?status=OPEN&workspaceId=" + f.workspaceID, []string{ids[1]}},
	} {
		if got, _ := list(tt.query); !slices.Equal(got, tt.want) {
			t.Errorf("GET /v1/collects%s: got %v, want %v", tt.query, got, tt.want)
		}
	}
	page, next := list("?limit=2")
	if len(page) != 2 || next == nil || *next != ids[0] {
		t.Fatalf("first page of 2: got %v, next %v", page, next)
	}
	if rest, next := list("?limit=2&cursor=" + *next); !slices.Equal(rest, []string{ids[0]}) || next != nil {
		t.Errorf("second page: got %v, next %v", rest, next)
	}
	for query, path := range map[string]string{
		"?status=DONE": "query.status", "?sort=status": "query.sort", "?limit=101": "query.limit",
		"?workspaceId=x": "query.workspaceId", "?taskId=x": "query.taskId",
	} {
		if got := issuePaths(t, api.clDo(f, "GET", "/v1/collects"+query, nil)); !slices.Equal(got, []string{path}) {
			t.Errorf("GET /v1/collects%s: issue paths %v, want [%s]", query, got, path)
		}
	}
	wantError(t, api.clDo(f, "GET", "/v1/collects?cursor=cunknown00000000000000000", nil), http.StatusBadRequest, "bad_request", "invalid_cursor", "")
	if got := issuePaths(t, api.clDo(f, "GET", "/v1/collects/not-an-id", nil)); !slices.Equal(got, []string{"params.id"}) {
		t.Errorf("GET a malformed id: issue paths %v", got)
	}
	wantError(t, api.clDo(f, "GET", "/v1/collects/cunknown00000000000000000", nil), http.StatusNotFound, "not_found", "not_found", "")
}

func TestCollectUpdate(t *testing.T) {
	api := newTestAPI(t)
	f := api.clFixture(t, api.accountantKey, api.client.ID)
	c := api.clMustCreate(t, f)
	path := "/v1/collects/" + c.ID
	api.clock.Advance(time.Minute)
	got := clDecodeCollect(t, api.clDo(f, "PATCH", path, map[string]any{"title": " March, again ", "message": nil, "dueDate": nil}), http.StatusOK)
	if got.Title != "March, again" || got.Message != nil || got.DueDate != nil || got.UpdatedAt != "2026-11-21T12:01:00Z" || got.Status != "OPEN" {
		t.Errorf("after PATCH: got %+v", got)
	}
	for _, tt := range []struct {
		name  string
		body  map[string]any
		paths []string
	}{
		{"status SUBMITTED", map[string]any{"status": "SUBMITTED"}, []string{"status"}},
		{"status lower case", map[string]any{"status": "closed"}, []string{"status"}},
		{"title null", map[string]any{"title": nil}, []string{"title"}},
		{"title empty", map[string]any{"title": ""}, []string{"title"}},
		{"message not a string", map[string]any{"message": 3}, []string{"message"}},
		{"due date malformed", map[string]any{"dueDate": "2026-02-30T00:00:00Z"}, []string{"dueDate"}},
		{"locale not one of ours", map[string]any{"locale": "fr"}, []string{"locale"}},
		{"locale null", map[string]any{"locale": nil}, []string{"locale"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if paths := issuePaths(t, api.clDo(f, "PATCH", path, tt.body)); !slices.Equal(paths, tt.paths) {
				t.Errorf("issue paths: got %v, want %v", paths, tt.paths)
			}
		})
	}
	if paths := issuePaths(t, api.clDo(f, "PATCH", "/v1/collects/x", map[string]any{"title": 1})); !slices.Equal(paths, []string{"params.id", "title"}) {
		t.Errorf("malformed id and title: issue paths %v", paths)
	}
	if after := clDecodeCollect(t, api.clDo(f, "GET", path, nil), http.StatusOK); !reflect.DeepEqual(after, got) {
		t.Errorf("after refused PATCHes: got %+v, want %+v", after, got)
	}

	s := api.clMustSession(t, f, c.ID, map[string]any{})
	for _, status := range []string{"CLOSED", "CANCELLED"} {
		clDecodeCollect(t, api.clDo(f, "PATCH", path, map[string]any{"status": status}), http.StatusOK)
		res, _ := api.clView(t, s.Token)
		wantCollectExpired(t, res)
		wantCollectExpired(t, api.clUpload(t, s.Token, c.Items[0].ID, flFilePart("a.pdf", "application/pdf", []byte("a"))))
		wantCollectExpired(t, api.do(request{method: "POST", path: "/v1/collect-sessions/" + s.Token + "/submit"}))
		reopened := clDecodeCollect(t, api.clDo(f, "PATCH", path, map[string]any{"status": "OPEN"}), http.StatusOK)
		if reopened.Status != "OPEN" {
			t.Errorf("reopened from %s: status %s", status, reopened.Status)
		}
		if res, _ := api.clView(t, s.Token); res.status != http.StatusOK {
			t.Errorf("link after reopening from %s: %d %s", status, res.status, res.body)
		}
	}
	wantError(t, api.clDo(f, "PATCH", "/v1/collects/cunknown00000000000000000", map[string]any{"title": "x"}), http.StatusNotFound, "not_found", "not_found", "")
}

func TestCollectItems(t *testing.T) {
	api := newTestAPI(t)
	f := api.clFixture(t, api.accountantKey, api.client.ID)
	c := api.clMustCreate(t, f)
	items := "/v1/collects/" + c.ID + "/items"

	added := clDecodeCollect(t, api.clDo(f, "POST", items, map[string]any{"title": "Payslips", "required": false, "folderId": f.folderID}), http.StatusCreated)
	if len(added.Items) != 3 || added.Items[2].Title != "Payslips" || added.Items[2].Required || *added.Items[2].FolderID != f.folderID {
		t.Fatalf("after adding: got %+v", added.Items)
	}
	if paths := issuePaths(t, api.clDo(f, "POST", items, map[string]any{"title": ""})); !slices.Equal(paths, []string{"title"}) {
		t.Errorf("item without title: issue paths %v", paths)
	}
	other := api.clFixture(t, api.accountantKey, api.client.ID)
	wantError(t, api.clDo(f, "POST", items, map[string]any{"title": "x", "folderId": other.folderID}), http.StatusNotFound, "not_found", "not_found", "")
	for len(added.Items) < 50 {
		added = clDecodeCollect(t, api.clDo(f, "POST", items, map[string]any{"title": "more"}), http.StatusCreated)
	}
	if paths := issuePaths(t, api.clDo(f, "POST", items, map[string]any{"title": "one too many"})); !slices.Equal(paths, []string{"items"}) {
		t.Errorf("51st item: issue paths %v", paths)
	}

	item := items + "/" + c.Items[0].ID
	got := clDecodeCollect(t, api.clDo(f, "PATCH", item, map[string]any{"title": "Bank statements", "description": nil, "required": false, "folderId": nil}), http.StatusOK)
	if it := got.Items[0]; it.Title != "Bank statements" || it.Description != nil || it.Required || it.FolderID != nil {
		t.Errorf("after PATCH: got %+v", it)
	}
	for _, tt := range []struct {
		name  string
		body  map[string]any
		paths []string
	}{
		{"rejected without a reason", map[string]any{"status": "REJECTED"}, []string{"rejectionReason"}},
		{"a reason without rejecting", map[string]any{"rejectionReason": "blurry"}, []string{"rejectionReason"}},
		{"status RECEIVED", map[string]any{"status": "RECEIVED", "rejectionReason": "x"}, []string{"status"}},
		{"blank reason", map[string]any{"status": "REJECTED", "rejectionReason": "  "}, []string{"rejectionReason"}},
		{"reason too long", map[string]any{"status": "REJECTED", "rejectionReason": strings.Repeat("r", 1001)}, []string{"rejectionReason"}},
		{"required null", map[string]any{"required": nil}, []string{"required"}},
		{"folder malformed", map[string]any{"folderId": "f"}, []string{"folderId"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if paths := issuePaths(t, api.clDo(f, "PATCH", item, tt.body)); !slices.Equal(paths, tt.paths) {
				t.Errorf("issue paths: got %v, want %v", paths, tt.paths)
			}
		})
	}
	if paths := issuePaths(t, api.clDo(f, "PATCH", items+"/nope", map[string]any{"title": "x"})); !slices.Equal(paths, []string{"params.itemId"}) {
		t.Errorf("malformed item id: issue paths %v", paths)
	}
	otherCollect := api.clMustCreate(t, f)
	wantError(t, api.clDo(f, "PATCH", items+"/"+otherCollect.Items[0].ID, map[string]any{"title": "x"}), http.StatusNotFound, "not_found", "not_found", "")
	wantError(t, api.clDo(f, "PATCH", items+"/"+c.Items[0].ID, map[string]any{"folderId": other.folderID}), http.StatusNotFound, "not_found", "not_found", "")
	if after := clDecodeCollect(t, api.clDo(f, "GET", "/v1/collects/"+c.ID, nil), http.StatusOK); !reflect.DeepEqual(after.Items[0], got.Items[0]) {
		t.Errorf("item after refused PATCHes: got %+v, want %+v", after.Items[0], got.Items[0])
	}

	rejected := clDecodeCollect(t, api.clDo(f, "PATCH", item, map[string]any{"status": "REJECTED", "rejectionReason": " Page 2 is missing "}), http.StatusOK)
	if it := rejected.Items[0]; it.Status != "REJECTED" || it.RejectionReason == nil || *it.RejectionReason != "Page 2 is missing" {
		t.Errorf("rejected item: got %+v", it)
	}
}

func TestCollectSessions(t *testing.T) {
	api := newTestAPI(t)
	f := api.clFixture(t, api.clientKey, api.client.ID)
	c := api.clMustCreate(t, f)
	sessions := "/v1/collects/" + c.ID + "/sessions"

	s := api.clMustSession(t, f, c.ID, map[string]any{})
	if !auth.ValidCollectToken(s.Token) || s.URL != api.server.URL+"/collect/"+s.Token {
		t.Errorf("token %q, url %q: want 43 base64url characters and %s/collect/<token>", s.Token, s.URL, api.server.URL)
	}
	// Without expiresIn a link works until a day after the collect's due
	// date (10 December), which is later than the default 14 days.
	if s.CollectID != c.ID || s.Label != nil || s.ExpiresAt != "2026-12-11T00:00:00Z" || s.CreatedAt != "2026-11-21T12:00:00Z" || s.RevokedAt != nil || s.LastUsedAt != nil ||
		s.Warnings == nil || len(s.Warnings) != 0 {
		t.Errorf("session: got %+v", s)
	}
	// A lifetime asked for is kept, and one that ends before the due date
	// says so.
	labelled := api.clMustSession(t, f, c.ID, map[string]any{"expiresIn": 300, "label": " Anna "})
	if labelled.ExpiresAt != "2026-11-21T12:05:00Z" || labelled.Label == nil || *labelled.Label != "Anna" || labelled.Token == s.Token ||
		len(labelled.Warnings) != 1 || !strings.Contains(labelled.Warnings[0], "before the collect's due date 2026-12-10T00:00:00Z") {
		t.Errorf("labelled session: got %+v", labelled)
	}
	if open := clDecodeCollect(t, api.clDo(f, "PATCH", "/v1/collects/"+c.ID, map[string]any{"dueDate": nil}), http.StatusOK); open.DueDate != nil {
		t.Fatalf("due date cleared: got %v", open.DueDate)
	}
	if plain := api.clMustSession(t, f, c.ID, map[string]any{}); plain.ExpiresAt != "2026-12-05T12:00:00Z" || len(plain.Warnings) != 0 {
		t.Errorf("a collect without a due date: got %+v, want the default 14 days and no warning", plain)
	}
	longest := api.clMustSession(t, f, c.ID, map[string]any{"expiresIn": 7776000})
	if longest.ExpiresAt != "2027-02-19T12:00:00Z" {
		t.Errorf("90-day session expires %s", longest.ExpiresAt)
	}
	for _, tt := range []struct {
		name string
		body any
	}{
		{"too short", map[string]any{"expiresIn": 299}},
		{"too long", map[string]any{"expiresIn": 7776001}},
		{"a fraction", map[string]any{"expiresIn": 300.5}},
		{"a string", map[string]any{"expiresIn": "300"}},
		{"huge", json.RawMessage(`{"expiresIn": 1e400}`)},
		{"label too long", map[string]any{"label": strings.Repeat("l", 201)}},
		{"label a number", map[string]any{"label": 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := tt.body
			if raw, ok := body.(json.RawMessage); ok {
				body = string(raw)
			}
			if paths := issuePaths(t, api.clDo(f, "POST", sessions, body)); len(paths) != 1 {
				t.Errorf("issue paths: got %v, want one", paths)
			}
		})
	}
	wantError(t, api.clDo(f, "POST", "/v1/collects/cunknown00000000000000000/sessions", map[string]any{}), http.StatusNotFound, "not_found", "not_found", "")

	res := api.clDo(f, "GET", sessions+"?limit=2", nil)
	if res.status != http.StatusOK {
		t.Fatalf("list sessions: %d %s", res.status, res.body)
	}
	for _, token := range []string{s.Token, labelled.Token, longest.Token} {
		if bytes.Contains(res.body, []byte(token)) {
			t.Errorf("the session list shows a token")
		}
	}
	var page struct {
		Data       []map[string]any
		Pagination struct{ Total int }
	}
	res.decode(t, &page)
	if page.Pagination.Total != 4 || len(page.Data) != 2 {
		t.Errorf("sessions: got %d of %d, want 2 of 4", len(page.Data), page.Pagination.Total)
	}
	for _, d := range page.Data {
		if _, ok := d["url"]; ok {
			t.Errorf("the session list shows a url")
		}
	}

	if res, _ := api.clView(t, s.Token); res.status != http.StatusOK {
		t.Fatalf("view before revoking: %d %s", res.status, res.body)
	}
	revoke := sessions + "/" + s.ID
	for i := 0; i < 2; i++ {
		res := api.clDo(f, "DELETE", revoke, nil)
		if res.status != http.StatusOK || strings.TrimSpace(string(res.body)) != `{"object":"collect_session","deleted":true,"id":"`+s.ID+`"}` {
			t.Errorf("revoke #%d: got %d %s", i+1, res.status, res.body)
		}
	}
	res, _ = api.clView(t, s.Token)
	wantError(t, res, http.StatusNotFound, "not_found", "not_found", "no collect for this link: check that it was copied whole")
	if res, _ := api.clView(t, labelled.Token); res.status != http.StatusOK {
		t.Errorf("another link after revoking one: %d %s", res.status, res.body)
	}
	wantError(t, api.clDo(f, "DELETE", sessions+"/cunknown00000000000000000", nil), http.StatusNotFound, "not_found", "not_found", "")
	if paths := issuePaths(t, api.clDo(f, "DELETE", "/v1/collects/x/sessions/y", nil)); !slices.Equal(paths, []string{"params.id", "params.sessionId"}) {
		t.Errorf("malformed ids: issue paths %v", paths)
	}

	// The last use is recorded, at most once a minute.
	api.clView(t, labelled.Token)
	res = api.clDo(f, "GET", sessions+"?order=asc", nil)
	var all struct{ Data []clSession }
	res.decode(t, &all)
	if used := all.Data[1].LastUsedAt; all.Data[1].ID != labelled.ID || used == nil || *used != "2026-11-21T12:00:00Z" {
		t.Errorf("lastUsedAt of a used link: got %+v", all.Data[1])
	}

	// Expiry is checked against the clock.
	api.clock.Advance(5 * time.Minute)
	res, _ = api.clView(t, labelled.Token)
	wantCollectExpired(t, res)
	if res, _ := api.clView(t, longest.Token); res.status != http.StatusOK {
		t.Errorf("an unexpired link: %d %s", res.status, res.body)
	}
}

func TestCollectSessionView(t *testing.T) {
	api := newTestAPI(t)
	f := api.clFixture(t, api.accountantKey, api.client.ID)
	c := api.clMustCreate(t, f)
	s := api.clMustSession(t, f, c.ID, map[string]any{"expiresIn": 3600})
	up := api.clMustUpload(t, s.Token, c.Items[0].ID, flFilePart("statement.pdf", "application/pdf", []byte("%PDF-1.7")))

	res, v := api.clView(t, s.Token)
	if res.status != http.StatusOK {
		t.Fatalf("view: %d %s", res.status, res.body)
	}
	if res.header.Get("RateLimit-Limit") != "120" || res.header.Get("RateLimit-Remaining") != "118" {
		t.Errorf("RateLimit: got %s/%s, want 118 of 120 left", res.header.Get("RateLimit-Remaining"), res.header.Get("RateLimit-Limit"))
	}
	if v.FirmName != "Firm One" || v.ClientName != "Client One" || v.ExpiresAt != "2026-11-21T13:00:00Z" ||
		v.Collect.Title != c.Title || *v.Collect.Message != *c.Message || *v.Collect.DueDate != *c.DueDate || v.Collect.Status != "OPEN" {
		t.Errorf("view: got %+v", v)
	}
	if len(v.Collect.Items) != 2 || v.Collect.Items[0].ID != c.Items[0].ID || v.Collect.Items[0].Status != "RECEIVED" ||
		len(v.Collect.Items[0].Files) != 1 || v.Collect.Items[0].Files[0] != (clViewFile{clUploadedFile: up}) || len(v.Collect.Items[1].Files) != 0 {
		t.Errorf("view items: got %+v", v.Collect.Items)
	}
	// The view names no other record: no workspace, task, folder or client id.
	for _, id := range []string{f.workspaceID, f.taskID, f.folderID, api.client.ID, c.ID, s.ID} {
		if bytes.Contains(res.body, []byte(id)) {
			t.Errorf("the view shows the id %s", id)
		}
	}
	// A key or client header changes nothing.
	withKey := api.do(request{method: "GET", path: "/v1/collect-sessions/" + s.Token, key: "ak_bad_key", clientID: api.other.client.ID})
	if withKey.status != http.StatusOK {
		t.Errorf("view with a bad key: %d %s", withKey.status, withKey.body)
	}

	// Malformed and unknown tokens get the same answer as a revoked one.
	for _, token := range []string{"short", strings.Repeat("a", 42) + "!", strings.Repeat("A", 43), s.Token[:42] + "=", strings.Repeat("b", 44)} {
		res, _ := api.clView(t, token)
		wantError(t, res, http.StatusNotFound, "not_found", "not_found", "no collect for this link: check that it was copied whole")
	}

	// A deleted collect's links are not found; its files stay.
	deleted := clDecodeCollect(t, api.clDo(f, "DELETE", "/v1/collects/"+c.ID, nil), http.StatusOK)
	if deleted.ID != c.ID {
		t.Errorf("DELETE answered %+v", deleted)
	}
	res, _ = api.clView(t, s.Token)
	wantError(t, res, http.StatusNotFound, "not_found", "not_found", "")
	wantError(t, api.clDo(f, "GET", "/v1/collects/"+c.ID, nil), http.StatusNotFound, "not_found", "not_found", "")
	wantError(t, api.clDo(f, "DELETE", "/v1/collects/"+c.ID, nil), http.StatusNotFound, "not_found", "not_found", "")
	wantError(t, api.clDo(f, "GET", "/v1/collects/"+c.ID+"/sessions", nil), http.StatusNotFound, "not_found", "not_found", "")
	if res := api.flGetFile(f.key, f.clientID, up.ID); res.status != http.StatusOK {
		t.Errorf("a deleted collect's file: %d %s", res.status, res.body)
	}
}

func TestCollectUpload(t *testing.T) {
	api := newTestAPI(t)
	f := api.clFixture(t, api.accountantKey, api.client.ID)
	c := api.clMustCreate(t, f)
	s := api.clMustSession(t, f, c.ID, map[string]any{})
	item := c.Items[0]

	api.clock.Advance(time.Minute)
	up := api.clMustUpload(t, s.Token, item.ID, flFilePart("Kontoauszug März.pdf", "application/pdf", []byte("%PDF-1.7 statement")))
	if up.Name != "Kontoauszug März.pdf" || up.Size != 18 || up.MimeType != "application/pdf" || up.CreatedAt != "2026-11-21T12:01:00Z" {
		t.Errorf("upload: got %+v", up)
	}
	// The file is an ordinary file of the workspace, with the collect's task
	// and the item's folder.
	file := flDecodeFile(t, api.flGetFile(f.key, f.clientID, up.ID), http.StatusOK)
	if file.WorkspaceID != f.workspaceID || file.TaskID == nil || *file.TaskID != f.taskID || file.FolderID == nil ||
		*file.FolderID != f.folderID || file.CreatedByID != nil || file.Name != up.Name {
		t.Errorf("file: got %+v", file)
	}
	got := clDecodeCollect(t, api.clDo(f, "GET", "/v1/collects/"+c.ID, nil), http.StatusOK)
	if it := got.Items[0]; it.Status != "RECEIVED" || !slices.Equal(it.FileIDs, []string{up.ID}) {
		t.Errorf("item after upload: got %+v", it)
	}
	// An item without a folder files at the workspace root.
	loose := api.clMustUpload(t, s.Token, c.Items[1].ID, flFilePart("receipt.png", "", []byte("\x89PNG\r\n\x1a\n0000")))
	if file := flDecodeFile(t, api.flGetFile(f.key, f.clientID, loose.ID), http.StatusOK); file.FolderID != nil || file.MimeType != "image/png" {
		t.Errorf("file of an item without a folder: got %+v", file)
	}

	// A rejected item goes back to RECEIVED with a new upload.
	clDecodeCollect(t, api.clDo(f, "PATCH", "/v1/collects/"+c.ID+"/items/"+item.ID, map[string]any{"status": "REJECTED", "rejectionReason": "blurry"}), http.StatusOK)
	_, v := api.clView(t, s.Token)
	if it := v.Collect.Items[0]; it.Status != "REJECTED" || it.RejectionReason == nil || *it.RejectionReason != "blurry" {
		t.Errorf("rejected item in the view: got %+v", it)
	}
	again := api.clMustUpload(t, s.Token, item.ID, flFilePart("sharp.pdf", "application/pdf", []byte("%PDF sharp")))
	got = clDecodeCollect(t, api.clDo(f, "GET", "/v1/collects/"+c.ID, nil), http.StatusOK)
	if it := got.Items[0]; it.Status != "RECEIVED" || it.RejectionReason != nil || !slices.Equal(it.FileIDs, []string{up.ID, again.ID}) {
		t.Errorf("item after a new upload: got %+v", it)
	}

	// Refused uploads keep nothing.
	before := got
	other := api.clMustCreate(t, f)
	for _, tt := range []struct {
		name   string
		res    func() *response
		status int
		code   string
	}{
		{"too large", func() *response {
			return api.clUpload(t, s.Token, item.ID, flFilePart("big.bin", "", bytes.Repeat([]byte("x"), testMaxUpload+1)))
		}, http.StatusRequestEntityTooLarge, "payload_too_large"},
		{"no file part", func() *response { return api.clUpload(t, s.Token, item.ID, flField("note", "hello")) }, http.StatusUnprocessableEntity, ""},
		{"not multipart", func() *response {
			return api.do(request{method: "POST", path: "/v1/collect-sessions/" + s.Token + "/items/" + item.ID + "/files", body: `{"file":"x"}`})
		}, http.StatusBadRequest, "unsupported_media_type"},
		{"cut short", func() *response {
			body := flBody(t, flFilePart("a.pdf", "", []byte("abc")))
			req, _ := http.NewRequest(http.MethodPost, api.server.URL+"/v1/collect-sessions/"+s.Token+"/items/"+item.ID+"/files", bytes.NewReader(body[:len(body)-10]))
			req.Header.Set("Content-Type", flMultipart)
			return api.flSend(t, req)
		}, http.StatusBadRequest, "invalid_multipart"},
		{"an item of another collect", func() *response {
			return api.clUpload(t, s.Token, other.Items[0].ID, flFilePart("a.pdf", "", []byte("a")))
		}, http.StatusNotFound, "not_found"},
		{"a malformed item id", func() *response { return api.clUpload(t, s.Token, "item-1", flFilePart("a.pdf", "", []byte("a"))) }, http.StatusNotFound, "not_found"},
		{"an unknown token", func() *response {
			return api.clUpload(t, strings.Repeat("Z", 43), item.ID, flFilePart("a.pdf", "", []byte("a")))
		}, http.StatusNotFound, "not_found"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := tt.res()
			if tt.code == "" {
				if paths := issuePaths(t, res); !slices.Equal(paths, []string{"file"}) {
					t.Errorf("issue paths: got %v, want [file]", paths)
				}
				return
			}
			typ := "bad_request"
			if tt.status == http.StatusNotFound {
				typ = "not_found"
			}
			wantError(t, res, tt.status, typ, tt.code, "")
		})
	}
	if after := clDecodeCollect(t, api.clDo(f, "GET", "/v1/collects/"+c.ID, nil), http.StatusOK); !reflect.DeepEqual(after, before) {
		t.Errorf("collect after refused uploads: got %+v, want %+v", after, before)
	}
	if other := clDecodeCollect(t, api.clDo(f, "GET", "/v1/collects/"+other.ID, nil), http.StatusOK); len(other.Items[0].FileIDs) != 0 {
		t.Errorf("another collect got a file: %+v", other.Items[0])
	}

	// Expired links take no upload.
	short := api.clMustSession(t, f, c.ID, map[string]any{"expiresIn": 300})
	api.clock.Advance(5 * time.Minute)
	wantCollectExpired(t, api.clUpload(t, short.Token, item.ID, flFilePart("late.pdf", "", []byte("late"))))
}

func TestCollectSubmit(t *testing.T) {
	api := newTestAPI(t)
	f := api.clFixture(t, api.accountantKey, api.client.ID)
	body := f.body()
	body["items"] = []any{map[string]any{"title": "Bank statement"}, map[string]any{"title": "Receipts", "required": false}, map[string]any{"title": "Payslip"}}
	c := clDecodeCollect(t, api.clDo(f, "POST", "/v1/collects", body), http.StatusCreated)
	s := api.clMustSession(t, f, c.ID, map[string]any{})
	submit := request{method: "POST", path: "/v1/collect-sessions/" + s.Token + "/submit"}

	wantIssues(t, api.do(submit), "ValidationError", []issue{
		{Code: "custom", Path: []any{"items", 0}, Message: `"Bank statement" is required: upload a file for it before submitting (again, if it was rejected)`},
		{Code: "custom", Path: []any{"items", 2}, Message: `"Payslip" is required: upload a file for it before submitting (again, if it was rejected)`},
	})
	api.clMustUpload(t, s.Token, c.Items[0].ID, flFilePart("a.pdf", "", []byte("a")))
	api.clMustUpload(t, s.Token, c.Items[2].ID, flFilePart("b.pdf", "", []byte("b")))
	clDecodeCollect(t, api.clDo(f, "PATCH", "/v1/collects/"+c.ID+"/items/"+c.Items[2].ID, map[string]any{"status": "REJECTED", "rejectionReason": "wrong month"}), http.StatusOK)
	if paths := issuePaths(t, api.do(submit)); !slices.Equal(paths, []string{"items.2"}) {
		t.Errorf("submit with a rejected item: issue paths %v", paths)
	}
	api.clMustUpload(t, s.Token, c.Items[2].ID, flFilePart("c.pdf", "", []byte("c")))

	api.clock.Advance(time.Minute)
	res := api.do(submit)
	if res.status != http.StatusOK {
		t.Fatalf("submit: %d %s", res.status, res.body)
	}
	var v clView
	res.decode(t, &v)
	if v.Collect.Status != "SUBMITTED" {
		t.Errorf("view after submit: status %s", v.Collect.Status)
	}
	got := clDecodeCollect(t, api.clDo(f, "GET", "/v1/collects/"+c.ID, nil), http.StatusOK)
	if got.Status != "SUBMITTED" || got.SubmittedAt == nil || *got.SubmittedAt != "2026-11-21T12:01:00Z" {
		t.Errorf("collect after submit: got %+v", got)
	}
	wantError(t, api.do(submit), http.StatusConflict, "conflict", "conflict", "")
	wantError(t, api.clUpload(t, s.Token, c.Items[1].ID, flFilePart("d.pdf", "", []byte("d"))), http.StatusConflict, "conflict", "conflict", "")
	if res, v := api.clView(t, s.Token); res.status != http.StatusOK || v.Collect.Status != "SUBMITTED" {
		t.Errorf("view of a submitted collect: %d %+v", res.status, v.Collect)
	}

	// The accountant reopens it, and the uploader can add more.
	reopened := clDecodeCollect(t, api.clDo(f, "PATCH", "/v1/collects/"+c.ID, map[string]any{"status": "OPEN"}), http.StatusOK)
	if reopened.Status != "OPEN" || reopened.SubmittedAt != nil {
		t.Errorf("reopened: got %+v", reopened)
	}
	api.clMustUpload(t, s.Token, c.Items[1].ID, flFilePart("d.pdf", "", []byte("d")))
	if res := api.do(submit); res.status != http.StatusOK {
		t.Errorf("second submit after reopening: %d %s", res.status, res.body)
	}
}

func TestCollectPermissions(t *testing.T) {
	api := newTestAPI(t)
	f := api.clFixture(t, api.accountantKey, api.client.ID)
	c := api.clMustCreate(t, f)
	readOnly := api.mustMintKey(api.firm.ID, auth.KeySpec{ClientID: api.client.ID, Permissions: []string{"collects:read"}})
	noCollects := api.mustMintKey(api.firm.ID, auth.KeySpec{Permissions: []string{"tasks:read", "tasks:write"}})
	routes := []struct {
		method, path string
		write        bool
		body         any
	}{
		{"GET", "/v1/collects", false, nil},
		{"POST", "/v1/collects", true, f.body()},
		{"GET", "/v1/collects/" + c.ID, false, nil},
		{"PATCH", "/v1/collects/" + c.ID, true, map[string]any{"title": "x"}},
		{"DELETE", "/v1/collects/" + c.ID, true, nil},
		{"POST", "/v1/collects/" + c.ID + "/items", true, map[string]any{"title": "x"}},
		{"PATCH", "/v1/collects/" + c.ID + "/items/" + c.Items[0].ID, true, map[string]any{"title": "x"}},
		{"POST", "/v1/collects/" + c.ID + "/sessions", true, map[string]any{}},
		{"GET", "/v1/collects/" + c.ID + "/sessions", false, nil},
		{"DELETE", "/v1/collects/" + c.ID + "/sessions/" + c.ID, true, nil},
	}
	for _, rt := range routes {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			wantError(t, api.do(request{method: rt.method, path: rt.path, clientID: api.client.ID, body: rt.body}), http.StatusUnauthorized, "auth_error", "unauthorized", "")
			wantError(t, api.do(request{method: rt.method, path: rt.path, key: noCollects, clientID: api.client.ID, body: rt.body}), http.StatusForbidden, "auth_error", "missing_scope", "")
			if rt.write {
				wantError(t, api.do(request{method: rt.method, path: rt.path, key: readOnly, clientID: api.client.ID, body: rt.body}), http.StatusForbidden, "auth_error", "missing_scope", "")
			}
			wantError(t, api.do(request{method: rt.method, path: rt.path, key: api.accountantKey, body: rt.body}), http.StatusBadRequest, "bad_request", "missing_client_id", "")
			wantError(t, api.do(request{method: rt.method, path: rt.path, key: api.otherClientClientKey, clientID: api.client.ID, body: rt.body}), http.StatusNotFound, "not_found", "not_found", "")
		})
	}
	if res := api.do(request{method: "GET", path: "/v1/collects/" + c.ID, key: readOnly, clientID: api.client.ID}); res.status != http.StatusOK {
		t.Errorf("read-only key reading: %d %s", res.status, res.body)
	}
}

// TestCollectIsolation: another client's or firm's ids and tokens reach
// nothing of this client, and this client's nothing of theirs.
func TestCollectIsolation(t *testing.T) {
	api := newTestAPI(t)
	mine := api.clFixture(t, api.clientKey, api.client.ID)
	c := api.clMustCreate(t, mine)
	s := api.clMustSession(t, mine, c.ID, map[string]any{})
	up := api.clMustUpload(t, s.Token, c.Items[0].ID, flFilePart("a.pdf", "", []byte("a")))

	for name, theirs := range map[string]clFixture{
		"another client": api.clFixture(t, api.otherClientClientKey, api.otherClient.ID),
		"another firm":   api.clFixture(t, api.other.accountantKey, api.other.client.ID),
	} {
		t.Run(name, func(t *testing.T) {
			tc := api.clMustCreate(t, theirs)
			ts := api.clMustSession(t, theirs, tc.ID, map[string]any{})
			for _, rt := range []struct {
				method, path string
				body         any
			}{
				{"GET", "/v1/collects/" + c.ID, nil},
				{"PATCH", "/v1/collects/" + c.ID, map[string]any{"status": "CANCELLED"}},
				{"DELETE", "/v1/collects/" + c.ID, nil},
				{"POST", "/v1/collects/" + c.ID + "/items", map[string]any{"title": "x"}},
				{"PATCH", "/v1/collects/" + c.ID + "/items/" + c.Items[0].ID, map[string]any{"status": "REJECTED", "rejectionReason": "x"}},
				{"PATCH", "/v1/collects/" + tc.ID + "/items/" + c.Items[0].ID, map[string]any{"title": "x"}},
				{"POST", "/v1/collects/" + c.ID + "/sessions", map[string]any{}},
				{"GET", "/v1/collects/" + c.ID + "/sessions", nil},
				{"DELETE", "/v1/collects/" + c.ID + "/sessions/" + s.ID, nil},
				{"DELETE", "/v1/collects/" + tc.ID + "/sessions/" + s.ID, nil},
				{"GET", "/v1/files/" + up.ID, nil},
				{"POST", "/v1/collects", map[string]any{"workspaceId": mine.workspaceID, "title": "x", "items": []any{map[string]any{"title": "x"}}}},
				{"POST", "/v1/collects/" + tc.ID + "/items", map[string]any{"title": "x", "folderId": mine.folderID}},
			} {
				wantError(t, api.clDo(theirs, rt.method, rt.path, rt.body), http.StatusNotFound, "not_found", "not_found", "")
			}
			for _, query := range []string{"", "?workspaceId=" + mine.workspaceID, "?taskId=" + mine.taskID} {
				res := api.clDo(theirs, "GET", "/v1/collects"+query, nil)
				if bytes.Contains(res.body, []byte(c.ID)) {
					t.Errorf("GET /v1/collects%s shows another client's collect", query)
				}
			}
			// Their token reaches their collect only, with their items.
			wantError(t, api.clUpload(t, ts.Token, c.Items[0].ID, flFilePart("x.pdf", "", []byte("x"))), http.StatusNotFound, "not_found", "not_found", "")
			wantError(t, api.clUpload(t, s.Token, tc.Items[0].ID, flFilePart("x.pdf", "", []byte("x"))), http.StatusNotFound, "not_found", "not_found", "")
			if res, v := api.clView(t, ts.Token); res.status != http.StatusOK || v.Collect.Items[0].ID != tc.Items[0].ID || bytes.Contains(res.body, []byte(up.ID)) {
				t.Errorf("their view: %d %s", res.status, res.body)
			}
		})
	}
	got := clDecodeCollect(t, api.clDo(mine, "GET", "/v1/collects/"+c.ID, nil), http.StatusOK)
	if got.Status != "OPEN" || len(got.Items) != 2 || got.Items[0].Status != "RECEIVED" || !slices.Equal(got.Items[0].FileIDs, []string{up.ID}) {
		t.Errorf("collect after the others' attempts: got %+v", got)
	}
	if res, _ := api.clView(t, s.Token); res.status != http.StatusOK {
		t.Errorf("link after the others' attempts: %d", res.status)
	}
}

func TestCollectIdempotency(t *testing.T) {
	api := newTestAPI(t)
	f := api.clFixture(t, api.accountantKey, api.client.ID)
	send := func(method, path, key string, body any) *response {
		return api.do(request{method: method, path: path, key: f.key, clientID: f.clientID, body: body, header: http.Header{"Idempotency-Key": {key}}})
	}
	first := send("POST", "/v1/collects", "create-1", f.body())
	replay := send("POST", "/v1/collects", "create-1", f.body())
	if first.status != http.StatusCreated || replay.status != http.StatusCreated || !bytes.Equal(first.body, replay.body) || replay.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: got %d %s (%s), want the first answer %s", replay.status, replay.body, replay.header.Get("Idempotent-Replayed"), first.body)
	}
	if n := api.clCount(t, f); n != 1 {
		t.Errorf("collects after a replayed create: %d, want 1", n)
	}
	c := clDecodeCollect(t, first, http.StatusCreated)
	other := f.body()
	other["title"] = "different"
	if res := send("POST", "/v1/collects", "create-1", other); res.status != http.StatusUnprocessableEntity {
		t.Errorf("same key, different body: got %d %s, want 422", res.status, res.body)
	}
	for _, tt := range []struct {
		method, path string
		body         any
	}{
		{"PATCH", "/v1/collects/" + c.ID, map[string]any{"title": "renamed"}},
		{"POST", "/v1/collects/" + c.ID + "/items", map[string]any{"title": "Payslips"}},
		{"PATCH", "/v1/collects/" + c.ID + "/items/" + c.Items[0].ID, map[string]any{"status": "REJECTED", "rejectionReason": "blurry"}},
	} {
		key := tt.method + tt.path
		a, b := send(tt.method, tt.path, key, tt.body), send(tt.method, tt.path, key, tt.body)
		if a.status >= 300 || a.status != b.status || !bytes.Equal(a.body, b.body) || b.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("%s %s replayed: got %d %s, want %d %s", tt.method, tt.path, b.status, b.body, a.status, a.body)
		}
	}
	// A link's answer holds its token, which is shown once: a retry mints
	// nothing and says so (TestIdempotentCollectSessionKeepsNoToken).
	if a := send("POST", "/v1/collects/"+c.ID+"/sessions", "session-1", map[string]any{"label": "Anna"}); a.status != http.StatusCreated {
		t.Fatalf("session: %d %s", a.status, a.body)
	}
	wantError(t, send("POST", "/v1/collects/"+c.ID+"/sessions", "session-1", map[string]any{"label": "Anna"}),
		http.StatusConflict, "conflict", "idempotency_secret_not_kept", "")
	got := clDecodeCollect(t, api.clDo(f, "GET", "/v1/collects/"+c.ID, nil), http.StatusOK)
	if len(got.Items) != 3 {
		t.Errorf("items after a replayed add: %d, want 3", len(got.Items))
	}
	res := api.clDo(f, "GET", "/v1/collects/"+c.ID+"/sessions", nil)
	var page struct{ Pagination struct{ Total int } }
	res.decode(t, &page)
	if page.Pagination.Total != 1 {
		t.Errorf("sessions after a replayed create: %d, want 1", page.Pagination.Total)
	}
}

func TestCollectRateLimit(t *testing.T) {
	api := newTestAPI(t)
	f := api.clFixture(t, api.accountantKey, api.client.ID)
	c := api.clMustCreate(t, f)
	s := api.clMustSession(t, f, c.ID, map[string]any{})
	other := api.clMustSession(t, f, c.ID, map[string]any{})

	t.Run("per token", func(t *testing.T) {
		for i := 1; i <= collectTokenLimit; i++ {
			res, _ := api.clView(t, s.Token)
			if res.status != http.StatusOK || res.header.Get("RateLimit-Remaining") != fmt.Sprint(collectTokenLimit-i) {
				t.Fatalf("request %d: %d, RateLimit-Remaining %s", i, res.status, res.header.Get("RateLimit-Remaining"))
			}
		}
		res, _ := api.clView(t, s.Token)
		wantError(t, res, http.StatusTooManyRequests, "rate_limit", "too_many_requests", "")
		if res.header.Get("Retry-After") != "60" || res.header.Get("RateLimit-Limit") != "120" || res.header.Get("RateLimit-Remaining") != "0" {
			t.Errorf("429 headers: %v", res.header)
		}
		wantError(t, api.clUpload(t, s.Token, c.Items[0].ID, flFilePart("a.pdf", "", []byte("a"))), http.StatusTooManyRequests, "rate_limit", "too_many_requests", "")
		// Another link of the same collect has its own count.
		if res, _ := api.clView(t, other.Token); res.status != http.StatusOK {
			t.Errorf("another link: %d", res.status)
		}
		api.clock.Advance(time.Minute)
		if res, _ := api.clView(t, s.Token); res.status != http.StatusOK {
			t.Errorf("after a minute: %d", res.status)
		}
	})

	t.Run("failed tokens per address", func(t *testing.T) {
		api.clock.Advance(time.Minute)
		for i := 1; i <= collectFailedTokenLimit; i++ {
			res, _ := api.clView(t, fmt.Sprintf("%043d", i))
			if res.status != http.StatusNotFound || res.header.Get("RateLimit-Remaining") != fmt.Sprint(collectFailedTokenLimit-i) {
				t.Fatalf("guess %d: %d, RateLimit-Remaining %s", i, res.status, res.header.Get("RateLimit-Remaining"))
			}
		}
		// Malformed and unknown tokens stay refused; a link that exists
		// keeps working, its upload and submit included, whatever its
		// address spent on guesses.
		for _, token := range []string{"guess", fmt.Sprintf("%043d", 0)} {
			res, _ := api.clView(t, token)
			wantError(t, res, http.StatusTooManyRequests, "rate_limit", "too_many_requests", "")
		}
		if res, _ := api.clView(t, other.Token); res.status != http.StatusOK {
			t.Errorf("a link that exists, from a spent address: %d %s", res.status, res.body)
		}
		api.clMustUpload(t, other.Token, c.Items[0].ID, flFilePart("a.pdf", "", []byte("a")))
		// A spent address still reaches the keyed API.
		if res := api.clDo(f, "GET", "/v1/collects/"+c.ID, nil); res.status != http.StatusOK {
			t.Errorf("keyed API from a spent address: %d", res.status)
		}
		api.clock.Advance(time.Minute)
		if res, _ := api.clView(t, s.Token); res.status != http.StatusOK {
			t.Errorf("after a minute: %d", res.status)
		}
	})
}

func TestCollectTrustedProxies(t *testing.T) {
	spend := func(t *testing.T, api *testAPI, header http.Header) {
		t.Helper()
		for i := 1; i <= collectFailedTokenLimit; i++ {
			res := api.do(request{method: "GET", path: fmt.Sprintf("/v1/collect-sessions/%043d", i), header: header})
			if res.status != http.StatusNotFound {
				t.Fatalf("guess %d: %d", i, res.status)
			}
		}
	}
	guess := func(api *testAPI, header http.Header) int {
		return api.do(request{method: "GET", path: "/v1/collect-sessions/guess", header: header}).status
	}
	xff := func(v string) http.Header { return http.Header{"X-Forwarded-For": {v}} }

	t.Run("behind a trusted proxy each caller has its budget", func(t *testing.T) {
		api := newTestAPI(t, func(c *Config) { c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")} })
		// The right-most address not trusted is the caller's: what the
		// caller itself wrote left of it is not believed.
		spend(t, api, xff("198.51.100.9, 203.0.113.5"))
		if got := guess(api, xff("203.0.113.5")); got != http.StatusTooManyRequests {
			t.Errorf("the spent caller: %d", got)
		}
		if got := guess(api, xff("203.0.113.6")); got != http.StatusNotFound {
			t.Errorf("another caller behind the proxy: %d", got)
		}
		if got := guess(api, http.Header{"Forwarded": {`for="203.0.113.5:4711"`}}); got != http.StatusTooManyRequests {
			t.Errorf("the spent caller named by Forwarded: %d", got)
		}
		if got := guess(api, http.Header{"Forwarded": {"for=203.0.113.7"}}); got != http.StatusNotFound {
			t.Errorf("another caller named by Forwarded: %d", got)
		}
	})
	t.Run("no proxy is trusted unless named", func(t *testing.T) {
		api := newTestAPI(t)
		spend(t, api, xff("203.0.113.5"))
		if got := guess(api, xff("203.0.113.6")); got != http.StatusTooManyRequests {
			t.Errorf("X-Forwarded-For from a peer not trusted changed the address: %d", got)
		}
	})
}

func TestClientHost(t *testing.T) {
	h := &Handler{trustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}}
	for _, tt := range []struct {
		name, peer string
		header     http.Header
		want       string
	}{
		{"peer not trusted", "192.0.2.1:1", http.Header{"X-Forwarded-For": {"203.0.113.5"}}, "192.0.2.1"},
		{"trusted peer, no header", "10.0.0.1:1", nil, "10.0.0.1"},
		{"right-most not trusted", "10.0.0.1:1", http.Header{"X-Forwarded-For": {"1.1.1.1, 203.0.113.5, 10.0.0.2"}}, "203.0.113.5"},
		{"several headers are one list", "10.0.0.1:1", http.Header{"X-Forwarded-For": {"203.0.113.5", "203.0.113.6"}}, "203.0.113.6"},
		{"garbage stops the walk", "10.0.0.1:1", http.Header{"X-Forwarded-For": {"203.0.113.5, junk, 10.0.0.3"}}, "10.0.0.3"},
		{"all trusted", "10.0.0.1:1", http.Header{"X-Forwarded-For": {"10.0.0.9"}}, "10.0.0.9"},
		{"IPv6 peer", "[::1]:1", http.Header{"Forwarded": {`for="[2001:db8::1]:80";proto=https, for=10.0.0.4`}}, "2001:db8::1"},
		{"mapped IPv4", "[::ffff:10.0.0.1]:1", http.Header{"X-Forwarded-For": {"::ffff:203.0.113.5"}}, "203.0.113.5"},
		{"X-Forwarded-For before Forwarded", "10.0.0.1:1", http.Header{"X-Forwarded-For": {"203.0.113.5"}, "Forwarded": {"for=203.0.113.6"}}, "203.0.113.5"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr, r.Header = tt.peer, tt.header
			if r.Header == nil {
				r.Header = http.Header{}
			}
			if got := h.clientHost(r); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

// TestCollectBudget: uploads through links stop at a budget of files and
// bytes per link and per collect, with a 409 upload_budget_spent before the
// body is read and nothing kept; the page says so in the uploader's
// language, and folds a long list of files away.
func TestCollectBudget(t *testing.T) {
	api := newTestAPI(t)
	api.handler.collectBudget = db.CollectBudget{LinkFiles: 3, LinkBytes: 1000, CollectFiles: 6, CollectBytes: 1 << 20}
	f := api.clFixture(t, api.accountantKey, api.client.ID)
	c := api.clMustCreate(t, f)
	item := c.Items[0].ID
	a := api.clMustSession(t, f, c.ID, map[string]any{})
	b := api.clMustSession(t, f, c.ID, map[string]any{})
	third := api.clMustSession(t, f, c.ID, map[string]any{})
	file := func(n int) flPart { return flFilePart(fmt.Sprintf("receipt-%d.pdf", n), "", []byte("%PDF")) }
	spent := func(t *testing.T, res *response, link bool) {
		t.Helper()
		wantError(t, res, http.StatusConflict, "conflict", "upload_budget_spent", "")
		if want := map[bool]string{true: "this link has taken its 3 files", false: "this request has taken its 6 files"}[link]; !strings.Contains(string(res.body), want) {
			t.Errorf("message %s, want it to say %q", res.body, want)
		}
	}

	for n := range 3 {
		api.clMustUpload(t, a.Token, item, file(n))
	}
	stored := api.flStoredFiles(t)
	spent(t, api.clUpload(t, a.Token, item, file(3)), true)
	for n := range 3 {
		api.clMustUpload(t, b.Token, item, file(4+n))
	}
	spent(t, api.clUpload(t, third.Token, item, file(7)), false)
	if got := api.flStoredFiles(t); len(got) != len(stored)+3 {
		t.Errorf("file store: %d files, want the %d kept and 3 more", len(got), len(stored))
	}

	// Bytes: the store checks the file's size once it is read.
	c2 := api.clMustCreate(t, f)
	s := api.clMustSession(t, f, c2.ID, map[string]any{})
	api.clMustUpload(t, s.Token, c2.Items[0].ID, flFilePart("big.pdf", "", make([]byte, 600)))
	spent(t, api.clUpload(t, s.Token, c2.Items[0].ID, flFilePart("big2.pdf", "", make([]byte, 600))), true)

	// The page: the form's answer, the sentence in either language, and a
	// long list folded.
	header, body := pageForm(t, "more.pdf", []byte("%PDF"))
	res := api.page("POST", "/collect/"+a.Token+"/items/"+item, header, body)
	if want := "/collect/" + a.Token + "?error=budget_link&item=" + item + "#item-" + item; res.status != http.StatusSeeOther || res.header.Get("Location") != want {
		t.Fatalf("form upload past the budget: %d %s, want 303 to %s", res.status, res.header.Get("Location"), want)
	}
	for _, tc := range []struct{ lang, want string }{
		{"de", "Über diesen Link können keine weiteren Dateien hochgeladen werden: Er hat seine 3 Dateien oder 1,0 kB erreicht. Falls noch etwas fehlt, bitten Sie Firm One um einen neuen Link."},
		{"en", "No more files can be added through this link: it has taken its 3 files or 1.0 kB. If something is still missing, ask Firm One for a new link."},
	} {
		lang, want := tc.lang, tc.want
		if res := api.clDo(f, "PATCH", "/v1/collects/"+c.ID, map[string]any{"locale": lang}); res.status != http.StatusOK {
			t.Fatalf("PATCH locale %s: %d %s", lang, res.status, res.body)
		}
		page := api.page("GET", "/collect/"+a.Token+"?error=budget_link&item="+item, nil, nil)
		if !strings.Contains(html.UnescapeString(page.body), want) {
			t.Errorf("%s page: want %q in\n%s", lang, want, page.body)
		}
	}
	page := api.page("GET", "/collect/"+b.Token, nil, nil)
	if !strings.Contains(page.body, `<details class="more-files"><summary>1 more file</summary>`) ||
		strings.Count(page.body, `<span class="file-name">`) != 6 || strings.Count(page.body, `<ul class="files removable">`) != 2 ||
		strings.Count(page.body, `<form class="remove"`) != 6 {
		t.Errorf("a long list: want 5 files shown and 1 folded away, each with its Remove button:\n%s", page.body)
	}
}
