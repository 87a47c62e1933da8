package db_test

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"acctapi/db"
)

// ---- helpers ---------------------------------------------------------------

// raceEnabled reports whether the test binary was built with -race, which
// makes the pure-Go SQLite about 20 times slower: the property tests then
// walk smaller data sets, so that they stay within a few seconds.
var raceEnabled = func() bool {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" {
				return s.Value == "true"
			}
		}
	}
	return false
}()

func mustCreateWorkspace(tb testing.TB, d *db.DB, clientID, name string) string {
	tb.Helper()
	id, err := d.InsertTestWorkspace(context.Background(), clientID, name)
	if err != nil {
		tb.Fatalf("insert workspace %q: got %v, want nil", name, err)
	}
	return id
}

func mustCreateFolder(tb testing.TB, d *db.DB, clientID, workspaceID, name string) string {
	tb.Helper()
	id, err := d.InsertTestFolder(context.Background(), clientID, workspaceID, name)
	if err != nil {
		tb.Fatalf("insert folder %q: got %v, want nil", name, err)
	}
	return id
}

func mustCreateFile(tb testing.TB, d *db.DB, clientID, workspaceID string, taskID *string, name string) string {
	tb.Helper()
	id, err := d.InsertTestFile(context.Background(), clientID, workspaceID, taskID, name)
	if err != nil {
		tb.Fatalf("insert file %q: got %v, want nil", name, err)
	}
	return id
}

func mustCreateTask(tb testing.TB, d *db.DB, clientID string, in db.TaskCreate) *db.Task {
	tb.Helper()
	t, err := d.CreateTask(context.Background(), clientID, in)
	if err != nil {
		tb.Fatalf("CreateTask(%+v): got %v, want nil", in, err)
	}
	return t
}

func mustUpdateTask(tb testing.TB, d *db.DB, clientID, id string, u db.TaskUpdate) *db.Task {
	tb.Helper()
	t, err := d.UpdateTask(context.Background(), clientID, id, u)
	if err != nil {
		tb.Fatalf("UpdateTask(%s): got %v, want nil", id, err)
	}
	return t
}

func mustListTasks(tb testing.TB, d *db.DB, clientID string, f db.TaskFilter, req db.PageRequest) *db.Page[*db.Task] {
	tb.Helper()
	p, err := d.ListTasks(context.Background(), clientID, f, req)
	if err != nil {
		tb.Fatalf("ListTasks(%+v, %+v): got %v, want nil", f, req, err)
	}
	return p
}

// mustFindTask reads a live task back through the list: a cursor names the
// first item of its page.
func mustFindTask(tb testing.TB, d *db.DB, clientID, id string) *db.Task {
	tb.Helper()
	p := mustListTasks(tb, d, clientID, db.TaskFilter{}, db.PageRequest{Limit: 1, Cursor: id, Sort: "createdAt"})
	if len(p.Items) == 0 || p.Items[0].ID != id {
		tb.Fatalf("task %s: not found in the list (got %v)", id, taskIDs(p.Items))
	}
	return p.Items[0]
}

// taskExists looks a task up on a raw connection.
func taskExists(tb testing.TB, raw *sql.DB, id string) bool {
	tb.Helper()
	return count(tb, raw, `SELECT count(*) FROM tasks WHERE id = ?`, id) == 1
}

// assetFiles returns the ids of the files attached to the task, sorted.
func assetFiles(tb testing.TB, raw *sql.DB, taskID string) []string {
	tb.Helper()
	rows, err := raw.Query(`SELECT file_id FROM task_asset_files WHERE task_id = ? ORDER BY file_id`, taskID)
	if err != nil {
		tb.Fatalf("query asset files: got %v, want nil", err)
	}
	defer rows.Close()
	ids := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			tb.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return ids
}

func sorted(ids ...string) []string {
	s := slices.Clone(ids)
	slices.Sort(s)
	return s
}

func taskIDs(tasks []*db.Task) []string {
	ids := make([]string, len(tasks))
	for i, t := range tasks {
		ids[i] = t.ID
	}
	return ids
}

// assertError fails unless err is an *db.Error with the code naming the
// input field (in the store's names).
func assertError(tb testing.TB, err error, code string, path ...any) {
	tb.Helper()
	assertCode(tb, err, code)
	var e *db.Error
	errors.As(err, &e)
	if path == nil {
		path = []any{}
	}
	got := e.Field
	if got == nil {
		got = []any{}
	}
	if !reflect.DeepEqual(got, path) {
		tb.Fatalf("error field: got %#v, want %#v (error %v)", e.Field, path, err)
	}
}

func strp(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func timep(p *time.Time) string {
	if p == nil {
		return "<nil>"
	}
	return p.Format(time.RFC3339Nano)
}

func val[T any](v T) db.Update[T] { return db.Update[T]{Set: true, Value: &v} }

func null[T any]() db.Update[T] { return db.Update[T]{Set: true} }

// ---- CRUD ----------------------------------------------------------------

func TestTaskCRUD(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	d := mustOpenDBWith(t, db.Options{Now: c.Now})
	raw := mustOpenRaw(t, d.Path())
	firm := mustCreateFirm(t, d, "Firm")
	client := mustCreateClient(t, d, firm.ID, "Client A")
	other := mustCreateClient(t, d, firm.ID, "Client B")
	ws := mustCreateWorkspace(t, d, client.ID, "WS 1")
	ws2 := mustCreateWorkspace(t, d, client.ID, "WS 2")
	otherWS := mustCreateWorkspace(t, d, other.ID, "Other WS")
	otherTask := mustCreateTask(t, d, other.ID, db.TaskCreate{WorkspaceID: otherWS, Title: "theirs"})

	t.Run("create defaults", func(t *testing.T) {
		c.Advance(1500 * time.Millisecond) // 10:00:01.5
		due := time.Date(2026, 4, 1, 14, 30, 15, 999_000_000, time.FixedZone("CEST", 2*3600))
		text := "some text"
		task, err := d.CreateTask(ctx, client.ID, db.TaskCreate{WorkspaceID: ws, Title: "Prepare VAT", Text: &text, DueDate: &due})
		if err != nil {
			t.Fatalf("CreateTask: got %v, want nil", err)
		}
		wantTime := time.Date(2026, 3, 1, 10, 0, 1, 0, time.UTC)
		wantDue := time.Date(2026, 4, 1, 12, 30, 15, 0, time.UTC)
		for name, got := range map[string]*db.Task{"returned": task, "stored": mustFindTask(t, d, client.ID, task.ID)} {
			if got.ID == "" || got.ClientID != client.ID || got.WorkspaceID != ws || got.Title != "Prepare VAT" || strp(got.Text) != text {
				t.Errorf("%s: got %+v, want id, client %s, workspace %s, title and text as given", name, got, client.ID, ws)
			}
			if got.Status != "OPEN" || got.ActorType != db.ActorAPI || got.CreatedByID != nil || got.ParentID != nil || got.DestinationFolderID != nil {
				t.Errorf("%s defaults: got status %v actor %v createdBy %v parent %v folder %v, want OPEN API <nil> <nil> <nil>",
					name, got.Status, got.ActorType, strp(got.CreatedByID), strp(got.ParentID), strp(got.DestinationFolderID))
			}
			if !got.CreatedAt.Equal(wantTime) || !got.UpdatedAt.Equal(wantTime) || got.CreatedAt.Location() != time.UTC {
				t.Errorf("%s times: got %v/%v, want %v (the injected clock, truncated to seconds, UTC)", name, got.CreatedAt, got.UpdatedAt, wantTime)
			}
			if got.DueDate == nil || !got.DueDate.Equal(wantDue) || got.DueDate.Location() != time.UTC {
				t.Errorf("%s dueDate: got %v, want %v (truncated, UTC)", name, timep(got.DueDate), wantDue)
			}
		}
		bare := mustCreateTask(t, d, client.ID, db.TaskCreate{WorkspaceID: ws, Title: "bare"})
		if bare.Text != nil || bare.DueDate != nil {
			t.Errorf("bare task: got text %v due %v, want nil, nil", strp(bare.Text), timep(bare.DueDate))
		}
		if got := mustFindTask(t, d, client.ID, bare.ID); got.Text != nil || got.DueDate != nil {
			t.Errorf("stored bare task: got text %v due %v, want nil, nil", strp(got.Text), timep(got.DueDate))
		}
	})

	t.Run("create refs", func(t *testing.T) {
		_, err := d.CreateTask(ctx, client.ID, db.TaskCreate{WorkspaceID: otherWS, Title: "x"})
		assertError(t, err, db.ENOTFOUND, "WorkspaceID")
		_, err = d.CreateTask(ctx, client.ID, db.TaskCreate{WorkspaceID: db.NewID(), Title: "x"})
		assertError(t, err, db.ENOTFOUND, "WorkspaceID")

		parent := mustCreateTask(t, d, client.ID, db.TaskCreate{WorkspaceID: ws, Title: "parent"})
		_, err = d.CreateTask(ctx, client.ID, db.TaskCreate{WorkspaceID: ws2, Title: "x", ParentID: &parent.ID})
		assertError(t, err, db.ENOTFOUND, "ParentID")
		_, err = d.CreateTask(ctx, client.ID, db.TaskCreate{WorkspaceID: ws, Title: "x", ParentID: &otherTask.ID})
		assertError(t, err, db.ENOTFOUND, "ParentID")
		if n := count(t, raw, `SELECT count(*) FROM tasks WHERE title = 'x'`); n != 0 {
			t.Errorf("tasks after refused creates: got %d, want 0", n)
		}

		child := mustCreateTask(t, d, client.ID, db.TaskCreate{WorkspaceID: ws, Title: "child", ParentID: &parent.ID, ActorType: db.ActorAI})
		got := mustFindTask(t, d, client.ID, child.ID)
		if strp(got.ParentID) != parent.ID || got.ActorType != db.ActorAI {
			t.Errorf("child: got parent %v actor %v, want %v %v", strp(got.ParentID), got.ActorType, parent.ID, db.ActorAI)
		}
	})

	t.Run("update fields", func(t *testing.T) {
		task := mustCreateTask(t, d, client.ID, db.TaskCreate{WorkspaceID: ws, Title: "original"})
		created := task.CreatedAt
		parent := mustCreateTask(t, d, client.ID, db.TaskCreate{WorkspaceID: ws, Title: "new parent"})
		folder := mustCreateFolder(t, d, client.ID, ws, "Inbox")
		otherFolder := mustCreateFolder(t, d, client.ID, ws2, "Elsewhere")
		due := time.Date(2026, 5, 1, 8, 0, 0, 123, time.UTC)
		steps := []struct {
			name  string
			u     db.TaskUpdate
			check func(*db.Task) bool
		}{
			{"title", db.TaskUpdate{Title: val("renamed")}, func(g *db.Task) bool { return g.Title == "renamed" }},
			{"text", db.TaskUpdate{Text: val("body")}, func(g *db.Task) bool { return strp(g.Text) == "body" }},
			{"text cleared", db.TaskUpdate{Text: null[string]()}, func(g *db.Task) bool { return g.Text == nil }},
			{"status", db.TaskUpdate{Status: val("IN_REVIEW")}, func(g *db.Task) bool { return g.Status == "IN_REVIEW" }},
			{"due", db.TaskUpdate{DueDate: val(due)}, func(g *db.Task) bool { return g.DueDate != nil && g.DueDate.Equal(due.Truncate(time.Second)) }},
			{"due cleared", db.TaskUpdate{DueDate: null[time.Time]()}, func(g *db.Task) bool { return g.DueDate == nil }},
			{"folder", db.TaskUpdate{DestinationFolderID: val(folder)}, func(g *db.Task) bool { return strp(g.DestinationFolderID) == folder }},
			{"folder cleared", db.TaskUpdate{DestinationFolderID: null[string]()}, func(g *db.Task) bool { return g.DestinationFolderID == nil }},
			{"parent", db.TaskUpdate{ParentID: val(parent.ID)}, func(g *db.Task) bool { return strp(g.ParentID) == parent.ID }},
			{"parent cleared", db.TaskUpdate{ParentID: null[string]()}, func(g *db.Task) bool { return g.ParentID == nil }},
			{"status again", db.TaskUpdate{Status: val("DECLINED")}, func(g *db.Task) bool { return g.Status == "DECLINED" }},
			{"nothing", db.TaskUpdate{}, func(g *db.Task) bool {
				return g.Title == "renamed" && g.Status == "DECLINED" && g.Text == nil && g.DueDate == nil && g.ParentID == nil
			}},
		}
		for _, s := range steps {
			c.Advance(1100 * time.Millisecond)
			wantUpdated := c.Now().Truncate(time.Second)
			got, err := d.UpdateTask(ctx, client.ID, task.ID, s.u)
			if err != nil {
				t.Fatalf("UpdateTask %s: got %v, want nil", s.name, err)
			}
			stored := mustFindTask(t, d, client.ID, task.ID)
			for which, g := range map[string]*db.Task{"returned": got, "stored": stored} {
				if !s.check(g) {
					t.Errorf("UpdateTask %s (%s): got %+v", s.name, which, g)
				}
				if !g.UpdatedAt.Equal(wantUpdated) || !g.CreatedAt.Equal(created) {
					t.Errorf("UpdateTask %s (%s): got created %v updated %v, want %v %v", s.name, which, g.CreatedAt, g.UpdatedAt, created, wantUpdated)
				}
			}
		}

		before := mustFindTask(t, d, client.ID, task.ID)
		_, err := d.UpdateTask(ctx, client.ID, task.ID, db.TaskUpdate{Title: val("nope"), DestinationFolderID: val(otherFolder)})
		assertError(t, err, db.ENOTFOUND, "DestinationFolderID")
		_, err = d.UpdateTask(ctx, client.ID, task.ID, db.TaskUpdate{Title: val("nope"), Status: val("DONE")})
		assertError(t, err, db.EINVALID, "Status")
		_, err = d.UpdateTask(ctx, client.ID, task.ID, db.TaskUpdate{Title: val("nope"), ParentID: val(otherTask.ID)})
		assertError(t, err, db.ENOTFOUND, "ParentID")
		inWS2 := mustCreateTask(t, d, client.ID, db.TaskCreate{WorkspaceID: ws2, Title: "ws2"})
		_, err = d.UpdateTask(ctx, client.ID, task.ID, db.TaskUpdate{Title: val("nope"), ParentID: val(inWS2.ID)})
		assertError(t, err, db.ENOTFOUND, "ParentID")
		_, err = d.UpdateTask(ctx, client.ID, otherTask.ID, db.TaskUpdate{Title: val("nope")})
		assertCode(t, err, db.ENOTFOUND)
		_, err = d.UpdateTask(ctx, client.ID, db.NewID(), db.TaskUpdate{Title: val("nope")})
		assertCode(t, err, db.ENOTFOUND)
		if after := mustFindTask(t, d, client.ID, task.ID); !reflect.DeepEqual(after, before) {
			t.Errorf("task after refused updates: got %+v, want unchanged %+v", after, before)
		}
		if n := count(t, raw, `SELECT count(*) FROM tasks WHERE title = 'nope'`); n != 0 {
			t.Errorf("tasks titled nope: got %d, want 0", n)
		}
	})

	t.Run("cycles", func(t *testing.T) {
		root := mustCreateTask(t, d, client.ID, db.TaskCreate{WorkspaceID: ws, Title: "root"})
		child := mustCreateTask(t, d, client.ID, db.TaskCreate{WorkspaceID: ws, Title: "child", ParentID: &root.ID})
		grandchild := mustCreateTask(t, d, client.ID, db.TaskCreate{WorkspaceID: ws, Title: "grandchild", ParentID: &child.ID})
		for _, tc := range []struct{ name, task, parent string }{
			{"self", root.ID, root.ID},
			{"child", root.ID, child.ID},
			{"grandchild", root.ID, grandchild.ID},
			{"self, not a root", child.ID, child.ID},
			{"descendant, not a root", child.ID, grandchild.ID},
		} {
			_, err := d.UpdateTask(ctx, client.ID, tc.task, db.TaskUpdate{ParentID: val(tc.parent), Title: val("cycled")})
			assertError(t, err, db.EINVALID, "ParentID")
		}
		for id, want := range map[string]string{root.ID: "<nil>", child.ID: root.ID, grandchild.ID: child.ID} {
			got := mustFindTask(t, d, client.ID, id)
			if strp(got.ParentID) != want || got.Title == "cycled" {
				t.Errorf("task %s after refused cycles: got parent %v title %q, want parent %v and its title", got.Title, strp(got.ParentID), got.Title, want)
			}
		}
		// Moving a subtree under a sibling, and back to the top, is fine.
		sibling := mustCreateTask(t, d, client.ID, db.TaskCreate{WorkspaceID: ws, Title: "sibling"})
		mustUpdateTask(t, d, client.ID, child.ID, db.TaskUpdate{ParentID: val(sibling.ID)})
		mustUpdateTask(t, d, client.ID, root.ID, db.TaskUpdate{ParentID: val(grandchild.ID)}) // root no longer above grandchild
		mustUpdateTask(t, d, client.ID, root.ID, db.TaskUpdate{ParentID: null[string]()})
	})

	t.Run("asset files", func(t *testing.T) {
		task := mustCreateTask(t, d, client.ID, db.TaskCreate{WorkspaceID: ws, Title: "with assets"})
		f1 := mustCreateFile(t, d, client.ID, ws, nil, "f1.pdf")
		f2 := mustCreateFile(t, d, client.ID, ws, nil, "f2.pdf")
		f3 := mustCreateFile(t, d, client.ID, ws, nil, "f3.pdf")
		inWS2 := mustCreateFile(t, d, client.ID, ws2, nil, "ws2.pdf")
		ofOther := mustCreateFile(t, d, other.ID, otherWS, nil, "other.pdf")

		mustUpdateTask(t, d, client.ID, task.ID, db.TaskUpdate{AssetFileIDs: val([]string{f1, f2})})
		if got, want := assetFiles(t, raw, task.ID), sorted(f1, f2); !slices.Equal(got, want) {
			t.Errorf("assets: got %v, want %v", got, want)
		}
		mustUpdateTask(t, d, client.ID, task.ID, db.TaskUpdate{AssetFileIDs: val([]string{f3, f2})})
		if got, want := assetFiles(t, raw, task.ID), sorted(f2, f3); !slices.Equal(got, want) {
			t.Errorf("assets after replace: got %v, want %v", got, want)
		}
		mustUpdateTask(t, d, client.ID, task.ID, db.TaskUpdate{Title: val("untouched assets")})
		if got, want := assetFiles(t, raw, task.ID), sorted(f2, f3); !slices.Equal(got, want) {
			t.Errorf("assets after an update without them: got %v, want %v", got, want)
		}

		before := mustFindTask(t, d, client.ID, task.ID)
		c.Advance(time.Hour)
		for _, tc := range []struct {
			name  string
			ids   []string
			index int
		}{
			{"file of another workspace", []string{f1, inWS2}, 1},
			{"file of another client", []string{ofOther, f1}, 0},
			{"unknown file", []string{f1, f2, db.NewID()}, 2},
		} {
			folder := mustCreateFolder(t, d, client.ID, ws, "folder for "+tc.name)
			_, err := d.UpdateTask(ctx, client.ID, task.ID, db.TaskUpdate{
				Title: val("changed"), Status: val("ACCEPTED"), DueDate: val(c.Now()), Text: val("changed"),
				DestinationFolderID: val(folder), ParentID: val(mustCreateTask(t, d, client.ID, db.TaskCreate{WorkspaceID: ws, Title: "p"}).ID),
				AssetFileIDs: val(tc.ids),
			})
			assertError(t, err, db.ENOTFOUND, "AssetFileIDs", tc.index)
			if got, want := assetFiles(t, raw, task.ID), sorted(f2, f3); !slices.Equal(got, want) {
				t.Errorf("%s: assets after the refused update: got %v, want %v", tc.name, got, want)
			}
			if after := mustFindTask(t, d, client.ID, task.ID); !reflect.DeepEqual(after, before) {
				t.Errorf("%s: task after the refused update: got %+v, want unchanged %+v", tc.name, after, before)
			}
		}

		mustUpdateTask(t, d, client.ID, task.ID, db.TaskUpdate{AssetFileIDs: val([]string{})})
		if got := assetFiles(t, raw, task.ID); len(got) != 0 {
			t.Errorf("assets after setting []: got %v, want none", got)
		}
		if n := count(t, raw, `SELECT count(*) FROM files WHERE id IN (?, ?, ?)`, f1, f2, f3); n != 3 {
			t.Errorf("files after detaching them: got %d, want 3", n)
		}
	})

	t.Run("delete", func(t *testing.T) {
		c.Advance(time.Second)
		parent := mustCreateTask(t, d, client.ID, db.TaskCreate{WorkspaceID: ws, Title: "doomed", Text: ptr("t")})
		child := mustCreateTask(t, d, client.ID, db.TaskCreate{WorkspaceID: ws, Title: "doomed child", ParentID: &parent.ID})
		grandchild := mustCreateTask(t, d, client.ID, db.TaskCreate{WorkspaceID: ws, Title: "doomed grandchild", ParentID: &child.ID})
		child2 := mustCreateTask(t, d, client.ID, db.TaskCreate{WorkspaceID: ws, Title: "doomed child 2", ParentID: &parent.ID})
		bystander := mustCreateTask(t, d, client.ID, db.TaskCreate{WorkspaceID: ws, Title: "bystander"})
		files := []string{
			mustCreateFile(t, d, client.ID, ws, &parent.ID, "p.pdf"),
			mustCreateFile(t, d, client.ID, ws, &child.ID, "c.pdf"),
			mustCreateFile(t, d, client.ID, ws, &grandchild.ID, "g.pdf"),
		}
		kept := mustCreateFile(t, d, client.ID, ws, &bystander.ID, "b.pdf")
		mustUpdateTask(t, d, client.ID, child.ID, db.TaskUpdate{AssetFileIDs: val([]string{kept, files[0]})})
		want := mustFindTask(t, d, client.ID, parent.ID)

		got, err := d.DeleteTask(ctx, client.ID, parent.ID)
		if err != nil {
			t.Fatalf("DeleteTask: got %v, want nil", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("DeleteTask: got %+v, want the task as it was %+v", got, want)
		}
		for _, id := range []string{parent.ID, child.ID, grandchild.ID, child2.ID} {
			if taskExists(t, raw, id) {
				t.Errorf("task %s after deleting its ancestor: exists, want deleted", id)
			}
		}
		if !taskExists(t, raw, bystander.ID) {
			t.Errorf("bystander task: deleted, want kept")
		}
		for _, f := range files {
			if n := count(t, raw, `SELECT count(*) FROM files WHERE id = ? AND task_id IS NULL`, f); n != 1 {
				t.Errorf("file %s of a deleted task: got %d rows with task_id NULL, want 1 (kept, unlinked)", f, n)
			}
		}
		if n := count(t, raw, `SELECT count(*) FROM files WHERE id = ? AND task_id = ?`, kept, bystander.ID); n != 1 {
			t.Errorf("bystander's file: got %d linked rows, want 1", n)
		}
		if n := count(t, raw, `SELECT count(*) FROM task_asset_files WHERE task_id = ?`, child.ID); n != 0 {
			t.Errorf("asset links of the deleted child: got %d, want 0", n)
		}

		_, err = d.DeleteTask(ctx, client.ID, parent.ID)
		assertCode(t, err, db.ENOTFOUND)
		_, err = d.DeleteTask(ctx, client.ID, child.ID)
		assertCode(t, err, db.ENOTFOUND)
		_, err = d.DeleteTask(ctx, client.ID, otherTask.ID)
		assertCode(t, err, db.ENOTFOUND)
		if !taskExists(t, raw, otherTask.ID) {
			t.Errorf("another client's task after client A tried to delete it: deleted, want kept")
		}
	})
}

// Inputs the HTTP layer never sends (it refuses null for these fields and
// removes duplicate ids) but the store's API allows: a Set AssetFileIDs with a
// nil Value detaches every file, a Set Title or Status with a nil Value is
// refused, and duplicate AssetFileIDs attach each file once.
func TestUpdateTaskEdgeInputs(t *testing.T) {
	ctx := context.Background()
	d := mustOpenDB(t)
	raw := mustOpenRaw(t, d.Path())
	firm := mustCreateFirm(t, d, "Firm")
	client := mustCreateClient(t, d, firm.ID, "Client")
	ws := mustCreateWorkspace(t, d, client.ID, "WS")
	task := mustCreateTask(t, d, client.ID, db.TaskCreate{WorkspaceID: ws, Title: "edge"})
	f1 := mustCreateFile(t, d, client.ID, ws, nil, "f1.pdf")
	f2 := mustCreateFile(t, d, client.ID, ws, nil, "f2.pdf")

	// update runs UpdateTask and turns a panic into an error.
	update := func(u db.TaskUpdate) (got *db.Task, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return d.UpdateTask(ctx, client.ID, task.ID, u)
	}

	t.Run("duplicate asset ids", func(t *testing.T) {
		_, err := update(db.TaskUpdate{AssetFileIDs: val([]string{f1, f2, f1})})
		if err != nil {
			t.Errorf("UpdateTask with duplicate assetFileIds: got %v, want nil and the set {f1, f2} attached", err)
		} else if got, want := assetFiles(t, raw, task.ID), sorted(f1, f2); !slices.Equal(got, want) {
			t.Errorf("assets: got %v, want %v", got, want)
		}
	})

	t.Run("asset ids set to nil", func(t *testing.T) {
		mustUpdateTask(t, d, client.ID, task.ID, db.TaskUpdate{AssetFileIDs: val([]string{f1})})
		_, err := update(db.TaskUpdate{AssetFileIDs: db.Update[[]string]{Set: true}})
		if err != nil {
			t.Errorf("UpdateTask with AssetFileIDs{Set: true, Value: nil}: got %v, want nil and no files attached", err)
		} else if got := assetFiles(t, raw, task.ID); len(got) != 0 {
			t.Errorf("assets after clearing: got %v, want none", got)
		}
	})

	t.Run("title and status set to nil", func(t *testing.T) {
		before := mustFindTask(t, d, client.ID, task.ID)
		for name, u := range map[string]db.TaskUpdate{
			"title":  {Title: db.Update[string]{Set: true}},
			"status": {Status: db.Update[string]{Set: true}},
		} {
			_, err := update(u)
			if db.ErrorCode(err) != db.EINVALID {
				t.Errorf("UpdateTask clearing %s (not nullable): got %v, want a *db.Error with code %s", name, err, db.EINVALID)
			}
			if after := mustFindTask(t, d, client.ID, task.ID); !reflect.DeepEqual(after, before) {
				t.Errorf("task after clearing %s was refused: got %+v, want unchanged %+v", name, after, before)
			}
		}
	})
}

// ---- counts ----------------------------------------------------------------

// countModel is what the test knows of the tasks: their tenant and tree.
type countModel struct {
	tasks map[string]*countTask
}

type countTask struct {
	id, client, ws, parent string
}

func (m *countModel) children(id string) []string {
	var ids []string
	for _, t := range m.tasks {
		if t.parent == id {
			ids = append(ids, t.id)
		}
	}
	slices.Sort(ids)
	return ids
}

// subtree returns id and its descendants.
func (m *countModel) subtree(id string) []string {
	ids := []string{id}
	for i := 0; i < len(ids); i++ {
		ids = append(ids, m.children(ids[i])...)
	}
	return ids
}

// counts maps client and task_counts scope to the number of tasks in it: the
// empty scope for the client, "w:" and the workspace id, "p:" and the parent id.
func (m *countModel) counts() map[[2]string]int {
	n := map[[2]string]int{}
	for _, t := range m.tasks {
		n[[2]string{t.client, ""}]++
		n[[2]string{t.client, "w:" + t.ws}]++
		if t.parent != "" {
			n[[2]string{t.client, "p:" + t.parent}]++
		}
	}
	return n
}

func (m *countModel) ids() []string {
	ids := make([]string, 0, len(m.tasks))
	for id := range m.tasks {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func TestTaskCounts(t *testing.T) {
	seeds := []uint64{1, 2, 3}
	if raceEnabled {
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) { testTaskCounts(t, seed) })
	}
}

func testTaskCounts(t *testing.T, seed uint64) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 42))
	d := mustOpenDB(t)
	raw := mustOpenRaw(t, d.Path())
	firm := mustCreateFirm(t, d, "Firm")
	clientA := mustCreateClient(t, d, firm.ID, "A")
	clientB := mustCreateClient(t, d, firm.ID, "B")
	workspaces := map[string][]string{
		clientA.ID: {mustCreateWorkspace(t, d, clientA.ID, "A1"), mustCreateWorkspace(t, d, clientA.ID, "A2")},
		clientB.ID: {mustCreateWorkspace(t, d, clientB.ID, "B1")},
	}
	clients := []string{clientA.ID, clientB.ID}
	m := &countModel{tasks: map[string]*countTask{}}
	var deleted []string

	pick := func(filter func(*countTask) bool) *countTask {
		var cands []*countTask
		for _, id := range m.ids() {
			if t := m.tasks[id]; filter(t) {
				cands = append(cands, t)
			}
		}
		if len(cands) == 0 {
			return nil
		}
		return cands[rng.IntN(len(cands))]
	}

	check := func(step int) {
		t.Helper()
		want := m.counts()
		// The counter table against the model, both ways.
		rows, err := raw.Query(`SELECT client_id, scope, n FROM task_counts`)
		if err != nil {
			t.Fatalf("query task_counts: %v", err)
		}
		stored := map[[2]string]int{}
		for rows.Next() {
			var k [2]string
			var n int
			if err := rows.Scan(&k[0], &k[1], &n); err != nil {
				t.Fatal(err)
			}
			stored[k] = n
		}
		rows.Close()
		for k, n := range stored {
			if n != want[k] {
				t.Fatalf("step %d: task_counts(client %s, scope %q): got %d, want %d", step, k[0], k[1], n, want[k])
			}
		}
		for k, n := range want {
			if stored[k] != n {
				t.Fatalf("step %d: task_counts(client %s, scope %q): got %d (row missing?), want %d", step, k[0], k[1], stored[k], n)
			}
		}
		// The counter table against COUNT(*) of the real rows.
		if n := count(t, raw, `SELECT count(*) FROM (
			SELECT client_id, '' AS scope, count(*) AS n FROM tasks GROUP BY client_id
			UNION ALL SELECT client_id, 'w:' || workspace_id, count(*) FROM tasks GROUP BY client_id, workspace_id
			UNION ALL SELECT client_id, 'p:' || parent_id, count(*) FROM tasks WHERE parent_id IS NOT NULL GROUP BY client_id, parent_id
		) AS r FULL JOIN task_counts AS tc ON tc.client_id = r.client_id AND tc.scope = r.scope
		WHERE coalesce(r.n, 0) <> coalesce(tc.n, 0)`); n != 0 {
			t.Fatalf("step %d: %d task_counts rows disagree with COUNT(*) over tasks", step, n)
		}
		// No counter outlives its task (a deleted parent's row goes with it).
		if n := count(t, raw, `SELECT count(*) FROM task_counts AS tc WHERE scope LIKE 'p:%'
			AND NOT EXISTS (SELECT 1 FROM tasks WHERE id = substr(tc.scope, 3))`); n != 0 {
			t.Fatalf("step %d: %d task_counts rows of deleted parents, want 0", step, n)
		}
		if n := count(t, raw, `SELECT count(*) FROM tasks`); n != len(m.tasks) {
			t.Fatalf("step %d: tasks: got %d, want %d", step, n, len(m.tasks))
		}
	}

	checkLists := func(step int) {
		t.Helper()
		want := m.counts()
		list := func(client string, f db.TaskFilter, wantN int) {
			t.Helper()
			p := mustListTasks(t, d, client, f, db.PageRequest{Limit: 100, Sort: "createdAt"})
			if p.Total != wantN {
				t.Fatalf("step %d: ListTasks(%s, %+v).Total: got %d, want %d", step, client, f, p.Total, wantN)
			}
			if wantN <= 100 && len(p.Items) != wantN {
				t.Fatalf("step %d: ListTasks(%s, %+v) items: got %d, want %d", step, client, f, len(p.Items), wantN)
			}
		}
		for _, cl := range clients {
			list(cl, db.TaskFilter{}, want[[2]string{cl, ""}])
			for _, ws := range workspaces[cl] {
				list(cl, db.TaskFilter{WorkspaceID: ws}, want[[2]string{cl, "w:" + ws}])
			}
		}
		// Every parent, and a few tasks without subtasks.
		childless := 0
		for _, id := range m.ids() {
			task := m.tasks[id]
			n := want[[2]string{task.client, "p:" + id}]
			if n == 0 {
				if childless++; childless > 5 {
					continue
				}
			}
			list(task.client, db.TaskFilter{ParentID: id}, n)
			list(task.client, db.TaskFilter{ParentID: id, WorkspaceID: task.ws}, n)
			for _, ws := range workspaces[task.client] {
				if ws != task.ws {
					list(task.client, db.TaskFilter{ParentID: id, WorkspaceID: ws}, 0)
				}
			}
		}
		for _, id := range deleted[max(0, len(deleted)-10):] {
			for _, cl := range clients {
				list(cl, db.TaskFilter{ParentID: id}, 0)
			}
		}
	}

	const steps = 150
	for step := range steps {
		switch op := rng.IntN(10); {
		case op < 5 || len(m.tasks) < 5: // create
			client := clients[0]
			if rng.IntN(4) == 0 {
				client = clients[1]
			}
			ws := workspaces[client][rng.IntN(len(workspaces[client]))]
			in := db.TaskCreate{WorkspaceID: ws, Title: fmt.Sprintf("task %d", step)}
			parent := ""
			if rng.IntN(2) == 0 {
				if p := pick(func(t *countTask) bool { return t.ws == ws }); p != nil {
					in.ParentID, parent = &p.id, p.id
				}
			}
			task := mustCreateTask(t, d, client, in)
			m.tasks[task.ID] = &countTask{id: task.ID, client: client, ws: ws, parent: parent}
		case op < 8: // re-parent
			task := pick(func(*countTask) bool { return true })
			sub := m.subtree(task.id)
			var u db.TaskUpdate
			newParent := ""
			switch r := rng.IntN(4); {
			case r == 0:
				u.ParentID = null[string]()
			case r == 1 && len(sub) > 1: // a cycle: refused, nothing changes
				_, err := d.UpdateTask(ctx, task.client, task.id, db.TaskUpdate{ParentID: val(sub[1+rng.IntN(len(sub)-1)])})
				assertError(t, err, db.EINVALID, "ParentID")
				continue
			default:
				p := pick(func(t *countTask) bool { return t.ws == task.ws && !slices.Contains(sub, t.id) })
				if p == nil {
					u.ParentID = null[string]()
				} else {
					newParent = p.id
					u.ParentID = val(p.id)
				}
			}
			mustUpdateTask(t, d, task.client, task.id, u)
			task.parent = newParent
		default: // delete, with the subtree
			task := pick(func(*countTask) bool { return true })
			if _, err := d.DeleteTask(ctx, task.client, task.id); err != nil {
				t.Fatalf("DeleteTask: got %v, want nil", err)
			}
			for _, id := range m.subtree(task.id) {
				delete(m.tasks, id)
				deleted = append(deleted, id)
			}
		}
		check(step)
		if step%50 == 49 {
			checkLists(step)
		}
	}
	checkLists(steps)

	// Deleting every root empties every scope.
	for _, id := range m.ids() {
		if task := m.tasks[id]; task != nil && task.parent == "" {
			if _, err := d.DeleteTask(ctx, task.client, id); err != nil {
				t.Fatalf("DeleteTask: %v", err)
			}
			for _, sub := range m.subtree(id) {
				delete(m.tasks, sub)
			}
		}
	}
	check(steps + 1)
	checkLists(steps + 1)
}

// A filter id of the wrong kind (a workspace id as parentId, a task id as
// workspaceId) matches nothing, and Total must say so. (Regression: before
// task_counts scopes were prefixed 'w:'/'p:', the total looked the bare id up
// and answered the workspace's or the parent's count.)
func TestListTasksTotalOfWrongKindOfID(t *testing.T) {
	d := mustOpenDB(t)
	firm := mustCreateFirm(t, d, "Firm")
	client := mustCreateClient(t, d, firm.ID, "A")
	ws := mustCreateWorkspace(t, d, client.ID, "WS")
	parent := mustCreateTask(t, d, client.ID, db.TaskCreate{WorkspaceID: ws, Title: "parent"})
	for range 3 {
		mustCreateTask(t, d, client.ID, db.TaskCreate{WorkspaceID: ws, Title: "child", ParentID: &parent.ID})
	}
	for _, f := range []db.TaskFilter{{ParentID: ws}, {WorkspaceID: parent.ID}} {
		p := mustListTasks(t, d, client.ID, f, db.PageRequest{Limit: 20, Sort: "createdAt"})
		if len(p.Items) != 0 || p.Total != 0 {
			t.Errorf("ListTasks(%+v): got %d items, Total %d, want 0 items, Total 0", f, len(p.Items), p.Total)
		}
	}
}

// ---- pagination --------------------------------------------------------------

// pageTask is what the test knows of a task: the sort keys, kept after the
// task is deleted so that a walk's sequence can still be checked.
type pageTask struct {
	id, ws, parent   string
	title            string
	status           int
	due              *int64
	created, updated int64
	deleted          bool
}

// asciiLower folds A-Z only, as SQLite's NOCASE does.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// compareTasks is the order of lists in docs/decisions.md: the sort key, then
// id, both in the requested direction, except that a null due date comes last
// both ways.
func compareTasks(sort string, desc bool, a, b *pageTask) int {
	var c int
	switch sort {
	case "createdAt":
		c = cmp.Compare(a.created, b.created)
	case "updatedAt":
		c = cmp.Compare(a.updated, b.updated)
	case "status":
		c = cmp.Compare(a.status, b.status)
	case "title":
		c = strings.Compare(asciiLower(a.title), asciiLower(b.title))
	case "dueDate":
		switch {
		case a.due == nil && b.due != nil:
			return 1
		case a.due != nil && b.due == nil:
			return -1
		case a.due != nil && b.due != nil:
			c = cmp.Compare(*a.due, *b.due)
		}
	default:
		panic("unknown sort " + sort)
	}
	if c == 0 {
		c = strings.Compare(a.id, b.id)
	}
	if desc {
		c = -c
	}
	return c
}

var (
	pageTitles = []string{
		"alpha", "Alpha", "ALPHA", "alpha ", "alphabet", "Beta", "beta", "bETA", "gamma task", "Gamma Task",
		"Éclair", "éclair", "eclair", "_underscore", "[bracket", "zeta", "Zeta", "a", "A", "ab", "aB", "Ab",
	}
	pageDues = []int64{
		time.Date(1969, 7, 20, 20, 17, 0, 0, time.UTC).Unix(),
		time.Date(2026, 3, 31, 0, 0, 0, 0, time.UTC).Unix(),
		time.Date(2026, 4, 30, 0, 0, 0, 0, time.UTC).Unix(),
		time.Date(2026, 4, 30, 0, 0, 1, 0, time.UTC).Unix(),
		time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC).Unix(),
		time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC).Unix(),
	}
)

// pager holds the store, the model and the randomness of the pagination tests.
type pager struct {
	t      *testing.T
	d      *db.DB
	c      *clock
	rng    *rand.Rand
	client string
	ws     []string
	tasks  map[string]*pageTask // every task ever created, deleted ones too
}

func (p *pager) now() int64 { return p.c.Now().Unix() }

// create makes a task with random title, due date and (sometimes) parent.
func (p *pager) create(ws string) *pageTask {
	p.t.Helper()
	in := db.TaskCreate{WorkspaceID: ws, Title: pageTitles[p.rng.IntN(len(pageTitles))]}
	var due *int64
	if p.rng.IntN(10) >= 3 {
		v := pageDues[p.rng.IntN(len(pageDues))]
		due = &v
		at := time.Unix(v, 0)
		in.DueDate = &at
	}
	if p.rng.IntN(8) == 0 {
		if parent := p.random(func(t *pageTask) bool { return t.ws == ws }); parent != nil {
			in.ParentID = &parent.id
		}
	}
	task := mustCreateTask(p.t, p.d, p.client, in)
	m := &pageTask{id: task.ID, ws: ws, parent: strp(in.ParentID), title: in.Title, due: due, created: p.now(), updated: p.now()}
	if in.ParentID == nil {
		m.parent = ""
	}
	p.tasks[m.id] = m
	return m
}

func (p *pager) setStatus(m *pageTask, status int) {
	p.t.Helper()
	mustUpdateTask(p.t, p.d, p.client, m.id, db.TaskUpdate{Status: val(db.TaskStatuses[status])})
	m.status, m.updated = status, p.now()
}

// live returns the live tasks that match the filter, in id order.
func (p *pager) live(f db.TaskFilter) []*pageTask {
	var ts []*pageTask
	for _, t := range p.tasks {
		if !t.deleted && (f.WorkspaceID == "" || t.ws == f.WorkspaceID) && (f.ParentID == "" || t.parent == f.ParentID) {
			ts = append(ts, t)
		}
	}
	slices.SortFunc(ts, func(a, b *pageTask) int { return strings.Compare(a.id, b.id) })
	return ts
}

func (p *pager) random(filter func(*pageTask) bool) *pageTask {
	var cands []*pageTask
	for _, t := range p.live(db.TaskFilter{}) {
		if filter(t) {
			cands = append(cands, t)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	return cands[p.rng.IntN(len(cands))]
}

// remove deletes a task through the store and marks it and its subtree
// deleted in the model; it returns the ids deleted.
func (p *pager) remove(m *pageTask) []string {
	p.t.Helper()
	if _, err := p.d.DeleteTask(context.Background(), p.client, m.id); err != nil {
		p.t.Fatalf("DeleteTask(%s): got %v, want nil", m.id, err)
	}
	ids := []string{m.id}
	for i := 0; i < len(ids); i++ {
		p.tasks[ids[i]].deleted = true
		for _, t := range p.tasks {
			if t.parent == ids[i] && !t.deleted {
				ids = append(ids, t.id)
			}
		}
	}
	return ids
}

// checkItem compares a listed task with the model.
func (p *pager) checkItem(got *db.Task) {
	p.t.Helper()
	m := p.tasks[got.ID]
	if m == nil {
		p.t.Fatalf("listed task %s: not a task of the client", got.ID)
	}
	status := db.TaskStatuses[m.status]
	if got.Title != m.title || got.Status != status || got.WorkspaceID != m.ws || strp(got.ParentID) != cmp.Or(m.parent, "<nil>") ||
		got.CreatedAt.Unix() != m.created || got.UpdatedAt.Unix() != m.updated ||
		(got.DueDate == nil) != (m.due == nil) || (m.due != nil && got.DueDate.Unix() != *m.due) {
		p.t.Fatalf("listed task %s: got %+v (due %v), want %+v", got.ID, got, timep(got.DueDate), m)
	}
}

type walkedPage struct {
	cursor string
	ids    []string
	next   *string
	prev   *string
	total  int
}

func (p *pager) page(f db.TaskFilter, req db.PageRequest) walkedPage {
	p.t.Helper()
	pg, err := p.d.ListTasks(context.Background(), p.client, f, req)
	if err != nil {
		p.t.Fatalf("ListTasks(%+v, %+v): got %v, want nil", f, req, err)
	}
	if pg.Limit != req.Limit {
		p.t.Fatalf("ListTasks(%+v, %+v).Limit: got %d, want %d", f, req, pg.Limit, req.Limit)
	}
	if len(pg.Items) > req.Limit {
		p.t.Fatalf("ListTasks(%+v, %+v): got %d items, want at most %d", f, req, len(pg.Items), req.Limit)
	}
	w := walkedPage{cursor: req.Cursor, ids: taskIDs(pg.Items), next: pg.NextCursor, prev: pg.PreviousCursor, total: pg.Total}
	for _, item := range pg.Items {
		p.checkItem(item)
	}
	return w
}

func samePage(a, b walkedPage) bool {
	return slices.Equal(a.ids, b.ids) && strp(a.next) == strp(b.next) && strp(a.prev) == strp(b.prev) && a.total == b.total
}

// walk checks (a) a forward walk from the first page and (b) the backward
// walk from the last page, against the order computed from the model.
func (p *pager) walk(t *testing.T, f db.TaskFilter, sortKey string, desc bool, limit int) {
	want := p.live(f)
	slices.SortFunc(want, func(a, b *pageTask) int { return compareTasks(sortKey, desc, a, b) })
	wantIDs := make([]string, len(want))
	for i, m := range want {
		wantIDs[i] = m.id
	}

	// (a) forward.
	var pages []walkedPage
	var got []string
	cursor := ""
	for {
		if len(pages) > len(want)+1 {
			t.Fatalf("forward walk: more than %d pages, want it to end", len(pages))
		}
		pg := p.page(f, db.PageRequest{Limit: limit, Cursor: cursor, Sort: sortKey, Desc: desc})
		if pg.total != len(want) {
			t.Fatalf("page %d: Total got %d, want %d", len(pages), pg.total, len(want))
		}
		if len(pages) == 0 {
			if pg.prev != nil {
				t.Fatalf("first page: PreviousCursor got %s, want nil", *pg.prev)
			}
		} else {
			if strp(pg.prev) != pages[len(pages)-1].ids[0] {
				t.Fatalf("page %d: PreviousCursor got %s, want %s (first item of the page before)", len(pages), strp(pg.prev), pages[len(pages)-1].ids[0])
			}
			if len(pg.ids) == 0 || pg.ids[0] != cursor {
				t.Fatalf("page %d with cursor %s: got items %v, want the cursor's task first", len(pages), cursor, pg.ids)
			}
		}
		if pg.next != nil && len(pg.ids) != limit {
			t.Fatalf("page %d: got %d items and a next cursor, want %d items", len(pages), len(pg.ids), limit)
		}
		pages = append(pages, pg)
		got = append(got, pg.ids...)
		if pg.next == nil {
			break
		}
		if slices.Contains(pg.ids, *pg.next) {
			t.Fatalf("page %d: NextCursor %s is on the page itself", len(pages)-1, *pg.next)
		}
		cursor = *pg.next
	}
	if !slices.Equal(got, wantIDs) {
		for i := range min(len(got), len(wantIDs)) {
			if got[i] != wantIDs[i] {
				t.Fatalf("forward walk: %d ids, want %d; first difference at %d: got %+v, want %+v",
					len(got), len(wantIDs), i, p.tasks[got[i]], p.tasks[wantIDs[i]])
			}
		}
		t.Fatalf("forward walk: got %d ids, want %d", len(got), len(wantIDs))
	}
	if wantPages := max(1, (len(want)+limit-1)/limit); len(pages) != wantPages {
		t.Fatalf("forward walk: got %d pages, want %d", len(pages), wantPages)
	}

	// (b) backward, from the last page through PreviousCursor.
	last := pages[len(pages)-1]
	if len(last.ids) == 0 {
		return
	}
	i := len(pages) - 1
	cursor = last.ids[0]
	for {
		pg := p.page(f, db.PageRequest{Limit: limit, Cursor: cursor, Sort: sortKey, Desc: desc})
		if i < 0 {
			t.Fatalf("backward walk: more pages than the forward walk's %d", len(pages))
		}
		wantPage := pages[i]
		if !samePage(pg, wantPage) {
			t.Fatalf("backward walk, page %d: got ids %v next %s prev %s total %d, want ids %v next %s prev %s total %d",
				i, pg.ids, strp(pg.next), strp(pg.prev), pg.total, wantPage.ids, strp(wantPage.next), strp(wantPage.prev), wantPage.total)
		}
		if pg.prev == nil {
			break
		}
		cursor = *pg.prev
		i--
	}
	if i != 0 {
		t.Fatalf("backward walk: ended at page %d, want 0", i)
	}
}

// walkWhileWriting walks forward while tasks are created and deleted between
// the page requests, the cursor's own task among them.
func (p *pager) walkWhileWriting(t *testing.T, f db.TaskFilter, sortKey string, desc bool, limit int) {
	inScope := func(m *pageTask) bool { return f.WorkspaceID == "" || m.ws == f.WorkspaceID }
	before := p.live(f)
	deletedDuring := map[string]bool{}
	seen := map[string]bool{}
	var seq []*pageTask
	cursor := ""
	deletedCursors := 0
	for step := 0; ; step++ {
		if step > 2000 {
			t.Fatalf("walk did not end after %d pages", step)
		}
		pg, err := p.d.ListTasks(context.Background(), p.client, f, db.PageRequest{Limit: limit, Cursor: cursor, Sort: sortKey, Desc: desc})
		if err != nil {
			t.Fatalf("page %d (cursor %s, deleted: %v): got %v, want nil", step, cursor, cursor != "" && p.tasks[cursor].deleted, err)
		}
		if wantTotal := len(p.live(f)); pg.Total != wantTotal {
			t.Fatalf("page %d: Total got %d, want %d", step, pg.Total, wantTotal)
		}
		for _, item := range pg.Items {
			if seen[item.ID] {
				t.Fatalf("page %d: task %s listed twice", step, item.ID)
			}
			seen[item.ID] = true
			p.checkItem(item)
			seq = append(seq, p.tasks[item.ID])
		}
		if pg.NextCursor == nil {
			break
		}
		cursor = *pg.NextCursor

		// Write between the requests: delete the next page's first task every
		// other page, a random task (maybe with a subtree) sometimes, and
		// create tasks, some of them within the filter.
		if step%2 == 0 {
			for _, id := range p.remove(p.tasks[cursor]) {
				deletedDuring[id] = true
			}
			deletedCursors++
		}
		if p.rng.IntN(3) == 0 {
			if victim := p.random(func(*pageTask) bool { return true }); victim != nil {
				for _, id := range p.remove(victim) {
					deletedDuring[id] = true
				}
			}
		}
		for range 1 + p.rng.IntN(2)*p.rng.IntN(2) {
			ws := p.ws[p.rng.IntN(len(p.ws))]
			if f.WorkspaceID != "" && p.rng.IntN(2) == 0 {
				ws = f.WorkspaceID
			}
			p.create(ws)
		}
		if p.rng.IntN(4) == 0 {
			p.c.Advance(time.Second)
		}
	}
	for i := 1; i < len(seq); i++ {
		if compareTasks(sortKey, desc, seq[i-1], seq[i]) >= 0 {
			t.Fatalf("walked sequence out of order at %d: %+v then %+v", i, seq[i-1], seq[i])
		}
	}
	for _, m := range before {
		if !deletedDuring[m.id] && !seen[m.id] && inScope(m) {
			t.Errorf("task %+v existed throughout the walk, never listed", m)
		}
	}
	if deletedCursors == 0 && len(before) > limit {
		t.Errorf("walk deleted no cursor task; want some")
	}
}

func TestPaginationProperty(t *testing.T) {
	c := newClock()
	d := mustOpenDBWith(t, db.Options{Now: c.Now})
	firm := mustCreateFirm(t, d, "Firm")
	client := mustCreateClient(t, d, firm.ID, "Client")
	other := mustCreateClient(t, d, firm.ID, "Other client")
	p := &pager{t: t, d: d, c: c, rng: rand.New(rand.NewPCG(2026, 3)), client: client.ID, tasks: map[string]*pageTask{}}
	for i := range 3 {
		p.ws = append(p.ws, mustCreateWorkspace(t, d, client.ID, fmt.Sprintf("WS %d", i)))
	}

	// Tasks of another client, with the same keys: never listed.
	otherWS := mustCreateWorkspace(t, d, other.ID, "Other WS")
	for i := range 20 {
		mustCreateTask(t, d, other.ID, db.TaskCreate{WorkspaceID: otherWS, Title: pageTitles[i%len(pageTitles)]})
	}

	// The workspaces hold about 50, 30 and 20% of the tasks; the filtered
	// walks look at the second.
	n, limit1Client := 240, true
	if raceEnabled {
		n, limit1Client = 45, false
	}
	pickWS := func() string { return p.ws[[]int{0, 0, 0, 0, 0, 1, 1, 1, 2, 2}[p.rng.IntN(10)]] }
	for range n {
		p.create(pickWS())
		if p.rng.IntN(8) == 0 {
			c.Advance(time.Duration(1+p.rng.IntN(3)) * time.Second)
		}
	}
	for _, m := range p.live(db.TaskFilter{}) {
		if p.rng.IntN(10) < 7 {
			p.setStatus(m, p.rng.IntN(len(db.TaskStatuses)))
		}
		if p.rng.IntN(10) == 0 {
			c.Advance(time.Second)
		}
	}
	// A few deleted tasks leave tombstones beside the live rows.
	for range 5 {
		p.remove(p.random(func(m *pageTask) bool { return m.parent == "" }))
	}

	filters := []struct {
		name string
		f    db.TaskFilter
	}{{"client", db.TaskFilter{}}, {"workspace", db.TaskFilter{WorkspaceID: p.ws[1]}}}
	for _, sortKey := range db.TaskSorts {
		for _, desc := range []bool{false, true} {
			for _, limit := range []int{1, 7, 100} {
				for _, fc := range filters {
					if limit == 1 && fc.name == "client" && !limit1Client {
						// Two requests per task: too slow under -race.
						continue
					}
					order := map[bool]string{false: "asc", true: "desc"}[desc]
					t.Run(fmt.Sprintf("%s/%s/limit %d/%s", sortKey, order, limit, fc.name), func(t *testing.T) {
						p.t = t
						defer func() { p.t = nil }()
						p.walk(t, fc.f, sortKey, desc, limit)
					})
				}
			}
		}
	}

	t.Run("while writing", func(t *testing.T) {
		for _, sortKey := range db.TaskSorts {
			for _, desc := range []bool{false, true} {
				for _, fc := range filters {
					order := map[bool]string{false: "asc", true: "desc"}[desc]
					t.Run(fmt.Sprintf("%s/%s/%s", sortKey, order, fc.name), func(t *testing.T) {
						p.t = t
						defer func() { p.t = nil }()
						// Keep the population steady around n.
						for len(p.live(db.TaskFilter{})) < n-n/10 {
							p.create(pickWS())
						}
						limit := 7 + p.rng.IntN(10)
						if raceEnabled {
							limit = 5 + p.rng.IntN(5)
						}
						p.walkWhileWriting(t, fc.f, sortKey, desc, limit)
					})
				}
			}
		}
	})
}

// ---- cursors and tenants -----------------------------------------------------

func TestCursorErrors(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	d := mustOpenDBWith(t, db.Options{Now: c.Now})
	firm := mustCreateFirm(t, d, "Firm")
	clientA := mustCreateClient(t, d, firm.ID, "A")
	clientB := mustCreateClient(t, d, firm.ID, "B")
	wsA := mustCreateWorkspace(t, d, clientA.ID, "A")
	wsA2 := mustCreateWorkspace(t, d, clientA.ID, "A2")
	wsB := mustCreateWorkspace(t, d, clientB.ID, "B")
	var a []*db.Task
	for i := range 10 {
		a = append(a, mustCreateTask(t, d, clientA.ID, db.TaskCreate{WorkspaceID: wsA, Title: fmt.Sprintf("a%d", i)}))
		c.Advance(time.Second)
	}
	inA2 := mustCreateTask(t, d, clientA.ID, db.TaskCreate{WorkspaceID: wsA2, Title: "a2"})
	liveB := mustCreateTask(t, d, clientB.ID, db.TaskCreate{WorkspaceID: wsB, Title: "b"})
	deletedB := mustCreateTask(t, d, clientB.ID, db.TaskCreate{WorkspaceID: wsB, Title: "b deleted"})
	if _, err := d.DeleteTask(ctx, clientB.ID, deletedB.ID); err != nil {
		t.Fatal(err)
	}

	for _, sortKey := range db.TaskSorts {
		for _, f := range []db.TaskFilter{{}, {WorkspaceID: wsA}} {
			for name, cursor := range map[string]string{
				"unknown id":                    db.NewID(),
				"another client's task":         liveB.ID,
				"another client's deleted task": deletedB.ID,
				"a workspace id":                wsA,
				"a client id":                   clientA.ID,
				"not an id at all":              "' OR 1=1 --",
			} {
				_, err := d.ListTasks(ctx, clientA.ID, f, db.PageRequest{Limit: 5, Cursor: cursor, Sort: sortKey})
				if db.ErrorCode(err) != db.EINVALIDCURSOR {
					t.Errorf("%s, sort %s, filter %+v: got %v, want %s", name, sortKey, f, err, db.EINVALIDCURSOR)
				}
			}
		}
	}

	// The client's own deleted task continues where it stood.
	gone := a[4]
	if _, err := d.DeleteTask(ctx, clientA.ID, gone.ID); err != nil {
		t.Fatal(err)
	}
	for _, desc := range []bool{false, true} {
		p := mustListTasks(t, d, clientA.ID, db.TaskFilter{WorkspaceID: wsA}, db.PageRequest{Limit: 3, Cursor: gone.ID, Sort: "createdAt", Desc: desc})
		want, wantPrev := []string{a[5].ID, a[6].ID, a[7].ID}, a[1].ID
		if desc {
			want, wantPrev = []string{a[3].ID, a[2].ID, a[1].ID}, a[7].ID
		}
		if got := taskIDs(p.Items); !slices.Equal(got, want) || strp(p.PreviousCursor) != wantPrev {
			t.Errorf("cursor of a deleted task (desc %v): got %v prev %s, want %v prev %s", desc, got, strp(p.PreviousCursor), want, wantPrev)
		}
		if p.Total != 9 {
			t.Errorf("Total after a delete: got %d, want 9", p.Total)
		}
	}
	// Tombstones live 30 days: a delete prunes the client's older ones.
	raw := mustOpenRaw(t, d.Path())
	old, fresh := a[6], a[7]
	for _, task := range []*db.Task{old, fresh} {
		if _, err := d.DeleteTask(ctx, clientA.ID, task.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.Exec(`UPDATE task_tombstones SET deleted_at = unixepoch() - 31 * 86400 WHERE id = ?`, old.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ListTasks(ctx, clientA.ID, db.TaskFilter{}, db.PageRequest{Limit: 3, Cursor: old.ID, Sort: "createdAt"}); err != nil {
		t.Errorf("cursor of a task deleted 31 days ago, before any prune: got %v, want nil", err)
	}
	if _, err := d.DeleteTask(ctx, clientA.ID, a[8].ID); err != nil {
		t.Fatal(err)
	}
	_, err := d.ListTasks(ctx, clientA.ID, db.TaskFilter{}, db.PageRequest{Limit: 3, Cursor: old.ID, Sort: "createdAt"})
	if db.ErrorCode(err) != db.EINVALIDCURSOR {
		t.Errorf("cursor of a task deleted 31 days ago, after a prune: got %v, want %s", err, db.EINVALIDCURSOR)
	}
	for _, id := range []string{fresh.ID, a[8].ID} {
		p := mustListTasks(t, d, clientA.ID, db.TaskFilter{}, db.PageRequest{Limit: 3, Cursor: id, Sort: "createdAt"})
		if got := taskIDs(p.Items); len(got) == 0 || got[0] != a[9].ID {
			t.Errorf("cursor of a task deleted just now: got %v, want %s first", got, a[9].ID)
		}
	}

	// A task of the client outside the filter is a place in the order too.
	if _, err := d.ListTasks(ctx, clientA.ID, db.TaskFilter{WorkspaceID: wsA}, db.PageRequest{Limit: 3, Cursor: inA2.ID, Sort: "title"}); err != nil {
		t.Errorf("cursor of the client's task in another workspace: got %v, want nil", err)
	}
	var e *db.Error
	_, err = d.ListTasks(ctx, clientA.ID, db.TaskFilter{}, db.PageRequest{Limit: 3, Cursor: liveB.ID, Sort: "createdAt"})
	if !errors.As(err, &e) || !reflect.DeepEqual(e.Field, []any{"Cursor"}) {
		t.Errorf("invalid cursor error: got %#v, want field [Cursor]", err)
	}
}

func TestTaskTenantIsolation(t *testing.T) {
	ctx := context.Background()
	d := mustOpenDB(t)
	raw := mustOpenRaw(t, d.Path())
	firm := mustCreateFirm(t, d, "Firm")
	clientA := mustCreateClient(t, d, firm.ID, "A")
	clientB := mustCreateClient(t, d, firm.ID, "B")
	wsA := mustCreateWorkspace(t, d, clientA.ID, "A")
	wsB := mustCreateWorkspace(t, d, clientB.ID, "B")
	mustCreateTask(t, d, clientA.ID, db.TaskCreate{WorkspaceID: wsA, Title: "a"})
	parentB := mustCreateTask(t, d, clientB.ID, db.TaskCreate{WorkspaceID: wsB, Title: "b"})
	for range 3 {
		mustCreateTask(t, d, clientB.ID, db.TaskCreate{WorkspaceID: wsB, Title: "b child", ParentID: &parentB.ID})
	}

	for _, sortKey := range db.TaskSorts {
		for name, f := range map[string]db.TaskFilter{
			"B's workspace":             {WorkspaceID: wsB},
			"B's parent":                {ParentID: parentB.ID},
			"B's parent and workspace":  {ParentID: parentB.ID, WorkspaceID: wsB},
			"B's parent, A's workspace": {ParentID: parentB.ID, WorkspaceID: wsA},
		} {
			p := mustListTasks(t, d, clientA.ID, f, db.PageRequest{Limit: 20, Sort: sortKey})
			if len(p.Items) != 0 || p.Total != 0 || p.NextCursor != nil || p.PreviousCursor != nil {
				t.Errorf("client A listing %s (sort %s): got %v, Total %d, want nothing", name, sortKey, taskIDs(p.Items), p.Total)
			}
		}
	}
	p := mustListTasks(t, d, clientA.ID, db.TaskFilter{}, db.PageRequest{Limit: 20, Sort: "createdAt"})
	if len(p.Items) != 1 || p.Total != 1 || p.Items[0].ClientID != clientA.ID {
		t.Errorf("client A's list: got %v, Total %d, want its one task", taskIDs(p.Items), p.Total)
	}
	p = mustListTasks(t, d, clientB.ID, db.TaskFilter{ParentID: parentB.ID}, db.PageRequest{Limit: 20, Sort: "createdAt"})
	if len(p.Items) != 3 || p.Total != 3 {
		t.Errorf("client B's subtasks: got %v, Total %d, want 3", taskIDs(p.Items), p.Total)
	}

	_, err := d.CreateTask(ctx, clientA.ID, db.TaskCreate{WorkspaceID: wsA, Title: "x", ParentID: &parentB.ID})
	assertError(t, err, db.ENOTFOUND, "ParentID")
	_, err = d.UpdateTask(ctx, clientA.ID, parentB.ID, db.TaskUpdate{Title: val("mine now")})
	assertCode(t, err, db.ENOTFOUND)
	_, err = d.DeleteTask(ctx, clientA.ID, parentB.ID)
	assertCode(t, err, db.ENOTFOUND)
	if n := count(t, raw, `SELECT count(*) FROM tasks WHERE client_id = ? AND title LIKE 'b%'`, clientB.ID); n != 4 {
		t.Errorf("client B's tasks after client A's attempts: got %d, want 4 unchanged", n)
	}
}
