package db

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// TaskStatuses are the task statuses in life-cycle order: the order a status
// sort follows. The stored status is the index in this list.
var TaskStatuses = []string{"OPEN", "IN_PROGRESS", "IN_REVIEW", "ACCEPTED", "DECLINED"}

// Actor types of a task's creator.
const (
	ActorUser   = "USER"
	ActorSystem = "SYSTEM"
	ActorAI     = "AI"
	ActorAPI    = "API"
)

// Task is a task of a client's workspace.
type Task struct {
	ID                  string
	ClientID            string
	WorkspaceID         string
	ParentID            *string
	Title               string
	Text                *string
	Status              string
	DueDate             *time.Time
	CreatedByID         *string
	ActorType           string
	DestinationFolderID *string
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

// TaskCreate holds the fields of a new task.
type TaskCreate struct {
	WorkspaceID string
	Title       string
	Text        *string
	DueDate     *time.Time
	ParentID    *string
	ActorType   string  // ActorAPI when ""
	CreatedByID *string // nil for tasks created with an API key
}

// TaskUpdate holds the fields a task update may change.
type TaskUpdate struct {
	Title               Update[string]
	Text                Update[string]
	Status              Update[string]
	DueDate             Update[time.Time]
	DestinationFolderID Update[string]
	ParentID            Update[string]
	// AssetFileIDs replaces the files attached to the task when Set.
	AssetFileIDs Update[[]string]
}

// TaskFilter narrows a task list; empty fields do not filter.
type TaskFilter struct {
	WorkspaceID string
	ParentID    string
}

// TaskSorts are the sorts a task list accepts.
var TaskSorts = []string{"createdAt", "updatedAt", "dueDate", "status", "title"}

var taskSortKeys = map[string]sortKey{
	"createdAt": column("created_at"),
	"updatedAt": column("updated_at"),
	"dueDate":   {asc: "due_asc", desc: "due_desc"},
	"status":    column("status"),
	"title":     column("title"),
}

const taskColumns = `id, client_id, workspace_id, parent_id, title, text, status, due_date,
	created_by_id, actor_type, destination_folder_id, created_at, updated_at`

// parentTask is how a task's parent is looked for. Its place is the task's
// workspace: the one a new task is created in, or an existing task's own.
var parentTask = inWorkspace{"tasks", "parent task", "the task's workspace", []any{"ParentID"}}

// tombstoneLifetime is how long a deleted task's place is kept for cursors.
const tombstoneLifetime = 30 * 24 * time.Hour

// CreateTask creates a task in a workspace of the client. Returns ENOTFOUND
// when the workspace is not the client's, or the parent not a task of that
// workspace.
func (db *DB) CreateTask(ctx context.Context, clientID string, in TaskCreate) (*Task, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*Task, error) {
		if err := findWorkspace(ctx, tx, clientID, in.WorkspaceID); err != nil {
			return nil, withField(err, "WorkspaceID")
		}
		if in.ParentID != nil {
			if err := findInWorkspace(ctx, tx, clientID, in.WorkspaceID, *in.ParentID, parentTask); err != nil {
				return nil, err
			}
		}
		now := db.now().UTC().Truncate(time.Second)
		t := &Task{
			ID: NewID(), ClientID: clientID, WorkspaceID: in.WorkspaceID, ParentID: in.ParentID,
			Title: in.Title, Text: in.Text, Status: TaskStatuses[0], DueDate: truncate(in.DueDate),
			CreatedByID: in.CreatedByID, ActorType: in.ActorType, CreatedAt: now, UpdatedAt: now,
		}
		if t.ActorType == "" {
			t.ActorType = ActorAPI
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO tasks (`+taskColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?, NULL, ?, ?)`,
			t.ID, clientID, t.WorkspaceID, t.ParentID, t.Title, t.Text, unixPtr(t.DueDate),
			t.CreatedByID, t.ActorType, unix(now), unix(now)); err != nil {
			return nil, fmt.Errorf("create task: %w", err)
		}
		return t, db.emit(ctx, tx, event{typ: EventTaskCreated, clientID: &clientID, record: t})
	})
}

func findTask(ctx context.Context, q querier, clientID, id string) (*Task, error) {
	row := q.QueryRowContext(ctx, `SELECT `+taskColumns+` FROM tasks WHERE client_id = ? AND id = ?`, clientID, id)
	t, _, err := newTaskRow().scan(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "task %s not found", id)
	}
	return t, err
}

// TaskWithAssets is a task with the ids of the files attached to it.
type TaskWithAssets struct {
	*Task
	AssetFileIDs []string
}

// GetTask returns the client's task with the ids of its attached files, in
// id order (the order they were made). Returns ENOTFOUND.
func (db *DB) GetTask(ctx context.Context, clientID, id string) (*TaskWithAssets, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	t, err := findTask(ctx, tx, clientID, id)
	if err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT a.file_id FROM task_asset_files a JOIN tasks t ON t.id = a.task_id
		WHERE t.client_id = ? AND a.task_id = ? ORDER BY a.file_id`, clientID, id)
	if err != nil {
		return nil, fmt.Errorf("task asset files: %w", err)
	}
	defer rows.Close()
	out := &TaskWithAssets{Task: t, AssetFileIDs: []string{}}
	for rows.Next() {
		var fileID string
		if err := rows.Scan(&fileID); err != nil {
			return nil, fmt.Errorf("task asset files: %w", err)
		}
		out.AssetFileIDs = append(out.AssetFileIDs, fileID)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("task asset files: %w", err)
	}
	return out, nil
}

// UpdateTask changes the fields of the client's task that u sets. Returns
// ENOTFOUND for a task, folder, parent or file that is not the client's (or
// not in the task's workspace), and EINVALID for a parent that would make the
// task its own ancestor.
func (db *DB) UpdateTask(ctx context.Context, clientID, id string, u TaskUpdate) (*Task, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*Task, error) {
		t, err := findTask(ctx, tx, clientID, id)
		if err != nil {
			return nil, err
		}
		if err := cmp.Or(notNull("Title", "title", u.Title), notNull("Status", "status", u.Status)); err != nil {
			return nil, err
		}
		if u.DestinationFolderID.Set && u.DestinationFolderID.Value != nil {
			if err := findInWorkspace(ctx, tx, clientID, t.WorkspaceID, *u.DestinationFolderID.Value,
				inWorkspace{"folders", "folder", "the task's workspace", []any{"DestinationFolderID"}}); err != nil {
				return nil, err
			}
		}
		if u.ParentID.Set && u.ParentID.Value != nil {
			if err := checkParent(ctx, tx, clientID, t, *u.ParentID.Value); err != nil {
				return nil, err
			}
		}
		if u.AssetFileIDs.Set {
			var fileIDs []string
			if u.AssetFileIDs.Value != nil {
				fileIDs = *u.AssetFileIDs.Value
			}
			if err := replaceAssetFiles(ctx, tx, clientID, t, fileIDs); err != nil {
				return nil, err
			}
		}

		apply(u.Title, func(v *string) { t.Title = *v })
		apply(u.Text, func(v *string) { t.Text = v })
		apply(u.Status, func(v *string) { t.Status = *v })
		apply(u.DueDate, func(v *time.Time) { t.DueDate = truncate(v) })
		apply(u.DestinationFolderID, func(v *string) { t.DestinationFolderID = v })
		apply(u.ParentID, func(v *string) { t.ParentID = v })
		t.UpdatedAt = db.now().UTC().Truncate(time.Second)

		status := statusRank(t.Status)
		if status < 0 {
			return nil, &Error{Code: EINVALID, Message: "unknown status " + t.Status, Field: []any{"Status"}}
		}
		// Only the columns the update sets: SQLite rewrites the entries of
		// every index on a column named in SET, changed or not, and most of
		// the sixteen indexes hold one of these.
		var sets []string
		var args []any
		column := func(set bool, name string, value any) {
			if set {
				sets, args = append(sets, name+" = ?"), append(args, value)
			}
		}
		column(u.Title.Set, "title", t.Title)
		column(u.Text.Set, "text", t.Text)
		column(u.Status.Set, "status", status)
		column(u.DueDate.Set, "due_date", unixPtr(t.DueDate))
		column(u.DestinationFolderID.Set, "destination_folder_id", t.DestinationFolderID)
		column(u.ParentID.Set, "parent_id", t.ParentID)
		column(true, "updated_at", unix(t.UpdatedAt))
		if _, err := tx.ExecContext(ctx, `UPDATE tasks SET `+strings.Join(sets, ", ")+` WHERE client_id = ? AND id = ?`,
			append(args, clientID, id)...); err != nil {
			return nil, fmt.Errorf("update task: %w", err)
		}
		return t, db.emit(ctx, tx, event{typ: EventTaskUpdated, clientID: &clientID, record: t, changes: u.fields()})
	})
}

// fields names the fields u sets.
func (u TaskUpdate) fields() []string {
	var names []string
	for _, f := range []struct {
		set  bool
		name string
	}{
		{u.Title.Set, "Title"}, {u.Text.Set, "Text"}, {u.Status.Set, "Status"}, {u.DueDate.Set, "DueDate"},
		{u.DestinationFolderID.Set, "DestinationFolderID"}, {u.ParentID.Set, "ParentID"}, {u.AssetFileIDs.Set, "AssetFileIDs"},
	} {
		if f.set {
			names = append(names, f.name)
		}
	}
	return names
}

// checkParent checks that parentID is a task of t's workspace that is
// neither t nor one of its descendants.
func checkParent(ctx context.Context, tx *txn, clientID string, t *Task, parentID string) error {
	if err := findInWorkspace(ctx, tx, clientID, t.WorkspaceID, parentID, parentTask); err != nil {
		return err
	}
	var cycle bool
	err := tx.QueryRowContext(ctx, `
		WITH RECURSIVE ancestors(id) AS (
			SELECT ?
			UNION
			SELECT tasks.parent_id FROM tasks JOIN ancestors ON tasks.id = ancestors.id
			WHERE tasks.client_id = ? AND tasks.parent_id IS NOT NULL
		)
		SELECT EXISTS (SELECT 1 FROM ancestors WHERE id = ?)`, parentID, clientID, t.ID).Scan(&cycle)
	if err != nil {
		return fmt.Errorf("check task parent: %w", err)
	}
	if cycle {
		return &Error{Code: EINVALID, Field: []any{"ParentID"},
			Message: "a task cannot be its own parent or the subtask of one of its subtasks"}
	}
	return nil
}

// assetFilesSQL, closed by the ids' placeholders and a parenthesis, finds
// which of the ids are files of a workspace of the client. By id: the unary
// pluses keep the planner from walking all the client's or the workspace's
// files by one of their indexes.
const assetFilesSQL = `SELECT id FROM files WHERE +client_id = ? AND +workspace_id = ? AND id IN (`

// replaceAssetFiles makes fileIDs, all files of t's workspace, the files
// attached to t; a duplicate id attaches its file once.
func replaceAssetFiles(ctx context.Context, tx *txn, clientID string, t *Task, fileIDs []string) error {
	if len(fileIDs) > 0 {
		args := []any{clientID, t.WorkspaceID}
		for _, id := range fileIDs {
			args = append(args, id)
		}
		rows, err := tx.QueryContext(ctx, assetFilesSQL+placeholders(len(fileIDs))+`)`, args...)
		if err != nil {
			return fmt.Errorf("find asset files: %w", err)
		}
		defer rows.Close()
		found := map[string]bool{}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return fmt.Errorf("find asset files: %w", err)
			}
			found[id] = true
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("find asset files: %w", err)
		}
		for i, id := range fileIDs {
			if !found[id] {
				return &Error{Code: ENOTFOUND, Field: []any{"AssetFileIDs", i}, Message: "file " + id + " not found"}
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM task_asset_files
		WHERE task_id = (SELECT id FROM tasks WHERE client_id = ? AND id = ?)`, clientID, t.ID); err != nil {
		return fmt.Errorf("replace asset files: %w", err)
	}
	for _, id := range fileIDs {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO task_asset_files (task_id, file_id) VALUES (?, ?)`, t.ID, id); err != nil {
			return fmt.Errorf("replace asset files: %w", err)
		}
	}
	return nil
}

// DeleteTask deletes the client's task with its subtasks, and returns it.
// Files keep their record and bytes and lose their link to the deleted
// tasks. Returns ENOTFOUND.
func (db *DB) DeleteTask(ctx context.Context, clientID, id string) (*Task, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*Task, error) {
		t, err := findTask(ctx, tx, clientID, id)
		if err != nil {
			return nil, err
		}
		// Tombstones are stamped by the delete trigger with SQLite's clock, so
		// they age by that clock too.
		if _, err := tx.ExecContext(ctx, `DELETE FROM task_tombstones WHERE client_id = ? AND deleted_at < unixepoch() - ?`,
			clientID, int64(tombstoneLifetime/time.Second)); err != nil {
			return nil, fmt.Errorf("prune task tombstones: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM tasks WHERE client_id = ? AND id = ?`, clientID, id); err != nil {
			return nil, fmt.Errorf("delete task: %w", err)
		}
		return t, db.emit(ctx, tx, event{typ: EventTaskDeleted, clientID: &clientID, record: t})
	})
}

// ListTasks returns a page of the client's tasks.
func (db *DB) ListTasks(ctx context.Context, clientID string, f TaskFilter, req PageRequest) (*Page[*Task], error) {
	tenant := condition{"client_id = ?", []any{clientID}}
	var filters []condition
	countScope, countArgs := "", []any{}
	switch {
	case f.ParentID != "":
		filters = append(filters, condition{"parent_id = ?", []any{f.ParentID}})
		countScope = "p:" + f.ParentID
		if f.WorkspaceID != "" {
			// A task's subtasks are all in its workspace: the parent decides.
			filters = append(filters, condition{"workspace_id = ?", []any{f.WorkspaceID}})
			countArgs = []any{f.ParentID, f.WorkspaceID}
		}
	case f.WorkspaceID != "":
		filters = append(filters, condition{"workspace_id = ?", []any{f.WorkspaceID}})
		countScope = "w:" + f.WorkspaceID
	}
	l := list{
		table:      "tasks",
		columns:    taskColumns,
		tenant:     tenant,
		filters:    filters,
		sorts:      taskSortKeys,
		tombstones: "task_tombstones",
		total: func(ctx context.Context, tx pageSource) (int, error) {
			query := `SELECT coalesce((SELECT n FROM task_counts WHERE client_id = ? AND scope = ?), 0)`
			args := []any{clientID, countScope}
			if len(countArgs) > 0 {
				query = `SELECT coalesce((SELECT n FROM task_counts WHERE client_id = ? AND scope = ?
					AND EXISTS (SELECT 1 FROM tasks WHERE client_id = ? AND id = ? AND workspace_id = ?)), 0)`
				args = append(args, clientID, countArgs[0], countArgs[1])
			}
			var n int
			err := tx.QueryRowContext(ctx, query, args...).Scan(&n)
			return n, err
		},
	}
	var page *Page[*Task]
	err := db.direct.read(ctx, func(tx directTx) error {
		var err error
		page, err = paginateFrom(ctx, tx, l, req, newTaskRow().scan)
		return err
	})
	return page, err
}

// taskRow is what a task row scans into. A page scans all its rows into one,
// so that the scan's destinations are made once, not once per row.
type taskRow struct {
	task                            Task
	parent, text, createdBy, folder sql.NullString
	due                             sql.NullInt64
	status                          int
	created, updated                int64
	dest                            []any
}

func newTaskRow() *taskRow {
	r := &taskRow{}
	t := &r.task
	r.dest = []any{&t.ID, &t.ClientID, &t.WorkspaceID, &r.parent, &t.Title, &r.text, &r.status, &r.due,
		&r.createdBy, &t.ActorType, &r.folder, &r.created, &r.updated}
	return r
}

// scan reads a row of taskColumns.
func (r *taskRow) scan(row scanner) (*Task, string, error) {
	if err := row.Scan(r.dest...); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, "", err
		}
		return nil, "", fmt.Errorf("scan task: %w", err)
	}
	t := r.task
	if r.status < 0 || r.status >= len(TaskStatuses) {
		return nil, "", fmt.Errorf("scan task %s: status %d out of range", t.ID, r.status)
	}
	t.Status = TaskStatuses[r.status]
	t.ParentID, t.Text, t.CreatedByID, t.DestinationFolderID = nullString(r.parent), nullString(r.text), nullString(r.createdBy), nullString(r.folder)
	t.DueDate = nullTime(r.due)
	t.CreatedAt, t.UpdatedAt = fromUnix(r.created), fromUnix(r.updated)
	return &t, t.ID, nil
}

func statusRank(status string) int {
	for i, s := range TaskStatuses {
		if s == status {
			return i
		}
	}
	return -1
}
