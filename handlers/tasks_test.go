package handlers

import (
	"database/sql"
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"acctapi/auth"
	"acctapi/db"
)

// missingTaskID is a well-formed task id that names nothing.
const missingTaskID = "cmissingmissingmissing0001"

// taskFields are the twelve fields of a task in the API, every one always present.
var taskFields = []string{"actorType", "createdAt", "createdById", "destinationFolderId", "dueDate", "id",
	"parentId", "status", "text", "title", "updatedAt", "workspaceId"}

// generatedID is the shape of the ids acctapi generates.
var generatedID = regexp.MustCompile(`^c[0-9a-z]{24}$`)

// taskBody is a Task as the API answers it.
type taskBody struct {
	ID                  string  `json:"id"`
	Title               string  `json:"title"`
	Text                *string `json:"text"`
	Status              string  `json:"status"`
	DueDate             *string `json:"dueDate"`
	WorkspaceID         string  `json:"workspaceId"`
	CreatedByID         *string `json:"createdById"`
	ActorType           string  `json:"actorType"`
	ParentID            *string `json:"parentId"`
	DestinationFolderID *string `json:"destinationFolderId"`
	CreatedAt           string  `json:"createdAt"`
	UpdatedAt           string  `json:"updatedAt"`
}

func (b taskBody) String() string {
	data, _ := json.Marshal(b)
	return string(data)
}

// taskPage is the answer of GET /v1/tasks.
type taskPage struct {
	Data       []taskBody `json:"data"`
	Pagination struct {
		Limit          int     `json:"limit"`
		Total          int     `json:"total"`
		NextCursor     *string `json:"nextCursor"`
		PreviousCursor *string `json:"previousCursor"`
	} `json:"pagination"`
}

func (p taskPage) ids() []string {
	ids := make([]string, len(p.Data))
	for i, task := range p.Data {
		ids[i] = task.ID
	}
	return ids
}

func taskIDs(tasks []taskBody) []string {
	ids := make([]string, len(tasks))
	for i, task := range tasks {
		ids[i] = task.ID
	}
	return ids
}

func reverse(tasks []taskBody) []taskBody {
	out := make([]taskBody, len(tasks))
	for i, task := range tasks {
		out[len(tasks)-1-i] = task
	}
	return out
}

func ptr(s string) *string { return &s }

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// apiTime formats a time as the API writes timestamps.
func apiTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }

func bound(n int64) *int64 { return &n }

var yes, no = true, false

func requiredIssue(path ...any) issue {
	return issue{Code: "invalid_type", Path: path, Expected: "string", Received: "undefined", Message: "Required"}
}

func typeIssueAt(expected, received string, path ...any) issue {
	if path == nil {
		path = []any{} // the body itself
	}
	return issue{Code: "invalid_type", Path: path, Expected: expected, Received: received,
		Message: "Expected " + expected + ", received " + received}
}

func cuidIssue(path ...any) issue {
	return issue{Code: "invalid_string", Path: path, Validation: "cuid", Message: "Invalid cuid"}
}

func tooBigString(max int64, message string, path ...any) issue {
	return issue{Code: "too_big", Path: path, Maximum: bound(max), Type: "string", Inclusive: &yes, Exact: &no, Message: message}
}

var statusIssueMessage = "Invalid enum value. Expected 'OPEN' | 'IN_PROGRESS' | 'IN_REVIEW' | 'ACCEPTED' | 'DECLINED', received "

// wantTaskFields checks that a Task answer has exactly the twelve fields.
func wantTaskFields(t *testing.T, res *response) {
	t.Helper()
	var raw map[string]json.RawMessage
	res.decode(t, &raw)
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if !reflect.DeepEqual(keys, taskFields) {
		t.Errorf("task fields: got %v, want %v", keys, taskFields)
	}
}

// decodeTask checks the status and the fields of a Task answer and decodes it.
func decodeTask(t *testing.T, res *response, status int) taskBody {
	t.Helper()
	if res.status != status {
		t.Fatalf("status: got %d, want %d (body %s)", res.status, status, res.body)
	}
	wantTaskFields(t, res)
	var task taskBody
	res.decode(t, &task)
	return task
}

func (api *testAPI) createTask(t *testing.T, key, clientID string, body map[string]any) taskBody {
	t.Helper()
	res := api.do(request{method: "POST", path: "/v1/tasks", key: key, clientID: clientID, body: body})
	return decodeTask(t, res, http.StatusCreated)
}

func (api *testAPI) patchTask(t *testing.T, key, clientID, id string, body any) taskBody {
	t.Helper()
	res := api.do(request{method: "PATCH", path: "/v1/tasks/" + id, key: key, clientID: clientID, body: body})
	return decodeTask(t, res, http.StatusOK)
}

func (api *testAPI) listTasks(t *testing.T, key, clientID, query string) taskPage {
	t.Helper()
	path := "/v1/tasks"
	if query != "" {
		path += "?" + query
	}
	res := api.do(request{method: "GET", path: path, key: key, clientID: clientID})
	if res.status != http.StatusOK {
		t.Fatalf("GET %s: got %d %s, want 200", path, res.status, res.body)
	}
	var page taskPage
	res.decode(t, &page)
	return page
}

// allTasks returns every task of the client (at most 100) by id.
func (api *testAPI) allTasks(t *testing.T, key, clientID string) map[string]taskBody {
	t.Helper()
	page := api.listTasks(t, key, clientID, "limit=100")
	if page.Pagination.NextCursor != nil {
		t.Fatalf("more than 100 tasks")
	}
	tasks := map[string]taskBody{}
	for _, task := range page.Data {
		tasks[task.ID] = task
	}
	return tasks
}

// sqlColumn reads one column of a query on the test database, "NULL" for null.
func (api *testAPI) sqlColumn(t testing.TB, query string, args ...any) []string {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+api.store.Path()+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.Query(query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	values := []string{}
	for rows.Next() {
		var v sql.NullString
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		if !v.Valid {
			v.String = "NULL"
		}
		values = append(values, v.String)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return values
}

// sameBodyButID checks that two error answers are the same, once each
// names its own id the same way: a record of another tenant must be
// indistinguishable from one that does not exist.
func sameBodyButID(t *testing.T, got *response, gotID string, want *response, wantID string) {
	t.Helper()
	g := strings.ReplaceAll(string(got.body), gotID, "<id>")
	w := strings.ReplaceAll(string(want.body), wantID, "<id>")
	if got.status != want.status || g != w {
		t.Errorf("answer about another tenant's record: got %d %s, want %d %s (the answer about a missing one)",
			got.status, g, want.status, w)
	}
}

func TestCreateTask(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Main")
	otherWS := api.mustCreateWorkspace(api.client.ID, "Second")
	wsB := api.mustCreateWorkspace(api.otherClient.ID, "Client Three's")
	wsC := api.mustCreateWorkspace(api.other.client.ID, "Other firm's")
	post := func(body any) *response {
		return api.do(request{method: "POST", path: "/v1/tasks", key: api.accountantKey, clientID: api.client.ID, body: body})
	}
	now := apiTime(api.clock.Now())

	t.Run("a new task has every field", func(t *testing.T) {
		res := post(map[string]any{"title": "  File the VAT return \n", "workspaceId": ws})
		got := decodeTask(t, res, http.StatusCreated)
		var raw map[string]json.RawMessage
		res.decode(t, &raw)
		for _, k := range []string{"text", "dueDate", "createdById", "parentId", "destinationFolderId"} {
			if string(raw[k]) != "null" {
				t.Errorf("%s: got %s, want null", k, raw[k])
			}
		}
		want := taskBody{ID: got.ID, Title: "File the VAT return", Status: "OPEN", WorkspaceID: ws,
			ActorType: "API", CreatedAt: now, UpdatedAt: now}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("task: got %v, want %v", got, want)
		}
		if !generatedID.MatchString(got.ID) {
			t.Errorf("id: got %q, want a generated cuid", got.ID)
		}
		if total := api.listTasks(t, api.accountantKey, api.client.ID, "").Pagination.Total; total != 1 {
			t.Errorf("tasks after one create: got %d, want 1", total)
		}
	})

	t.Run("text and a due date with an offset", func(t *testing.T) {
		got := api.createTask(t, api.accountantKey, api.client.ID, map[string]any{
			"title": "Payroll", "workspaceId": ws, "text": "March and April", "dueDate": "2026-12-01T10:00:00+02:00"})
		if deref(got.DueDate) != "2026-12-01T08:00:00Z" {
			t.Errorf("dueDate: got %s, want 2026-12-01T08:00:00Z", deref(got.DueDate))
		}
		if deref(got.Text) != "March and April" {
			t.Errorf("text: got %s, want March and April", deref(got.Text))
		}
	})

	t.Run("fractions of a second are cut off", func(t *testing.T) {
		got := api.createTask(t, api.accountantKey, api.client.ID, map[string]any{
			"title": "Fraction", "workspaceId": ws, "dueDate": "2026-12-01T23:59:59.999-01:30"})
		if deref(got.DueDate) != "2026-12-02T01:29:59Z" {
			t.Errorf("dueDate: got %s, want 2026-12-02T01:29:59Z", deref(got.DueDate))
		}
	})

	t.Run("a subtask of a task of the same workspace", func(t *testing.T) {
		parent := api.createTask(t, api.accountantKey, api.client.ID, map[string]any{"title": "Parent", "workspaceId": ws})
		// Ids are case-insensitive and answered in lower case.
		child := api.createTask(t, api.accountantKey, api.client.ID, map[string]any{
			"title": "Child", "workspaceId": strings.ToUpper(ws), "parentId": strings.ToUpper(parent.ID)})
		if deref(child.ParentID) != parent.ID || child.WorkspaceID != ws {
			t.Errorf("subtask: got parentId %s in %s, want %s in %s", deref(child.ParentID), child.WorkspaceID, parent.ID, ws)
		}
		page := api.listTasks(t, api.accountantKey, api.client.ID, "parentId="+parent.ID)
		if !reflect.DeepEqual(page.ids(), []string{child.ID}) || page.Pagination.Total != 1 {
			t.Errorf("subtasks of the parent: got %v (total %d), want [%s]", page.ids(), page.Pagination.Total, child.ID)
		}
	})

	t.Run("with the client's own key", func(t *testing.T) {
		got := api.createTask(t, api.clientKey, api.client.ID, map[string]any{"title": "By the client", "workspaceId": otherWS})
		if got.WorkspaceID != otherWS || got.ActorType != "API" || got.CreatedByID != nil {
			t.Errorf("task: got %v", got)
		}
	})

	t.Run("a title of 500 characters", func(t *testing.T) {
		title := strings.Repeat("ä", maxTaskTitle)
		got := api.createTask(t, api.accountantKey, api.client.ID, map[string]any{"title": title, "workspaceId": ws})
		if got.Title != title {
			t.Errorf("title: got %d characters, want 500", len([]rune(got.Title)))
		}
	})

	t.Run("refused", func(t *testing.T) {
		taskB := api.createTask(t, api.otherClientClientKey, api.otherClient.ID, map[string]any{"title": "B's", "workspaceId": wsB})
		parentElsewhere := api.createTask(t, api.accountantKey, api.client.ID, map[string]any{"title": "Elsewhere", "workspaceId": otherWS})
		before := api.listTasks(t, api.accountantKey, api.client.ID, "limit=1").Pagination.Total
		cases := []struct {
			name  string
			body  any
			check func(*testing.T, *response)
		}{
			{"missing title and workspaceId", map[string]any{"text": "no title"}, func(t *testing.T, res *response) {
				wantIssues(t, res, "ValidationError", []issue{requiredIssue("title"), requiredIssue("workspaceId")})
			}},
			{"blank title", map[string]any{"title": " \t  ", "workspaceId": ws}, func(t *testing.T, res *response) {
				wantIssues(t, res, "ValidationError", []issue{{Code: "too_small", Path: []any{"title"}, Minimum: bound(1),
					Type: "string", Inclusive: &yes, Exact: &no, Message: "String must contain at least 1 character(s)"}})
			}},
			{"title of 501 characters", map[string]any{"title": strings.Repeat("a", 501), "workspaceId": ws}, func(t *testing.T, res *response) {
				wantIssues(t, res, "ValidationError", []issue{tooBigString(500, "String must contain at most 500 character(s)", "title")})
			}},
			{"wrong types, all reported", map[string]any{"title": 5, "workspaceId": true, "dueDate": "tomorrow", "parentId": "x"}, func(t *testing.T, res *response) {
				wantIssues(t, res, "ValidationError", []issue{
					typeIssueAt("string", "number", "title"),
					typeIssueAt("string", "boolean", "workspaceId"),
					{Code: "invalid_string", Path: []any{"dueDate"}, Validation: "datetime", Message: "Invalid datetime"},
					cuidIssue("parentId"),
				})
			}},
			{"workspace of another client of the firm", map[string]any{"title": "x", "workspaceId": wsB}, func(t *testing.T, res *response) {
				wantError(t, res, http.StatusNotFound, "not_found", "not_found", "workspace "+wsB+" not found")
			}},
			{"workspace of another firm", map[string]any{"title": "x", "workspaceId": wsC}, func(t *testing.T, res *response) {
				wantError(t, res, http.StatusNotFound, "not_found", "not_found", "workspace "+wsC+" not found")
			}},
			{"unknown workspace", map[string]any{"title": "x", "workspaceId": "cnoworkspacenoworkspace01"}, func(t *testing.T, res *response) {
				wantError(t, res, http.StatusNotFound, "not_found", "not_found", "workspace cnoworkspacenoworkspace01 not found")
			}},
			{"parent in another workspace of the client", map[string]any{"title": "x", "workspaceId": ws, "parentId": parentElsewhere.ID}, func(t *testing.T, res *response) {
				wantError(t, res, http.StatusNotFound, "not_found", "not_found", "parent task "+parentElsewhere.ID+" not found in the task's workspace")
			}},
			{"parent of another client", map[string]any{"title": "x", "workspaceId": ws, "parentId": taskB.ID}, func(t *testing.T, res *response) {
				wantError(t, res, http.StatusNotFound, "not_found", "not_found", "parent task "+taskB.ID+" not found in the task's workspace")
			}},
			{"unknown parent", map[string]any{"title": "x", "workspaceId": ws, "parentId": missingTaskID}, func(t *testing.T, res *response) {
				wantError(t, res, http.StatusNotFound, "not_found", "not_found", "parent task "+missingTaskID+" not found in the task's workspace")
			}},
			{"malformed JSON", `{"title":"x","workspaceId":`, func(t *testing.T, res *response) {
				wantError(t, res, http.StatusBadRequest, "bad_request", "invalid_json", "the request body is not valid JSON")
			}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				c.check(t, post(c.body))
				if after := api.listTasks(t, api.accountantKey, api.client.ID, "limit=1").Pagination.Total; after != before {
					t.Errorf("task count: got %d, want %d (unchanged)", after, before)
				}
			})
		}
		if total := api.listTasks(t, api.otherClientClientKey, api.otherClient.ID, "").Pagination.Total; total != 1 {
			t.Errorf("tasks of the other client: got %d, want 1", total)
		}
	})
}

func TestUpdateTask(t *testing.T) {
	api := newTestAPI(t)
	A := api.client.ID
	ws := api.mustCreateWorkspace(A, "Main")
	ws2 := api.mustCreateWorkspace(A, "Second")
	wsB := api.mustCreateWorkspace(api.otherClient.ID, "B")
	folder := api.mustCreateFolder(A, ws, "Inbox")
	folder2 := api.mustCreateFolder(A, ws, "Archive")
	folderWS2 := api.mustCreateFolder(A, ws2, "Elsewhere")
	folderB := api.mustCreateFolder(api.otherClient.ID, wsB, "B's")
	file1 := api.mustCreateFile(A, ws, "")
	file2 := api.mustCreateFile(A, ws, "")
	fileWS2 := api.mustCreateFile(A, ws2, "")
	fileB := api.mustCreateFile(api.otherClient.ID, wsB, "")

	create := func(body map[string]any) taskBody {
		return api.createTask(t, api.accountantKey, A, body)
	}
	parent := create(map[string]any{"title": "Parent", "workspaceId": ws})
	parent2 := create(map[string]any{"title": "Parent 2", "workspaceId": ws})
	task := create(map[string]any{"title": "Task", "workspaceId": ws, "text": "notes", "dueDate": "2026-12-24T18:00:00Z"})
	taskWS2 := create(map[string]any{"title": "In the second workspace", "workspaceId": ws2})
	taskB := api.createTask(t, api.otherClientClientKey, api.otherClient.ID, map[string]any{"title": "B's", "workspaceId": wsB})
	createdAt := task.CreatedAt

	patch := func(id string, body any) *response {
		return api.do(request{method: "PATCH", path: "/v1/tasks/" + id, key: api.accountantKey, clientID: A, body: body})
	}
	current := func(t *testing.T) taskBody {
		t.Helper()
		got, ok := api.allTasks(t, api.accountantKey, A)[task.ID]
		if !ok {
			t.Fatalf("task %s is gone", task.ID)
		}
		return got
	}
	assets := func(t *testing.T) []string {
		t.Helper()
		return api.sqlColumn(t, `SELECT file_id FROM task_asset_files WHERE task_id = ? ORDER BY file_id`, task.ID)
	}
	sorted := func(ids ...string) []string {
		out := append([]string{}, ids...)
		sort.Strings(out)
		return out
	}
	// checkPatch sends body a minute later and checks that the answer, and
	// the stored task, is the task as it was with change applied and
	// updatedAt moved to now.
	checkPatch := func(t *testing.T, body any, change func(*taskBody)) {
		t.Helper()
		before := current(t)
		api.clock.Advance(time.Minute)
		got := decodeTask(t, patch(task.ID, body), http.StatusOK)
		want := before
		change(&want)
		want.UpdatedAt = apiTime(api.clock.Now())
		if !reflect.DeepEqual(got, want) {
			t.Errorf("PATCH %v:\n got %v\nwant %v", body, got, want)
		}
		if stored := current(t); !reflect.DeepEqual(stored, got) {
			t.Errorf("stored task: got %v, want the answer %v", stored, got)
		}
	}

	t.Run("title", func(t *testing.T) {
		checkPatch(t, map[string]any{"title": "  Renamed\t"}, func(w *taskBody) { w.Title = "Renamed" })
	})
	t.Run("text", func(t *testing.T) {
		checkPatch(t, map[string]any{"text": "new notes"}, func(w *taskBody) { w.Text = ptr("new notes") })
	})
	t.Run("dueDate", func(t *testing.T) {
		checkPatch(t, map[string]any{"dueDate": "2027-01-15T09:30:00-05:00"}, func(w *taskBody) { w.DueDate = ptr("2027-01-15T14:30:00Z") })
	})
	t.Run("dueDate null clears", func(t *testing.T) {
		checkPatch(t, `{"dueDate":null}`, func(w *taskBody) { w.DueDate = nil })
	})
	for _, status := range []string{"IN_PROGRESS", "IN_REVIEW", "ACCEPTED", "DECLINED", "OPEN"} {
		t.Run("status "+status, func(t *testing.T) {
			checkPatch(t, map[string]any{"status": status}, func(w *taskBody) { w.Status = status })
		})
	}
	t.Run("destinationFolderId", func(t *testing.T) {
		checkPatch(t, map[string]any{"destinationFolderId": folder}, func(w *taskBody) { w.DestinationFolderID = ptr(folder) })
		checkPatch(t, map[string]any{"destinationFolderId": strings.ToUpper(folder2)}, func(w *taskBody) { w.DestinationFolderID = ptr(folder2) })
	})
	t.Run("destinationFolderId null clears", func(t *testing.T) {
		checkPatch(t, `{"destinationFolderId":null}`, func(w *taskBody) { w.DestinationFolderID = nil })
	})
	t.Run("parentId", func(t *testing.T) {
		checkPatch(t, map[string]any{"parentId": parent.ID}, func(w *taskBody) { w.ParentID = ptr(parent.ID) })
		checkPatch(t, map[string]any{"parentId": parent2.ID}, func(w *taskBody) { w.ParentID = ptr(parent2.ID) })
		for p, want := range map[string]int{parent.ID: 0, parent2.ID: 1} {
			page := api.listTasks(t, api.accountantKey, A, "parentId="+p)
			if page.Pagination.Total != want || len(page.Data) != want {
				t.Errorf("subtasks of %s: got %d (total %d), want %d", p, len(page.Data), page.Pagination.Total, want)
			}
		}
	})
	t.Run("parentId null clears", func(t *testing.T) {
		checkPatch(t, `{"parentId":null}`, func(w *taskBody) { w.ParentID = nil })
		if page := api.listTasks(t, api.accountantKey, A, "parentId="+parent2.ID); page.Pagination.Total != 0 || len(page.Data) != 0 {
			t.Errorf("subtasks of the former parent: got %v (total %d), want none", page.ids(), page.Pagination.Total)
		}
	})
	t.Run("assetFileIds", func(t *testing.T) {
		checkPatch(t, map[string]any{"assetFileIds": []string{file1, file2, strings.ToUpper(file1)}}, func(*taskBody) {})
		if got, want := assets(t), sorted(file1, file2); !reflect.DeepEqual(got, want) {
			t.Errorf("asset files: got %v, want %v", got, want)
		}
		checkPatch(t, map[string]any{"assetFileIds": []string{file2}}, func(*taskBody) {})
		if got, want := assets(t), []string{file2}; !reflect.DeepEqual(got, want) {
			t.Errorf("asset files replaced: got %v, want %v", got, want)
		}
		checkPatch(t, `{"assetFileIds":[]}`, func(*taskBody) {})
		if got := assets(t); len(got) != 0 {
			t.Errorf("asset files after []: got %v, want none", got)
		}
		// Files are attached, not moved: their own task link stays as it was.
		if got := api.sqlColumn(t, `SELECT task_id FROM files WHERE id IN (?, ?)`, file1, file2); !reflect.DeepEqual(got, []string{"NULL", "NULL"}) {
			t.Errorf("files' task_id: got %v, want NULL (attaching is not uploading to the task)", got)
		}
	})
	t.Run("an absent field keeps its value", func(t *testing.T) {
		checkPatch(t, map[string]any{"text": "kept", "dueDate": "2027-02-01T00:00:00Z", "status": "IN_REVIEW",
			"destinationFolderId": folder, "parentId": parent.ID, "assetFileIds": []string{file1}}, func(w *taskBody) {
			w.Text, w.DueDate, w.Status, w.DestinationFolderID, w.ParentID = ptr("kept"), ptr("2027-02-01T00:00:00Z"), "IN_REVIEW", ptr(folder), ptr(parent.ID)
		})
		checkPatch(t, `{}`, func(*taskBody) {})
		checkPatch(t, map[string]any{"title": "x"}, func(w *taskBody) { w.Title = "x" })
		if got := assets(t); !reflect.DeepEqual(got, []string{file1}) {
			t.Errorf("asset files: got %v, want [%s] (kept)", got, file1)
		}
	})
	t.Run("updatedAt moves and createdAt never does", func(t *testing.T) {
		api.clock.Advance(49 * time.Hour)
		got := decodeTask(t, patch(task.ID, map[string]any{"title": "Later"}), http.StatusOK)
		if got.UpdatedAt != apiTime(api.clock.Now()) {
			t.Errorf("updatedAt: got %s, want %s", got.UpdatedAt, apiTime(api.clock.Now()))
		}
		if got.CreatedAt != createdAt {
			t.Errorf("createdAt: got %s, want %s (as created)", got.CreatedAt, createdAt)
		}
	})

	t.Run("refused", func(t *testing.T) {
		checkPatch(t, map[string]any{"title": "Before", "assetFileIds": []string{file2}}, func(w *taskBody) { w.Title = "Before" })
		child := create(map[string]any{"title": "Child", "workspaceId": ws, "parentId": task.ID})
		grandchild := create(map[string]any{"title": "Grandchild", "workspaceId": ws, "parentId": child.ID})
		missing := patch(missingTaskID, map[string]any{"title": "x"})
		wantError(t, missing, http.StatusNotFound, "not_found", "not_found", "task "+missingTaskID+" not found")
		readOnly := api.mustMintKey(api.firm.ID, auth.KeySpec{Permissions: []string{"tasks:read"}})
		snapshotB := api.allTasks(t, api.otherClientClientKey, api.otherClient.ID)
		cycle := func(t *testing.T, res *response) {
			wantIssues(t, res, "ValidationError", []issue{{Code: "custom", Path: []any{"parentId"},
				Message: "a task cannot be its own parent or the subtask of one of its subtasks"}})
		}
		send := func(body any) func() *response {
			return func() *response { return patch(task.ID, body) }
		}
		huge := `{"title":"` + strings.Repeat("a", maxJSONBody) + `"}`
		cases := []struct {
			name  string
			send  func() *response
			check func(*testing.T, *response)
		}{
			{"unknown status", send(map[string]any{"title": "not applied", "status": "DONE"}), func(t *testing.T, res *response) {
				wantIssues(t, res, "ValidationError", []issue{{Code: "invalid_enum_value", Path: []any{"status"},
					Options: db.TaskStatuses, Received: "DONE", Message: statusIssueMessage + "'DONE'"}})
			}},
			{"status in lower case", send(map[string]any{"status": "open"}), func(t *testing.T, res *response) {
				wantIssues(t, res, "ValidationError", []issue{{Code: "invalid_enum_value", Path: []any{"status"},
					Options: db.TaskStatuses, Received: "open", Message: statusIssueMessage + "'open'"}})
			}},
			{"folder of another workspace", send(map[string]any{"title": "not applied", "destinationFolderId": folderWS2}), func(t *testing.T, res *response) {
				wantError(t, res, http.StatusNotFound, "not_found", "not_found", "folder "+folderWS2+" not found in the task's workspace")
			}},
			{"folder of another client", send(map[string]any{"title": "not applied", "destinationFolderId": folderB}), func(t *testing.T, res *response) {
				wantError(t, res, http.StatusNotFound, "not_found", "not_found", "folder "+folderB+" not found in the task's workspace")
			}},
			{"file of another workspace", send(map[string]any{"title": "not applied", "assetFileIds": []string{file1, fileWS2}}), func(t *testing.T, res *response) {
				wantError(t, res, http.StatusNotFound, "not_found", "not_found", "file "+fileWS2+" not found")
			}},
			{"file of another client", send(map[string]any{"title": "not applied", "status": "DECLINED", "assetFileIds": []string{fileB}}), func(t *testing.T, res *response) {
				wantError(t, res, http.StatusNotFound, "not_found", "not_found", "file "+fileB+" not found")
			}},
			{"unknown file", send(map[string]any{"title": "not applied", "assetFileIds": []string{"cnofilenofilenofile000001"}}), func(t *testing.T, res *response) {
				wantError(t, res, http.StatusNotFound, "not_found", "not_found", "file cnofilenofilenofile000001 not found")
			}},
			{"parent is the task itself", send(map[string]any{"title": "not applied", "parentId": task.ID}), cycle},
			{"parent is its child", send(map[string]any{"parentId": child.ID}), cycle},
			{"parent is its grandchild", send(map[string]any{"title": "not applied", "parentId": strings.ToUpper(grandchild.ID)}), cycle},
			{"parent in another workspace", send(map[string]any{"title": "not applied", "parentId": taskWS2.ID}), func(t *testing.T, res *response) {
				wantError(t, res, http.StatusNotFound, "not_found", "not_found", "parent task "+taskWS2.ID+" not found in the task's workspace")
			}},
			{"parent of another client", send(map[string]any{"title": "not applied", "parentId": taskB.ID}), func(t *testing.T, res *response) {
				wantError(t, res, http.StatusNotFound, "not_found", "not_found", "parent task "+taskB.ID+" not found in the task's workspace")
			}},
			{"bad path id", func() *response { return patch("nope", map[string]any{}) }, func(t *testing.T, res *response) {
				wantIssues(t, res, "ValidationError", []issue{cuidIssue("params", "id")})
			}},
			{"bad path id and a bad body, all reported", func() *response { return patch("nope", map[string]any{"status": "DONE"}) }, func(t *testing.T, res *response) {
				wantIssues(t, res, "ValidationError", []issue{cuidIssue("params", "id"), {Code: "invalid_enum_value",
					Path: []any{"status"}, Options: db.TaskStatuses, Received: "DONE", Message: statusIssueMessage + "'DONE'"}})
			}},
			{"unknown task", func() *response { return patch(missingTaskID, map[string]any{"title": "x"}) }, func(t *testing.T, res *response) {
				wantError(t, res, http.StatusNotFound, "not_found", "not_found", "task "+missingTaskID+" not found")
			}},
			{"task of another client of the firm", func() *response { return patch(taskB.ID, map[string]any{"title": "hijacked"}) }, func(t *testing.T, res *response) {
				wantError(t, res, http.StatusNotFound, "not_found", "not_found", "task "+taskB.ID+" not found")
				sameBodyButID(t, res, taskB.ID, missing, missingTaskID)
			}},
			{"key with only tasks:read", func() *response {
				return api.do(request{method: "PATCH", path: "/v1/tasks/" + task.ID, key: readOnly, clientID: A, body: map[string]any{"title": "x"}})
			}, func(t *testing.T, res *response) {
				wantError(t, res, http.StatusForbidden, "auth_error", "missing_scope", "this API key lacks the permission tasks:write")
			}},
			{"no key", func() *response {
				return api.do(request{method: "PATCH", path: "/v1/tasks/" + task.ID, clientID: A, body: map[string]any{"title": "x"}})
			}, func(t *testing.T, res *response) {
				wantError(t, res, http.StatusUnauthorized, "auth_error", "unauthorized", "missing or invalid API key: send Authorization: Bearer <API_KEY>")
			}},
			{"missing x-client-id", func() *response {
				return api.do(request{method: "PATCH", path: "/v1/tasks/" + task.ID, key: api.accountantKey, body: map[string]any{"title": "x"}})
			}, func(t *testing.T, res *response) {
				wantError(t, res, http.StatusBadRequest, "bad_request", "missing_client_id", "the x-client-id header is required: name the client this call acts for")
			}},
			{"malformed JSON", send(`{"title": "x",}`), func(t *testing.T, res *response) {
				wantError(t, res, http.StatusBadRequest, "bad_request", "invalid_json", "the request body is not valid JSON")
			}},
			{"empty body", send(""), func(t *testing.T, res *response) {
				wantError(t, res, http.StatusBadRequest, "bad_request", "invalid_json", "the request body is empty: send a JSON object")
			}},
			{"not sent as JSON", func() *response {
				return api.do(request{method: "PATCH", path: "/v1/tasks/" + task.ID, key: api.accountantKey, clientID: A,
					body: `{"title":"x"}`, header: http.Header{"Content-Type": {"text/plain"}}})
			}, func(t *testing.T, res *response) {
				wantError(t, res, http.StatusBadRequest, "bad_request", "unsupported_media_type", "send the body as Content-Type: application/json")
			}},
			{"body over 1 MiB", send(huge), func(t *testing.T, res *response) {
				wantError(t, res, http.StatusRequestEntityTooLarge, "bad_request", "payload_too_large", "request body exceeds 1048576 bytes")
			}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				before, beforeAssets := current(t), assets(t)
				api.clock.Advance(time.Minute)
				c.check(t, c.send())
				if after := current(t); !reflect.DeepEqual(after, before) {
					t.Errorf("task after a refused PATCH:\n got %v\nwant %v (unchanged)", after, before)
				}
				if after := assets(t); !reflect.DeepEqual(after, beforeAssets) {
					t.Errorf("asset files after a refused PATCH: got %v, want %v", after, beforeAssets)
				}
			})
		}
		if after := api.allTasks(t, api.otherClientClientKey, api.otherClient.ID); !reflect.DeepEqual(after, snapshotB) {
			t.Errorf("the other client's tasks changed: got %v, want %v", after, snapshotB)
		}
		if got := api.allTasks(t, api.accountantKey, A)[grandchild.ID]; deref(got.ParentID) != child.ID {
			t.Errorf("grandchild: got %v, want it under %s", got, child.ID)
		}
	})
}

func TestDeleteTask(t *testing.T) {
	api := newTestAPI(t)
	A := api.client.ID
	ws := api.mustCreateWorkspace(A, "Main")
	wsB := api.mustCreateWorkspace(api.otherClient.ID, "B")
	create := func(body map[string]any) taskBody {
		return api.createTask(t, api.accountantKey, A, body)
	}
	del := func(key, clientID, id string) *response {
		return api.do(request{method: "DELETE", path: "/v1/tasks/" + id, key: key, clientID: clientID})
	}
	folder := api.mustCreateFolder(A, ws, "Inbox")
	task := create(map[string]any{"title": "Year-end closing", "workspaceId": ws, "text": "all of it", "dueDate": "2027-03-31T17:00:00Z"})
	api.clock.Advance(time.Hour)
	task = api.patchTask(t, api.accountantKey, A, task.ID, map[string]any{"status": "IN_PROGRESS", "destinationFolderId": folder})
	child1 := create(map[string]any{"title": "Inventory", "workspaceId": ws, "parentId": task.ID})
	child2 := create(map[string]any{"title": "Bank statements", "workspaceId": ws, "parentId": task.ID})
	grandchild := create(map[string]any{"title": "Count the warehouse", "workspaceId": ws, "parentId": child1.ID})
	unrelated := create(map[string]any{"title": "Unrelated", "workspaceId": ws})
	taskFile := api.mustCreateFile(A, ws, task.ID)
	grandchildFile := api.mustCreateFile(A, ws, grandchild.ID)
	assetFile := api.mustCreateFile(A, ws, "")
	api.patchTask(t, api.accountantKey, A, task.ID, map[string]any{"assetFileIds": []string{assetFile}})
	task = api.allTasks(t, api.accountantKey, A)[task.ID]
	taskB := api.createTask(t, api.otherClientClientKey, api.otherClient.ID, map[string]any{"title": "B's", "workspaceId": wsB})

	t.Run("answers the deleted task with its subtasks gone", func(t *testing.T) {
		if total := api.listTasks(t, api.accountantKey, A, "").Pagination.Total; total != 5 {
			t.Fatalf("tasks before: got %d, want 5", total)
		}
		api.clock.Advance(time.Minute)
		got := decodeTask(t, del(api.accountantKey, A, task.ID), http.StatusOK)
		if !reflect.DeepEqual(got, task) {
			t.Errorf("deleted task:\n got %v\nwant %v (as it was)", got, task)
		}
		page := api.listTasks(t, api.accountantKey, A, "")
		if !reflect.DeepEqual(page.ids(), []string{unrelated.ID}) || page.Pagination.Total != 1 {
			t.Errorf("tasks after: got %v (total %d), want only %s", page.ids(), page.Pagination.Total, unrelated.ID)
		}
		for _, filter := range []string{"workspaceId=" + ws, "parentId=" + task.ID, "parentId=" + child1.ID} {
			want := 0
			if strings.HasPrefix(filter, "workspaceId") {
				want = 1
			}
			if page := api.listTasks(t, api.accountantKey, A, filter); page.Pagination.Total != want || len(page.Data) != want {
				t.Errorf("%s: got %v (total %d), want %d", filter, page.ids(), page.Pagination.Total, want)
			}
		}
		for _, id := range []string{task.ID, child1.ID, child2.ID, grandchild.ID} {
			if n := api.sqlColumn(t, `SELECT count(*) FROM tasks WHERE id = ?`, id); n[0] != "0" {
				t.Errorf("task %s is still stored", id)
			}
		}
	})
	t.Run("files keep their record and lose the link", func(t *testing.T) {
		for _, id := range []string{taskFile, grandchildFile, assetFile} {
			got := api.sqlColumn(t, `SELECT coalesce(task_id, 'NULL') || ' ' || name || ' ' || size FROM files WHERE id = ?`, id)
			if !reflect.DeepEqual(got, []string{"NULL receipt.pdf 3"}) {
				t.Errorf("file %s: got %v, want its record with task_id NULL", id, got)
			}
		}
		if got := api.sqlColumn(t, `SELECT file_id FROM task_asset_files WHERE task_id = ?`, task.ID); len(got) != 0 {
			t.Errorf("attachments of the deleted task: got %v, want none", got)
		}
	})
	t.Run("a second delete is not found", func(t *testing.T) {
		wantError(t, del(api.accountantKey, A, task.ID), http.StatusNotFound, "not_found", "not_found", "task "+task.ID+" not found")
		wantError(t, del(api.accountantKey, A, grandchild.ID), http.StatusNotFound, "not_found", "not_found", "task "+grandchild.ID+" not found")
	})
	t.Run("another client's task is not found and stays", func(t *testing.T) {
		res := del(api.accountantKey, A, taskB.ID)
		wantError(t, res, http.StatusNotFound, "not_found", "not_found", "task "+taskB.ID+" not found")
		sameBodyButID(t, res, taskB.ID, del(api.accountantKey, A, missingTaskID), missingTaskID)
		if got, ok := api.allTasks(t, api.otherClientClientKey, api.otherClient.ID)[taskB.ID]; !ok || !reflect.DeepEqual(got, taskB) {
			t.Errorf("the other client's task: got %v (present %v), want %v", got, ok, taskB)
		}
	})
	t.Run("bad id", func(t *testing.T) {
		wantIssues(t, del(api.accountantKey, A, "nope"), "ValidationError", []issue{cuidIssue("params", "id")})
	})
	t.Run("checks before the task", func(t *testing.T) {
		readOnly := api.mustMintKey(api.firm.ID, auth.KeySpec{Permissions: []string{"tasks:read"}})
		wantError(t, del(readOnly, A, unrelated.ID), http.StatusForbidden, "auth_error", "missing_scope", "this API key lacks the permission tasks:write")
		wantError(t, del(api.accountantKey, "", unrelated.ID), http.StatusBadRequest, "bad_request", "missing_client_id", "")
		if total := api.listTasks(t, api.accountantKey, A, "").Pagination.Total; total != 1 {
			t.Errorf("tasks: got %d, want 1 (nothing deleted)", total)
		}
	})
}

// expectedOrder sorts tasks as GET /v1/tasks documents it: by the sort key,
// ties by id in the same direction; status in life-cycle order, title ASCII
// case-insensitively, tasks without dueDate last in both orders.
func expectedOrder(tasks []taskBody, key string, desc bool) []taskBody {
	rank := map[string]int{}
	for i, s := range db.TaskStatuses {
		rank[s] = i
	}
	out := append([]taskBody(nil), tasks...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		var c int
		switch key {
		case "createdAt":
			c = strings.Compare(a.CreatedAt, b.CreatedAt)
		case "updatedAt":
			c = strings.Compare(a.UpdatedAt, b.UpdatedAt)
		case "status":
			c = rank[a.Status] - rank[b.Status]
		case "title":
			c = strings.Compare(strings.ToLower(a.Title), strings.ToLower(b.Title))
		case "dueDate":
			switch {
			case a.DueDate == nil && b.DueDate == nil:
			case a.DueDate == nil:
				return false
			case b.DueDate == nil:
				return true
			default:
				c = strings.Compare(*a.DueDate, *b.DueDate)
			}
		}
		if c == 0 {
			c = strings.Compare(a.ID, b.ID)
		}
		if desc {
			return c > 0
		}
		return c < 0
	})
	return out
}

func TestListTasks(t *testing.T) {
	api := newTestAPI(t)
	A := api.client.ID
	ws := api.mustCreateWorkspace(A, "Main")
	list := func(query string) *response {
		path := "/v1/tasks"
		if query != "" {
			path += "?" + query
		}
		return api.do(request{method: "GET", path: path, key: api.accountantKey, clientID: A})
	}
	var created []taskBody // in creation order, one second apart
	for i := 0; i < 25; i++ {
		api.clock.Advance(time.Second)
		created = append(created, api.createTask(t, api.accountantKey, A, map[string]any{"title": "Task " + string(rune('A'+i)), "workspaceId": ws}))
	}
	newest := expectedOrder(created, "createdAt", true)
	if !reflect.DeepEqual(taskIDs(newest), taskIDs(reverse(created))) {
		t.Fatalf("tasks created a second apart do not sort by creation")
	}

	t.Run("defaults: 20 items, newest first", func(t *testing.T) {
		page := api.listTasks(t, api.accountantKey, A, "")
		if !reflect.DeepEqual(page.Data, newest[:20]) {
			t.Errorf("page: got %v, want %v", page.ids(), taskIDs(newest[:20]))
		}
		p := page.Pagination
		if p.Limit != 20 || p.Total != 25 || deref(p.NextCursor) != newest[20].ID || p.PreviousCursor != nil {
			t.Errorf("pagination: got limit %d total %d next %s previous %s, want 20, 25, %s, null",
				p.Limit, p.Total, deref(p.NextCursor), deref(p.PreviousCursor), newest[20].ID)
		}
		explicit := api.listTasks(t, api.accountantKey, A, "limit=20&sort=createdAt&order=desc")
		if !reflect.DeepEqual(explicit, page) {
			t.Errorf("explicit defaults: got %v, want the same page as without parameters", explicit.ids())
		}
	})
	t.Run("limit 1 and 100", func(t *testing.T) {
		page := api.listTasks(t, api.accountantKey, A, "limit=1")
		if !reflect.DeepEqual(page.ids(), []string{newest[0].ID}) || page.Pagination.Limit != 1 || deref(page.Pagination.NextCursor) != newest[1].ID {
			t.Errorf("limit=1: got %v next %s", page.ids(), deref(page.Pagination.NextCursor))
		}
		page = api.listTasks(t, api.accountantKey, A, "limit=100")
		if !reflect.DeepEqual(page.Data, newest) || page.Pagination.Limit != 100 || page.Pagination.NextCursor != nil || page.Pagination.Total != 25 {
			t.Errorf("limit=100: got %d items, next %s, total %d; want all 25, no next", len(page.Data), deref(page.Pagination.NextCursor), page.Pagination.Total)
		}
		page = api.listTasks(t, api.accountantKey, A, "limit=25")
		if len(page.Data) != 25 || page.Pagination.NextCursor != nil {
			t.Errorf("limit=25 of 25: got %d items, next %s; want 25 and no next", len(page.Data), deref(page.Pagination.NextCursor))
		}
	})
	t.Run("limit out of range", func(t *testing.T) {
		wantIssues(t, list("limit=0"), "ValidationError", []issue{{Code: "too_small", Path: []any{"query", "limit"}, Minimum: bound(1),
			Type: "number", Inclusive: &yes, Exact: &no, Message: "Number must be greater than or equal to 1"}})
		wantIssues(t, list("limit=101"), "ValidationError", []issue{{Code: "too_big", Path: []any{"query", "limit"}, Maximum: bound(100),
			Type: "number", Inclusive: &yes, Exact: &no, Message: "Number must be less than or equal to 100"}})
		wantIssues(t, list("limit=abc"), "ValidationError", []issue{typeIssueAt("number", "nan", "query", "limit")})
		wantIssues(t, list("limit=2.5"), "ValidationError", []issue{typeIssueAt("integer", "float", "query", "limit")})
	})
	t.Run("sort and order, both reported", func(t *testing.T) {
		wantIssues(t, list("sort=size&order=up"), "ValidationError", []issue{
			{Code: "invalid_enum_value", Path: []any{"query", "sort"}, Options: db.TaskSorts, Received: "size",
				Message: "Invalid enum value. Expected 'createdAt' | 'updatedAt' | 'dueDate' | 'status' | 'title', received 'size'"},
			{Code: "invalid_enum_value", Path: []any{"query", "order"}, Options: []string{"asc", "desc"}, Received: "up",
				Message: "Invalid enum value. Expected 'asc' | 'desc', received 'up'"},
		})
	})
	t.Run("every query issue at once", func(t *testing.T) {
		wantIssues(t, list("workspaceId=x&parentId=no-such&limit=0&cursor=bad&sort=DueDate&order=DESC"), "ValidationError", []issue{
			cuidIssue("query", "workspaceId"),
			cuidIssue("query", "parentId"),
			{Code: "too_small", Path: []any{"query", "limit"}, Minimum: bound(1), Type: "number", Inclusive: &yes, Exact: &no,
				Message: "Number must be greater than or equal to 1"},
			cuidIssue("query", "cursor"),
			{Code: "invalid_enum_value", Path: []any{"query", "sort"}, Options: db.TaskSorts, Received: "DueDate",
				Message: "Invalid enum value. Expected 'createdAt' | 'updatedAt' | 'dueDate' | 'status' | 'title', received 'DueDate'"},
			{Code: "invalid_enum_value", Path: []any{"query", "order"}, Options: []string{"asc", "desc"}, Received: "DESC",
				Message: "Invalid enum value. Expected 'asc' | 'desc', received 'DESC'"},
		})
	})
	t.Run("oldest first", func(t *testing.T) {
		page := api.listTasks(t, api.accountantKey, A, "order=asc&limit=100")
		if !reflect.DeepEqual(page.Data, created) {
			t.Errorf("order=asc: got %v, want %v", page.ids(), taskIDs(created))
		}
	})
	t.Run("sort by updatedAt", func(t *testing.T) {
		api.clock.Advance(time.Hour)
		touched := api.patchTask(t, api.accountantKey, A, created[3].ID, map[string]any{"text": "touched"})
		page := api.listTasks(t, api.accountantKey, A, "sort=updatedAt&limit=1")
		if !reflect.DeepEqual(page.Data, []taskBody{touched}) {
			t.Errorf("sort=updatedAt: got %v, want %v first", page.ids(), touched.ID)
		}
		page = api.listTasks(t, api.accountantKey, A, "sort=updatedAt&order=asc&limit=100")
		if last := page.Data[len(page.Data)-1]; last.ID != touched.ID {
			t.Errorf("sort=updatedAt&order=asc: got %s last, want %s", last.ID, touched.ID)
		}
		if page := api.listTasks(t, api.accountantKey, A, "limit=100"); page.Data[21].ID != touched.ID {
			t.Errorf("sort=createdAt: the updated task moved: got %v", page.ids())
		}
	})
	t.Run("permission", func(t *testing.T) {
		writeOnly := api.mustMintKey(api.firm.ID, auth.KeySpec{Permissions: []string{"tasks:write"}})
		res := api.do(request{method: "GET", path: "/v1/tasks", key: writeOnly, clientID: A})
		wantError(t, res, http.StatusForbidden, "auth_error", "missing_scope", "this API key lacks the permission tasks:read")
		res = api.do(request{method: "GET", path: "/v1/tasks", key: api.accountantKey})
		wantError(t, res, http.StatusBadRequest, "bad_request", "missing_client_id", "the x-client-id header is required: name the client this call acts for")
	})
}

func TestListTasksFilters(t *testing.T) {
	api := newTestAPI(t)
	A := api.client.ID
	ws1 := api.mustCreateWorkspace(A, "One")
	ws2 := api.mustCreateWorkspace(A, "Two")
	create := func(title, ws string, parent *taskBody) taskBody {
		api.clock.Advance(time.Second)
		body := map[string]any{"title": title, "workspaceId": ws}
		if parent != nil {
			body["parentId"] = parent.ID
		}
		return api.createTask(t, api.accountantKey, A, body)
	}
	p1 := create("P1", ws1, nil)
	s1 := create("S1", ws1, &p1)
	s2 := create("S2", ws1, &p1)
	x := create("X", ws1, nil)
	p2 := create("P2", ws2, nil)
	s3 := create("S3", ws2, &p2)
	y := create("Y", ws2, nil)
	gs := create("GS", ws1, &s1)
	all := []taskBody{p1, s1, s2, x, p2, s3, y, gs}

	cases := []struct {
		name, query string
		want        []taskBody
	}{
		{"no filter", "", all},
		{"workspace one", "workspaceId=" + ws1, []taskBody{p1, s1, s2, x, gs}},
		{"workspace two", "workspaceId=" + ws2, []taskBody{p2, s3, y}},
		{"workspace id in upper case", "workspaceId=" + strings.ToUpper(ws2), []taskBody{p2, s3, y}},
		{"subtasks, not sub-subtasks", "parentId=" + p1.ID, []taskBody{s1, s2}},
		{"sub-subtasks", "parentId=" + s1.ID, []taskBody{gs}},
		{"workspace and parent", "workspaceId=" + ws1 + "&parentId=" + p1.ID, []taskBody{s1, s2}},
		{"parent of another workspace", "workspaceId=" + ws2 + "&parentId=" + p1.ID, nil},
		{"a task without subtasks", "parentId=" + x.ID, nil},
		{"unknown parent", "parentId=" + missingTaskID, nil},
		{"unknown workspace", "workspaceId=cnoworkspacenoworkspace01", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := c.query + "&order=asc&limit=100"
			page := api.listTasks(t, api.accountantKey, A, q)
			want := expectedOrder(c.want, "createdAt", false)
			if !reflect.DeepEqual(page.ids(), taskIDs(want)) || page.Pagination.Total != len(want) {
				t.Errorf("%s: got %v (total %d), want %v (total %d)", c.query, page.ids(), page.Pagination.Total, taskIDs(want), len(want))
			}
			// total counts every match, whatever the page.
			page = api.listTasks(t, api.accountantKey, A, c.query+"&order=asc&limit=1")
			if page.Pagination.Total != len(want) || len(page.Data) != min(1, len(want)) {
				t.Errorf("%s&limit=1: got %d items (total %d), want %d items (total %d)", c.query, len(page.Data), page.Pagination.Total, min(1, len(want)), len(want))
			}
			if len(want) > 1 && deref(page.Pagination.NextCursor) != want[1].ID {
				t.Errorf("%s&limit=1: nextCursor got %s, want %s", c.query, deref(page.Pagination.NextCursor), want[1].ID)
			}
		})
	}

	t.Run("pages within a filter", func(t *testing.T) {
		got := walkTasks(t, api, api.accountantKey, A, "workspaceId="+ws1+"&order=asc", 2)
		if want := expectedOrder([]taskBody{p1, s1, s2, x, gs}, "createdAt", false); !reflect.DeepEqual(taskIDs(got), taskIDs(want)) {
			t.Errorf("walked: got %v, want %v", taskIDs(got), taskIDs(want))
		}
	})

	t.Run("counts follow moves and deletes", func(t *testing.T) {
		total := func(query string) int {
			t.Helper()
			return api.listTasks(t, api.accountantKey, A, query).Pagination.Total
		}
		api.patchTask(t, api.accountantKey, A, s2.ID, `{"parentId":null}`)
		if got := total("parentId=" + p1.ID); got != 1 {
			t.Errorf("subtasks of P1 after S2 left: got %d, want 1", got)
		}
		api.patchTask(t, api.accountantKey, A, s2.ID, map[string]any{"parentId": s1.ID})
		if got := total("parentId=" + s1.ID); got != 2 {
			t.Errorf("subtasks of S1 after S2 joined: got %d, want 2", got)
		}
		// Deleting S1 takes GS and S2 with it.
		api.do(request{method: "DELETE", path: "/v1/tasks/" + s1.ID, key: api.accountantKey, clientID: A})
		for query, want := range map[string]int{"": 5, "workspaceId=" + ws1: 2, "workspaceId=" + ws2: 3,
			"parentId=" + p1.ID: 0, "parentId=" + s1.ID: 0, "workspaceId=" + ws1 + "&parentId=" + p1.ID: 0} {
			page := api.listTasks(t, api.accountantKey, A, query+"&limit=100")
			if page.Pagination.Total != want || len(page.Data) != want {
				t.Errorf("%q after the delete: got %d items (total %d), want %d", query, len(page.Data), page.Pagination.Total, want)
			}
		}
	})
}

// walkTasks pages through a list with the limit, forward from the first page
// by nextCursor and back from the last by previousCursor, checks that both
// ways give the same pages with consistent cursors, and returns the items.
func walkTasks(t *testing.T, api *testAPI, key, clientID, query string, limit int) []taskBody {
	t.Helper()
	get := func(cursor string) taskPage {
		t.Helper()
		q := query + "&limit=" + strconv.Itoa(limit)
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		return api.listTasks(t, key, clientID, q)
	}
	var pages []taskPage
	for cursor := ""; ; {
		page := get(cursor)
		pages = append(pages, page)
		if page.Pagination.NextCursor == nil {
			break
		}
		if len(pages) > 100 {
			t.Fatalf("%s: more than 100 pages", query)
		}
		cursor = *page.Pagination.NextCursor
	}
	var items []taskBody
	total := pages[0].Pagination.Total
	for k, page := range pages {
		items = append(items, page.Data...)
		p := page.Pagination
		if p.Limit != limit || p.Total != total {
			t.Errorf("%s page %d: limit %d total %d, want %d and %d", query, k, p.Limit, p.Total, limit, total)
		}
		if k < len(pages)-1 && len(page.Data) != limit {
			t.Errorf("%s page %d: got %d items, want %d", query, k, len(page.Data), limit)
		}
		if k > 0 && (len(page.Data) == 0 || *pages[k-1].Pagination.NextCursor != page.Data[0].ID) {
			t.Errorf("%s page %d: nextCursor of the page before is not its first item", query, k)
		}
		wantPrevious := "<nil>"
		if k > 0 && len(pages[k-1].Data) > 0 {
			wantPrevious = pages[k-1].Data[0].ID
		}
		if deref(p.PreviousCursor) != wantPrevious {
			t.Errorf("%s page %d: previousCursor got %s, want %s", query, k, deref(p.PreviousCursor), wantPrevious)
		}
	}
	if len(items) != total {
		t.Errorf("%s: walked %d items, total says %d", query, len(items), total)
	}
	// Back from the last page: each previousCursor gives the page before, as it was.
	k := len(pages) - 1
	for cursor := pages[k].Pagination.PreviousCursor; cursor != nil; {
		k--
		if k < 0 {
			t.Fatalf("%s: walking back goes past the first page", query)
		}
		page := get(*cursor)
		if !reflect.DeepEqual(page, pages[k]) {
			t.Errorf("%s: page %d walking back:\n got %v %+v\nwant %v %+v", query, k, page.ids(), page.Pagination, pages[k].ids(), pages[k].Pagination)
		}
		cursor = page.Pagination.PreviousCursor
	}
	if k != 0 {
		t.Errorf("%s: walking back stopped at page %d, want 0", query, k)
	}
	return items
}

func TestListTasksPaging(t *testing.T) {
	api := newTestAPI(t)
	A := api.client.ID
	ws := api.mustCreateWorkspace(A, "Main")
	var seven []taskBody
	for i := 0; i < 7; i++ {
		api.clock.Advance(time.Second)
		seven = append(seven, api.createTask(t, api.accountantKey, A, map[string]any{"title": "Task " + strconv.Itoa(i+1), "workspaceId": ws}))
	}
	newest := reverse(seven)
	list := func(query string) taskPage { return api.listTasks(t, api.accountantKey, A, query) }

	t.Run("seven tasks, three a page, forward and back", func(t *testing.T) {
		var forward []taskPage
		for cursor := ""; len(forward) < 10; {
			q := "limit=3"
			if cursor != "" {
				q += "&cursor=" + cursor
			}
			page := list(q)
			forward = append(forward, page)
			if page.Pagination.NextCursor == nil {
				break
			}
			cursor = *page.Pagination.NextCursor
		}
		if len(forward) != 3 {
			t.Fatalf("pages: got %d, want 3", len(forward))
		}
		want := []struct {
			items          []taskBody
			next, previous string
		}{
			{newest[0:3], newest[3].ID, "<nil>"},
			{newest[3:6], newest[6].ID, newest[0].ID},
			{newest[6:7], "<nil>", newest[3].ID},
		}
		for k, w := range want {
			p := forward[k]
			if !reflect.DeepEqual(p.Data, w.items) {
				t.Errorf("page %d: got %v, want %v", k+1, p.ids(), taskIDs(w.items))
			}
			if deref(p.Pagination.NextCursor) != w.next || deref(p.Pagination.PreviousCursor) != w.previous {
				t.Errorf("page %d cursors: got next %s previous %s, want %s and %s", k+1,
					deref(p.Pagination.NextCursor), deref(p.Pagination.PreviousCursor), w.next, w.previous)
			}
			if p.Pagination.Total != 7 || p.Pagination.Limit != 3 {
				t.Errorf("page %d: total %d limit %d, want 7 and 3", k+1, p.Pagination.Total, p.Pagination.Limit)
			}
		}
		back := []taskPage{forward[2]}
		for cursor := forward[2].Pagination.PreviousCursor; cursor != nil && len(back) < 10; {
			page := list("limit=3&cursor=" + *cursor)
			back = append(back, page)
			cursor = page.Pagination.PreviousCursor
		}
		if !reflect.DeepEqual(reverseSlice(back), forward) {
			t.Errorf("walking back: got pages %v, want %v", pageIDs(reverseSlice(back)), pageIDs(forward))
		}
	})

	t.Run("oldest first, two a page", func(t *testing.T) {
		got := walkTasks(t, api, api.accountantKey, A, "order=asc", 2)
		if !reflect.DeepEqual(got, seven) {
			t.Errorf("walked: got %v, want %v", taskIDs(got), taskIDs(seven))
		}
	})

	t.Run("a cursor names the first item of the page", func(t *testing.T) {
		page := list("limit=2&cursor=" + newest[4].ID)
		if !reflect.DeepEqual(page.Data, newest[4:6]) || deref(page.Pagination.PreviousCursor) != newest[2].ID ||
			deref(page.Pagination.NextCursor) != newest[6].ID {
			t.Errorf("page at %s: got %v previous %s next %s, want %v, %s, %s", newest[4].ID, page.ids(),
				deref(page.Pagination.PreviousCursor), deref(page.Pagination.NextCursor), taskIDs(newest[4:6]), newest[2].ID, newest[6].ID)
		}
		// Fewer than limit items before the cursor: the previous page is the first.
		page = list("limit=3&cursor=" + newest[1].ID)
		if deref(page.Pagination.PreviousCursor) != newest[0].ID {
			t.Errorf("previousCursor one item in: got %s, want %s", deref(page.Pagination.PreviousCursor), newest[0].ID)
		}
	})
}

func reverseSlice[T any](s []T) []T {
	out := make([]T, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

func pageIDs(pages []taskPage) [][]string {
	ids := make([][]string, len(pages))
	for i, p := range pages {
		ids[i] = p.ids()
	}
	return ids
}

func TestListTasksSortOrder(t *testing.T) {
	api := newTestAPI(t)
	A := api.client.ID
	create := func(ws, title string, extra map[string]any) taskBody {
		t.Helper()
		body := map[string]any{"title": title, "workspaceId": ws}
		for k, v := range extra {
			body[k] = v
		}
		return api.createTask(t, api.accountantKey, A, body)
	}
	list := func(query string) taskPage { return api.listTasks(t, api.accountantKey, A, query+"&limit=100") }
	byID := func(tasks []taskBody, desc bool) []taskBody {
		out := append([]taskBody(nil), tasks...)
		sort.Slice(out, func(i, j int) bool { return (out[i].ID < out[j].ID) != desc })
		return out
	}

	t.Run("status in life-cycle order", func(t *testing.T) {
		ws := api.mustCreateWorkspace(A, "Status")
		for _, status := range []string{"DECLINED", "OPEN", "ACCEPTED", "IN_PROGRESS", "IN_REVIEW"} {
			api.clock.Advance(time.Second)
			task := create(ws, "status "+status, nil)
			if status != "OPEN" {
				api.patchTask(t, api.accountantKey, A, task.ID, map[string]any{"status": status})
			}
		}
		statuses := func(p taskPage) []string {
			var out []string
			for _, task := range p.Data {
				out = append(out, task.Status)
			}
			return out
		}
		if got := statuses(list("workspaceId=" + ws + "&sort=status&order=asc")); !reflect.DeepEqual(got, db.TaskStatuses) {
			t.Errorf("status asc: got %v, want %v", got, db.TaskStatuses)
		}
		if got, want := statuses(list("workspaceId="+ws+"&sort=status&order=desc")), reverseSlice(db.TaskStatuses); !reflect.DeepEqual(got, want) {
			t.Errorf("status desc: got %v, want %v", got, want)
		}
		if got := statuses(list("workspaceId=" + ws + "&sort=status")); got[0] != "DECLINED" {
			t.Errorf("status with the default order: got %v, want DECLINED first (desc)", got)
		}
	})

	t.Run("tasks without dueDate come last both ways", func(t *testing.T) {
		ws := api.mustCreateWorkspace(A, "Due")
		a := create(ws, "a", map[string]any{"dueDate": "2027-01-02T00:00:00Z"})
		b := create(ws, "b", nil)
		c := create(ws, "c", map[string]any{"dueDate": "2027-01-01T00:00:00Z"})
		d := create(ws, "d", nil)
		e := create(ws, "e", map[string]any{"dueDate": "2027-01-03T00:00:00Z"})
		f := create(ws, "f", map[string]any{"dueDate": "2026-01-01T00:00:00Z"})
		f = api.patchTask(t, api.accountantKey, A, f.ID, `{"dueDate":null}`)
		asc := append([]taskBody{c, a, e}, byID([]taskBody{b, d, f}, false)...)
		desc := append([]taskBody{e, a, c}, byID([]taskBody{b, d, f}, true)...)
		if got := list("workspaceId=" + ws + "&sort=dueDate&order=asc"); !reflect.DeepEqual(got.Data, asc) {
			t.Errorf("dueDate asc: got %v, want %v", got.ids(), taskIDs(asc))
		}
		if got := list("workspaceId=" + ws + "&sort=dueDate&order=desc"); !reflect.DeepEqual(got.Data, desc) {
			t.Errorf("dueDate desc: got %v, want %v", got.ids(), taskIDs(desc))
		}
		for _, order := range []string{"asc", "desc"} {
			want := map[string][]taskBody{"asc": asc, "desc": desc}[order]
			if got := walkTasks(t, api, api.accountantKey, A, "workspaceId="+ws+"&sort=dueDate&order="+order, 2); !reflect.DeepEqual(got, want) {
				t.Errorf("dueDate %s, two a page: got %v, want %v", order, taskIDs(got), taskIDs(want))
			}
		}
	})

	t.Run("title case-insensitively", func(t *testing.T) {
		ws := api.mustCreateWorkspace(A, "Titles")
		cherry := create(ws, "cherry", nil)
		apple := create(ws, "apple", nil)
		banana := create(ws, "Banana", nil)
		if got, want := list("workspaceId="+ws+"&sort=title&order=asc"), []taskBody{apple, banana, cherry}; !reflect.DeepEqual(got.Data, want) {
			t.Errorf("title asc: got %v, want apple, Banana, cherry", titles(got.Data))
		}
		if got, want := list("workspaceId="+ws+"&sort=title&order=desc"), []taskBody{cherry, banana, apple}; !reflect.DeepEqual(got.Data, want) {
			t.Errorf("title desc: got %v, want cherry, Banana, apple", titles(got.Data))
		}
	})

	t.Run("equal values are ordered by id in the same direction", func(t *testing.T) {
		ws := api.mustCreateWorkspace(A, "Ties")
		api.clock.Advance(time.Second)
		var tied []taskBody // same createdAt, updatedAt and title but for case
		for _, title := range []string{"Same", "same", "SAME", "sAme"} {
			tied = append(tied, create(ws, title, nil))
		}
		for _, sortKey := range []string{"createdAt", "updatedAt", "dueDate", "status", "title"} {
			for _, desc := range []bool{false, true} {
				order := map[bool]string{false: "asc", true: "desc"}[desc]
				query := "workspaceId=" + ws + "&sort=" + sortKey + "&order=" + order
				if got, want := list(query), byID(tied, desc); !reflect.DeepEqual(got.Data, want) {
					t.Errorf("%s: got %v, want %v", query, got.ids(), taskIDs(want))
				}
				if got, want := walkTasks(t, api, api.accountantKey, A, query, 1), byID(tied, desc); !reflect.DeepEqual(got, want) {
					t.Errorf("%s, one a page: got %v, want %v", query, taskIDs(got), taskIDs(want))
				}
			}
		}
	})

	t.Run("every sort and order, whole and paged", func(t *testing.T) {
		ws := api.mustCreateWorkspace(A, "Mixed")
		titlesMixed := []string{"apple", "Banana", "cherry", "Apple", "banana", "_under", "Zed", "zed", "apple", "Mango", "mango", "[x]"}
		dues := []any{nil, "2027-05-01T00:00:00Z", "2027-04-01T12:00:00Z", nil, "2027-05-01T00:00:00Z", nil,
			"2025-01-01T00:00:00Z", "2027-04-01T12:00:00Z", nil, "2030-12-31T23:59:59Z", nil, "2027-05-01T00:00:00Z"}
		statuses := []string{"OPEN", "DECLINED", "IN_REVIEW", "OPEN", "ACCEPTED", "IN_PROGRESS", "DECLINED", "OPEN", "IN_REVIEW", "ACCEPTED", "OPEN", "IN_PROGRESS"}
		for i, title := range titlesMixed {
			if i%3 == 0 {
				api.clock.Advance(time.Second) // createdAt ties in threes
			}
			extra := map[string]any{}
			if dues[i] != nil {
				extra["dueDate"] = dues[i]
			}
			task := create(ws, title, extra)
			if statuses[i] != "OPEN" || i%4 == 0 {
				if i%2 == 0 {
					api.clock.Advance(time.Second)
				}
				api.patchTask(t, api.accountantKey, A, task.ID, map[string]any{"status": statuses[i]})
			}
		}
		var everything []taskBody
		for _, task := range api.allTasks(t, api.accountantKey, A) {
			everything = append(everything, task)
		}
		for _, sortKey := range db.TaskSorts {
			for _, desc := range []bool{false, true} {
				order := map[bool]string{false: "asc", true: "desc"}[desc]
				query := "sort=" + sortKey + "&order=" + order
				want := expectedOrder(everything, sortKey, desc)
				if got := list(query); !reflect.DeepEqual(got.Data, want) {
					t.Errorf("%s:\n got %v\nwant %v", query, got.ids(), taskIDs(want))
				}
				if got := walkTasks(t, api, api.accountantKey, A, query, 3); !reflect.DeepEqual(got, want) {
					t.Errorf("%s, three a page:\n got %v\nwant %v", query, taskIDs(got), taskIDs(want))
				}
				wsTasks := []taskBody{}
				for _, task := range want {
					if task.WorkspaceID == ws {
						wsTasks = append(wsTasks, task)
					}
				}
				if got := walkTasks(t, api, api.accountantKey, A, "workspaceId="+ws+"&"+query, 5); !reflect.DeepEqual(got, wsTasks) {
					t.Errorf("workspaceId&%s, five a page:\n got %v\nwant %v", query, taskIDs(got), taskIDs(wsTasks))
				}
			}
		}
	})
}

func titles(tasks []taskBody) []string {
	out := make([]string, len(tasks))
	for i, task := range tasks {
		out[i] = task.Title
	}
	return out
}

func TestListTasksCursors(t *testing.T) {
	api := newTestAPI(t)
	A := api.client.ID
	ws := api.mustCreateWorkspace(A, "Main")
	create := func(title string, parent string) taskBody {
		api.clock.Advance(time.Second)
		body := map[string]any{"title": title, "workspaceId": ws}
		if parent != "" {
			body["parentId"] = parent
		}
		return api.createTask(t, api.accountantKey, A, body)
	}
	list := func(query string) *response {
		return api.do(request{method: "GET", path: "/v1/tasks?" + query, key: api.accountantKey, clientID: A})
	}
	del := func(id string) {
		t.Helper()
		if res := api.do(request{method: "DELETE", path: "/v1/tasks/" + id, key: api.accountantKey, clientID: A}); res.status != http.StatusOK {
			t.Fatalf("delete %s: got %d %s", id, res.status, res.body)
		}
	}
	var seven []taskBody
	for _, title := range []string{"golf", "alpha", "echo", "foxtrot", "bravo", "delta", "charlie"} {
		seven = append(seven, create(title, ""))
	}
	newest := reverse(seven)

	t.Run("a deleted cursor continues where its task stood", func(t *testing.T) {
		first := api.listTasks(t, api.accountantKey, A, "limit=3")
		cursor := deref(first.Pagination.NextCursor)
		if cursor != newest[3].ID {
			t.Fatalf("nextCursor: got %s, want %s", cursor, newest[3].ID)
		}
		api.clock.Advance(time.Minute)
		del(cursor)
		page := api.listTasks(t, api.accountantKey, A, "limit=3&cursor="+cursor)
		if want := newest[4:7]; !reflect.DeepEqual(page.Data, want) {
			t.Errorf("page at the deleted cursor: got %v, want %v (the tasks after it)", page.ids(), taskIDs(want))
		}
		if deref(page.Pagination.PreviousCursor) != newest[0].ID || page.Pagination.NextCursor != nil || page.Pagination.Total != 6 {
			t.Errorf("pagination: got previous %s next %s total %d, want %s, null, 6",
				deref(page.Pagination.PreviousCursor), deref(page.Pagination.NextCursor), page.Pagination.Total, newest[0].ID)
		}
	})

	t.Run("also by title", func(t *testing.T) {
		// Live tasks by title: alpha, bravo, charlie, delta, echo, golf (foxtrot was deleted above).
		first := api.listTasks(t, api.accountantKey, A, "sort=title&order=asc&limit=2")
		if got := titles(first.Data); !reflect.DeepEqual(got, []string{"alpha", "bravo"}) {
			t.Fatalf("first page by title: got %v", got)
		}
		cursor := deref(first.Pagination.NextCursor) // charlie
		del(cursor)
		page := api.listTasks(t, api.accountantKey, A, "sort=title&order=asc&limit=2&cursor="+cursor)
		if got := titles(page.Data); !reflect.DeepEqual(got, []string{"delta", "echo"}) {
			t.Errorf("page at the deleted cursor: got %v, want [delta echo]", got)
		}
		if got := titles(api.listTasks(t, api.accountantKey, A, "sort=title&order=desc&limit=2&cursor="+cursor).Data); !reflect.DeepEqual(got, []string{"bravo", "alpha"}) {
			t.Errorf("the deleted cursor by title desc: got %v, want [bravo alpha]", got)
		}
	})

	t.Run("a subtask deleted with its parent", func(t *testing.T) {
		parent := create("parent", "")
		sub := create("sub", parent.ID)
		latest := create("latest", "")
		del(parent.ID)
		page := api.listTasks(t, api.accountantKey, A, "limit=2&cursor="+sub.ID)
		live := api.listTasks(t, api.accountantKey, A, "limit=100")
		if len(live.Data) < 3 || !reflect.DeepEqual(page.Data, live.Data[1:3]) {
			t.Errorf("page at the cascaded subtask: got %v, want %v", page.ids(), taskIDs(live.Data[1:3]))
		}
		if deref(page.Pagination.PreviousCursor) != latest.ID {
			t.Errorf("previousCursor: got %s, want %s", deref(page.Pagination.PreviousCursor), latest.ID)
		}
	})

	t.Run("an unknown cursor", func(t *testing.T) {
		for _, cursor := range []string{missingTaskID, strings.ToUpper(missingTaskID)} {
			wantError(t, list("cursor="+cursor), http.StatusBadRequest, "bad_request", "invalid_cursor", "the cursor names no item of this list")
		}
	})

	t.Run("a malformed cursor", func(t *testing.T) {
		for _, cursor := range []string{"x", "", "c-123456789", "c" + strings.Repeat("0", 64)} {
			wantIssues(t, list("cursor="+url.QueryEscape(cursor)), "ValidationError", []issue{cuidIssue("query", "cursor")})
		}
	})
}

// TestTaskTenantIsolation: a caller acting for client A never sees, changes
// or learns about the tasks of client B (another client of the same firm)
// or client C (a client of another firm), whichever key it holds.
func TestTaskTenantIsolation(t *testing.T) {
	api := newTestAPI(t)
	A := api.client.ID
	wsA := api.mustCreateWorkspace(A, "A's")
	taskA := api.createTask(t, api.accountantKey, A, map[string]any{"title": "A's task", "workspaceId": wsA})
	subA := api.createTask(t, api.accountantKey, A, map[string]any{"title": "A's subtask", "workspaceId": wsA, "parentId": taskA.ID})

	type victim struct {
		name, clientID, key    string
		ws, folder, file, gone string
		task, sub              taskBody
	}
	newVictim := func(name, clientID, key string) *victim {
		v := &victim{name: name, clientID: clientID, key: key}
		v.ws = api.mustCreateWorkspace(clientID, name)
		v.folder = api.mustCreateFolder(clientID, v.ws, "Inbox")
		v.file = api.mustCreateFile(clientID, v.ws, "")
		v.task = api.createTask(t, key, clientID, map[string]any{"title": name + "'s task", "workspaceId": v.ws, "text": "secret"})
		v.task = api.patchTask(t, key, clientID, v.task.ID, map[string]any{"destinationFolderId": v.folder, "assetFileIds": []string{v.file}})
		v.sub = api.createTask(t, key, clientID, map[string]any{"title": name + "'s subtask", "workspaceId": v.ws, "parentId": v.task.ID})
		gone := api.createTask(t, key, clientID, map[string]any{"title": name + "'s deleted task", "workspaceId": v.ws})
		if res := api.do(request{method: "DELETE", path: "/v1/tasks/" + gone.ID, key: key, clientID: clientID}); res.status != http.StatusOK {
			t.Fatalf("delete: got %d %s", res.status, res.body)
		}
		v.gone = gone.ID
		return v
	}
	victims := []*victim{
		newVictim("B", api.otherClient.ID, api.otherClientClientKey),
		newVictim("C", api.other.client.ID, api.other.clientKey),
	}
	type snapshot struct {
		tasks  map[string]taskBody
		assets []string
		files  []string
	}
	snap := func(t *testing.T, clientID, key string) snapshot {
		t.Helper()
		return snapshot{
			tasks:  api.allTasks(t, key, clientID),
			assets: api.sqlColumn(t, `SELECT task_id || ' ' || file_id FROM task_asset_files JOIN tasks ON tasks.id = task_id WHERE client_id = ? ORDER BY 1`, clientID),
			files:  api.sqlColumn(t, `SELECT id || ' ' || coalesce(task_id, '') FROM files WHERE client_id = ? ORDER BY 1`, clientID),
		}
	}
	before := map[string]snapshot{}
	for _, v := range victims {
		before[v.name] = snap(t, v.clientID, v.key)
	}
	beforeA := snap(t, A, api.accountantKey)

	principals := []struct{ name, key string }{
		{"client key of A", api.clientKey},
		{"accountant key naming A", api.accountantKey},
	}
	for _, p := range principals {
		as := func(method, path string, body any) *response {
			return api.do(request{method: method, path: path, key: p.key, clientID: A, body: body})
		}
		missingCursor := as("GET", "/v1/tasks?cursor="+missingTaskID, nil)
		missingPatch := as("PATCH", "/v1/tasks/"+missingTaskID, map[string]any{"title": "hijacked"})
		missingDelete := as("DELETE", "/v1/tasks/"+missingTaskID, nil)
		wantError(t, missingCursor, http.StatusBadRequest, "bad_request", "invalid_cursor", "the cursor names no item of this list")
		for _, v := range victims {
			t.Run(p.name+" against "+v.name, func(t *testing.T) {
				t.Run("the list shows only A's tasks", func(t *testing.T) {
					page := api.listTasks(t, p.key, A, "limit=100")
					if got, want := page.ids(), []string{subA.ID, taskA.ID}; !reflect.DeepEqual(got, want) || page.Pagination.Total != 2 {
						t.Errorf("list: got %v (total %d), want %v", got, page.Pagination.Total, want)
					}
				})
				t.Run("filters naming the other's records find nothing", func(t *testing.T) {
					for _, query := range []string{"workspaceId=" + v.ws, "parentId=" + v.task.ID, "parentId=" + v.sub.ID,
						"workspaceId=" + v.ws + "&parentId=" + v.task.ID, "workspaceId=" + wsA + "&parentId=" + v.task.ID,
						"workspaceId=" + v.ws + "&sort=title&order=asc", "parentId=" + v.task.ID + "&sort=dueDate"} {
						page := api.listTasks(t, p.key, A, query)
						if len(page.Data) != 0 || page.Pagination.Total != 0 || page.Pagination.NextCursor != nil || page.Pagination.PreviousCursor != nil {
							t.Errorf("%s: got %v (total %d), want nothing", query, page.ids(), page.Pagination.Total)
						}
					}
				})
				t.Run("the other's task as a cursor is unknown", func(t *testing.T) {
					for _, id := range []string{v.task.ID, v.sub.ID, v.gone} {
						for _, query := range []string{"cursor=" + id, "sort=title&cursor=" + id, "workspaceId=" + v.ws + "&cursor=" + id} {
							res := as("GET", "/v1/tasks?"+query, nil)
							wantError(t, res, http.StatusBadRequest, "bad_request", "invalid_cursor", "the cursor names no item of this list")
							sameBodyButID(t, res, id, missingCursor, missingTaskID)
						}
					}
				})
				t.Run("PATCH and DELETE of the other's task are not found", func(t *testing.T) {
					for _, id := range []string{v.task.ID, v.sub.ID} {
						res := as("PATCH", "/v1/tasks/"+id, map[string]any{"title": "hijacked"})
						wantError(t, res, http.StatusNotFound, "not_found", "not_found", "task "+id+" not found")
						sameBodyButID(t, res, id, missingPatch, missingTaskID)
						res = as("PATCH", "/v1/tasks/"+strings.ToUpper(id), map[string]any{"status": "DECLINED"})
						wantError(t, res, http.StatusNotFound, "not_found", "not_found", "task "+id+" not found")
						res = as("DELETE", "/v1/tasks/"+id, nil)
						wantError(t, res, http.StatusNotFound, "not_found", "not_found", "task "+id+" not found")
						sameBodyButID(t, res, id, missingDelete, missingTaskID)
					}
				})
				t.Run("nothing is created in the other's workspace or under its task", func(t *testing.T) {
					res := as("POST", "/v1/tasks", map[string]any{"title": "planted", "workspaceId": v.ws})
					wantError(t, res, http.StatusNotFound, "not_found", "not_found", "workspace "+v.ws+" not found")
					res = as("POST", "/v1/tasks", map[string]any{"title": "planted", "workspaceId": wsA, "parentId": v.task.ID})
					wantError(t, res, http.StatusNotFound, "not_found", "not_found", "parent task "+v.task.ID+" not found in the task's workspace")
					res = as("POST", "/v1/tasks", map[string]any{"title": "planted", "workspaceId": v.ws, "parentId": v.task.ID})
					wantError(t, res, http.StatusNotFound, "not_found", "not_found", "workspace "+v.ws+" not found")
				})
				t.Run("A's task cannot point at the other's records", func(t *testing.T) {
					res := as("PATCH", "/v1/tasks/"+taskA.ID, map[string]any{"title": "moved", "parentId": v.task.ID})
					wantError(t, res, http.StatusNotFound, "not_found", "not_found", "parent task "+v.task.ID+" not found in the task's workspace")
					res = as("PATCH", "/v1/tasks/"+taskA.ID, map[string]any{"title": "moved", "destinationFolderId": v.folder})
					wantError(t, res, http.StatusNotFound, "not_found", "not_found", "folder "+v.folder+" not found in the task's workspace")
					res = as("PATCH", "/v1/tasks/"+taskA.ID, map[string]any{"title": "moved", "assetFileIds": []string{v.file}})
					wantError(t, res, http.StatusNotFound, "not_found", "not_found", "file "+v.file+" not found")
				})
			})
		}
	}

	t.Run("a key cannot act for a client it does not reach", func(t *testing.T) {
		B, C := victims[0], victims[1]
		cases := []struct {
			name, key, clientID, taskID string
		}{
			{"client key of A naming B", api.clientKey, B.clientID, B.task.ID},
			{"client key of A naming C", api.clientKey, C.clientID, C.task.ID},
			{"client key of B naming A", api.otherClientClientKey, A, taskA.ID},
			{"accountant key of firm 2 naming A", api.other.accountantKey, A, taskA.ID},
			{"accountant key of firm 1 naming C", api.accountantKey, C.clientID, C.task.ID},
			{"client key of C naming A", api.other.clientKey, A, taskA.ID},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				for _, r := range []request{
					{method: "GET", path: "/v1/tasks"},
					{method: "GET", path: "/v1/tasks?cursor=" + c.taskID},
					{method: "POST", path: "/v1/tasks", body: map[string]any{"title": "planted", "workspaceId": wsA}},
					{method: "PATCH", path: "/v1/tasks/" + c.taskID, body: map[string]any{"title": "hijacked"}},
					{method: "DELETE", path: "/v1/tasks/" + c.taskID},
				} {
					r.key, r.clientID = c.key, c.clientID
					wantError(t, api.do(r), http.StatusNotFound, "not_found", "not_found", "client not found")
				}
			})
		}
	})

	t.Run("nothing of the others changed", func(t *testing.T) {
		for _, v := range victims {
			if after := snap(t, v.clientID, v.key); !reflect.DeepEqual(after, before[v.name]) {
				t.Errorf("client %s:\n got %+v\nwant %+v", v.name, after, before[v.name])
			}
		}
		if after := snap(t, A, api.accountantKey); !reflect.DeepEqual(after, beforeA) {
			t.Errorf("client A:\n got %+v\nwant %+v", after, beforeA)
		}
	})
}

func TestTaskBadInput(t *testing.T) {
	api := newTestAPI(t)
	A := api.client.ID
	ws := api.mustCreateWorkspace(A, "Main")
	otherWS := api.mustCreateWorkspace(A, "Other")
	file := api.mustCreateFile(A, ws, "")
	task := api.createTask(t, api.accountantKey, A, map[string]any{"title": "Original", "workspaceId": ws, "text": "original text"})
	task = api.patchTask(t, api.accountantKey, A, task.ID, map[string]any{"assetFileIds": []string{file}})
	post := func(body any) func() *response {
		return func() *response {
			return api.do(request{method: "POST", path: "/v1/tasks", key: api.accountantKey, clientID: A, body: body})
		}
	}
	patch := func(body any) func() *response {
		return func() *response {
			return api.do(request{method: "PATCH", path: "/v1/tasks/" + task.ID, key: api.accountantKey, clientID: A, body: body})
		}
	}
	issues := func(want ...issue) func(*testing.T, *response) {
		return func(t *testing.T, res *response) { wantIssues(t, res, "ValidationError", want) }
	}
	textTooBig := tooBigString(maxTaskText, "String must contain at most 100000 character(s)", "text")
	titleTooBig := tooBigString(maxTaskTitle, "String must contain at most 500 character(s)", "title")
	manyIDs := make([]string, 101)
	for i := range manyIDs {
		manyIDs[i] = db.NewID()
	}
	longID := "c" + strings.Repeat("a", 64)
	statusExpected := "'OPEN' | 'IN_PROGRESS' | 'IN_REVIEW' | 'ACCEPTED' | 'DECLINED'"

	cases := []struct {
		name  string
		send  func() *response
		check func(*testing.T, *response)
	}{
		{"title of 10,000 characters (POST)", post(map[string]any{"title": strings.Repeat("t", 10_000), "workspaceId": ws}), issues(titleTooBig)},
		{"title of 10,000 characters (PATCH)", patch(map[string]any{"title": strings.Repeat("t", 10_000)}), issues(titleTooBig)},
		{"text of 100,001 characters (POST)", post(map[string]any{"title": "x", "workspaceId": ws, "text": strings.Repeat("ü", maxTaskText+1)}), issues(textTooBig)},
		{"text of 100,001 characters (PATCH)", patch(map[string]any{"text": strings.Repeat("x", maxTaskText+1)}), issues(textTooBig)},
		{"numbers where strings are expected (POST)", post(`{"title":1,"workspaceId":2,"text":3,"dueDate":4,"parentId":5}`), issues(
			typeIssueAt("string", "number", "title"), typeIssueAt("string", "number", "workspaceId"), typeIssueAt("string", "number", "text"),
			typeIssueAt("string", "number", "dueDate"), typeIssueAt("string", "number", "parentId"))},
		{"numbers where strings are expected (PATCH)", patch(`{"title":1,"text":2.5,"dueDate":3,"status":4,"destinationFolderId":5,"assetFileIds":[6],"parentId":-7}`), issues(
			typeIssueAt("string", "number", "title"), typeIssueAt("string", "number", "text"), typeIssueAt("string", "number", "dueDate"),
			typeIssueAt("'OPEN' | 'IN_PROGRESS' | 'IN_REVIEW' | 'ACCEPTED' | 'DECLINED'", "number", "status"), typeIssueAt("string", "number", "destinationFolderId"),
			typeIssueAt("string", "number", "assetFileIds", 0), typeIssueAt("string", "number", "parentId"))},
		{"arrays and objects where values are expected", patch(`{"title":["x"],"text":{"a":1},"dueDate":[],"status":["OPEN"],"destinationFolderId":true,"assetFileIds":{"0":"cfile00001"},"parentId":{}}`), issues(
			typeIssueAt("string", "array", "title"), typeIssueAt("string", "object", "text"), typeIssueAt("string", "array", "dueDate"),
			typeIssueAt("'OPEN' | 'IN_PROGRESS' | 'IN_REVIEW' | 'ACCEPTED' | 'DECLINED'", "array", "status"), typeIssueAt("string", "boolean", "destinationFolderId"),
			typeIssueAt("array", "object", "assetFileIds"), typeIssueAt("string", "object", "parentId"))},
		{"an array where the body object is expected (POST)", post(`[{"title":"x","workspaceId":"` + ws + `"}]`), issues(typeIssueAt("object", "array"))},
		{"an array where the body object is expected (PATCH)", patch(`[{"title":"x"}]`), issues(typeIssueAt("object", "array"))},
		{"nulls where none is allowed (POST)", post(`{"title":null,"workspaceId":null,"text":null,"dueDate":null,"parentId":null}`), issues(
			typeIssueAt("string", "null", "title"), typeIssueAt("string", "null", "workspaceId"), typeIssueAt("string", "null", "text"),
			typeIssueAt("string", "null", "dueDate"), typeIssueAt("string", "null", "parentId"))},
		{"nulls where none is allowed (PATCH)", patch(`{"title":null,"text":null,"status":null,"assetFileIds":null}`), issues(
			typeIssueAt("string", "null", "title"), typeIssueAt("string", "null", "text"),
			issue{Code: "invalid_type", Path: []any{"status"}, Expected: statusExpected, Received: "null", Message: "Expected " + statusExpected + ", received null"},
			typeIssueAt("array", "null", "assetFileIds"))},
		{"101 asset files", patch(map[string]any{"title": "not applied", "assetFileIds": manyIDs}), issues(
			issue{Code: "too_big", Path: []any{"assetFileIds"}, Maximum: bound(100), Type: "array", Inclusive: &yes, Exact: &no, Message: "Array must contain at most 100 element(s)"})},
		{"asset file ids that are not cuids", patch(map[string]any{"title": "not applied", "assetFileIds": []any{file, "not a cuid", 7, "", longID}}), issues(
			cuidIssue("assetFileIds", 1), typeIssueAt("string", "number", "assetFileIds", 2), cuidIssue("assetFileIds", 3), cuidIssue("assetFileIds", 4))},
		{"ids longer than 64 characters", post(map[string]any{"title": "x", "workspaceId": longID, "parentId": "c" + strings.Repeat("1", 1000)}), issues(
			cuidIssue("workspaceId"), cuidIssue("parentId"))},
		{"date-times without an offset, or not dates", patch(map[string]any{"dueDate": "2026-12-01T10:00:00"}), issues(
			issue{Code: "invalid_string", Path: []any{"dueDate"}, Validation: "datetime", Message: "Invalid datetime"})},
		{"a date alone", post(map[string]any{"title": "x", "workspaceId": ws, "dueDate": "2026-12-01"}), issues(
			issue{Code: "invalid_string", Path: []any{"dueDate"}, Validation: "datetime", Message: "Invalid datetime"})},
		{"a day that does not exist", post(map[string]any{"title": "x", "workspaceId": ws, "dueDate": "2026-02-30T10:00:00Z"}), issues(
			issue{Code: "invalid_string", Path: []any{"dueDate"}, Validation: "datetime", Message: "Invalid datetime"})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := api.allTasks(t, api.accountantKey, A)
			api.clock.Advance(time.Minute)
			c.check(t, c.send())
			if after := api.allTasks(t, api.accountantKey, A); !reflect.DeepEqual(after, before) {
				t.Errorf("tasks after a refused request:\n got %v\nwant %v (unchanged)", after, before)
			}
			if got := api.sqlColumn(t, `SELECT file_id FROM task_asset_files WHERE task_id = ?`, task.ID); !reflect.DeepEqual(got, []string{file}) {
				t.Errorf("asset files: got %v, want [%s] (unchanged)", got, file)
			}
		})
	}

	t.Run("text of 100,000 characters is accepted", func(t *testing.T) {
		text := strings.Repeat("ü", maxTaskText)
		created := api.createTask(t, api.accountantKey, A, map[string]any{"title": "long", "workspaceId": ws, "text": text})
		if deref(created.Text) != text {
			t.Errorf("POST text: got %d characters, want 100000", len([]rune(deref(created.Text))))
		}
		updated := api.patchTask(t, api.accountantKey, A, task.ID, map[string]any{"text": strings.Repeat("y", maxTaskText)})
		if len(deref(updated.Text)) != maxTaskText {
			t.Errorf("PATCH text: got %d characters, want 100000", len(deref(updated.Text)))
		}
		task = updated
	})

	t.Run("unknown and read-only fields are ignored", func(t *testing.T) {
		api.clock.Advance(time.Minute)
		now := apiTime(api.clock.Now())
		res := post(map[string]any{"title": "x", "workspaceId": ws, "id": missingTaskID, "status": "DECLINED", "actorType": "USER",
			"createdById": "cuseruseruseruser0000001", "destinationFolderId": "cfolderfolderfolder00001", "createdAt": "2000-01-01T00:00:00Z",
			"assetFileIds": "junk", "extra": map[string]any{"nested": []int{1, 2}}})()
		got := decodeTask(t, res, http.StatusCreated)
		want := taskBody{ID: got.ID, Title: "x", Status: "OPEN", WorkspaceID: ws, ActorType: "API", CreatedAt: now, UpdatedAt: now}
		if !reflect.DeepEqual(got, want) || got.ID == missingTaskID {
			t.Errorf("POST with extra fields: got %v, want %v", got, want)
		}
		api.clock.Advance(time.Minute)
		res = patch(map[string]any{"id": missingTaskID, "workspaceId": otherWS, "createdAt": "2000-01-01T00:00:00Z",
			"actorType": "AI", "createdById": "cuseruseruseruser0000001", "unknown": 1})()
		updated := decodeTask(t, res, http.StatusOK)
		want = task
		want.UpdatedAt = apiTime(api.clock.Now())
		if !reflect.DeepEqual(updated, want) {
			t.Errorf("PATCH with only unknown fields:\n got %v\nwant %v", updated, want)
		}
	})
}

// Two PATCHes racing to make each task the parent of the other: the writes
// are serialised, so exactly one wins and no cycle is stored.
func TestUpdateTaskConcurrentParents(t *testing.T) {
	api := newTestAPI(t)
	A := api.client.ID
	ws := api.mustCreateWorkspace(A, "Main")
	for round := 0; round < 5; round++ {
		a := api.createTask(t, api.accountantKey, A, map[string]any{"title": "a", "workspaceId": ws})
		b := api.createTask(t, api.accountantKey, A, map[string]any{"title": "b", "workspaceId": ws})
		statuses := make(chan int, 2)
		for _, pair := range [][2]string{{a.ID, b.ID}, {b.ID, a.ID}} {
			go func() {
				res := api.do(request{method: "PATCH", path: "/v1/tasks/" + pair[0], key: api.accountantKey, clientID: A,
					body: map[string]any{"parentId": pair[1]}})
				statuses <- res.status
			}()
		}
		got := []int{<-statuses, <-statuses}
		sort.Ints(got)
		if !reflect.DeepEqual(got, []int{http.StatusOK, http.StatusUnprocessableEntity}) {
			t.Errorf("round %d: got statuses %v, want one 200 and one 422", round, got)
		}
		tasks := api.allTasks(t, api.accountantKey, A)
		if tasks[a.ID].ParentID != nil && tasks[b.ID].ParentID != nil {
			t.Errorf("round %d: a cycle was stored: %v, %v", round, tasks[a.ID], tasks[b.ID])
		}
	}
}

// A dueDate whose offset moves it past 9999-12-31 or before 0000-01-01 in
// UTC cannot be answered as YYYY-MM-DDTHH:MM:SSZ: it is refused like any other
// invalid date-time.
func TestDueDateOutsideFourDigitYears(t *testing.T) {
	api := newTestAPI(t)
	A := api.client.ID
	ws := api.mustCreateWorkspace(A, "Main")
	task := api.createTask(t, api.accountantKey, A, map[string]any{"title": "x", "workspaceId": ws})

	t.Run("the edges are accepted", func(t *testing.T) {
		for in, want := range map[string]string{"9999-12-31T23:59:59Z": "9999-12-31T23:59:59Z",
			"9999-12-31T23:59:59+01:00": "9999-12-31T22:59:59Z", "0001-01-01T00:00:00-01:00": "0001-01-01T01:00:00Z"} {
			got := api.patchTask(t, api.accountantKey, A, task.ID, map[string]any{"dueDate": in})
			if deref(got.DueDate) != want {
				t.Errorf("dueDate %s: got %s, want %s", in, deref(got.DueDate), want)
			}
		}
	})
	t.Run("a UTC year beyond 9999 or before 0000 is refused", func(t *testing.T) {
		invalid := []issue{{Code: "invalid_string", Path: []any{"dueDate"}, Validation: "datetime", Message: "Invalid datetime"}}
		for _, due := range []string{"9999-12-31T23:59:59-01:00", "0000-01-01T00:00:00+01:00"} {
			res := api.do(request{method: "POST", path: "/v1/tasks", key: api.accountantKey, clientID: A,
				body: map[string]any{"title": "x", "workspaceId": ws, "dueDate": due}})
			wantIssues(t, res, "ValidationError", invalid)
			res = api.do(request{method: "PATCH", path: "/v1/tasks/" + task.ID, key: api.accountantKey, clientID: A,
				body: map[string]any{"dueDate": due}})
			wantIssues(t, res, "ValidationError", invalid)
		}
		if total := api.listTasks(t, api.accountantKey, A, "").Pagination.Total; total != 1 {
			t.Errorf("tasks: got %d, want 1 (nothing created)", total)
		}
	})
}

// Tombstones are stamped and pruned by one clock: a store whose clock is far
// from the wall clock (the injected one here) keeps the tombstone of the task
// it just deleted, and the cursor naming that task goes on working.
func TestTaskTombstoneSurvivesClockSkew(t *testing.T) {
	api := newTestAPI(t)
	A := api.client.ID
	ws := api.mustCreateWorkspace(A, "Main")
	api.clock.Set(time.Now().UTC().Add(31 * 24 * time.Hour).Truncate(time.Second))
	var tasks []taskBody
	for i := 0; i < 4; i++ {
		api.clock.Advance(time.Second)
		tasks = append(tasks, api.createTask(t, api.accountantKey, A, map[string]any{"title": "t" + strconv.Itoa(i), "workspaceId": ws}))
	}
	first := api.listTasks(t, api.accountantKey, A, "limit=2")
	cursor := deref(first.Pagination.NextCursor)
	if cursor != tasks[1].ID {
		t.Fatalf("nextCursor: got %s, want %s", cursor, tasks[1].ID)
	}
	if res := api.do(request{method: "DELETE", path: "/v1/tasks/" + cursor, key: api.accountantKey, clientID: A}); res.status != http.StatusOK {
		t.Fatalf("delete: got %d %s", res.status, res.body)
	}
	res := api.do(request{method: "GET", path: "/v1/tasks?limit=2&cursor=" + cursor, key: api.accountantKey, clientID: A})
	if res.status != http.StatusOK {
		t.Fatalf("the page at a task deleted a moment ago: got %d %s, want 200 with the task after it", res.status, res.body)
	}
	var page taskPage
	res.decode(t, &page)
	if !reflect.DeepEqual(page.Data, tasks[:1]) {
		t.Errorf("page at the deleted cursor: got %v, want [%s]", page.ids(), tasks[0].ID)
	}
}

// A filter naming an id of the wrong kind (a workspace as parentId, a task
// as workspaceId) matches nothing, and its total says so.
func TestListTasksTotalOfWrongKindOfID(t *testing.T) {
	api := newTestAPI(t)
	A := api.client.ID
	ws := api.mustCreateWorkspace(A, "Main")
	parent := api.createTask(t, api.accountantKey, A, map[string]any{"title": "parent", "workspaceId": ws})
	for i := 0; i < 2; i++ {
		api.createTask(t, api.accountantKey, A, map[string]any{"title": "sub", "workspaceId": ws, "parentId": parent.ID})
	}
	for _, query := range []string{"parentId=" + ws, "workspaceId=" + parent.ID} {
		page := api.listTasks(t, api.accountantKey, A, query)
		if len(page.Data) != 0 || page.Pagination.Total != 0 {
			t.Errorf("%s: got %d items, total %d; want 0 items, total 0", query, len(page.Data), page.Pagination.Total)
		}
	}
}
