package db

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Folder is a folder of a workspace; folders nest within their workspace.
type Folder struct {
	ID          string
	ClientID    string
	WorkspaceID string
	ParentID    *string
	Name        string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Label is a label of a workspace, for tagging its files.
type Label struct {
	ID          string
	ClientID    string
	WorkspaceID string
	Name        string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// FolderSorts and LabelSorts are the sorts their lists accept.
var (
	FolderSorts = []string{"createdAt", "name"}
	LabelSorts  = []string{"createdAt", "name"}
)

var nameSortKeys = map[string]sortKey{"createdAt": column("created_at"), "name": column("name")}

const (
	folderColumns = `id, client_id, workspace_id, parent_id, name, created_at, updated_at`
	labelColumns  = `id, client_id, workspace_id, name, created_at, updated_at`
)

// CreateFolder creates a folder in the client's workspace, inside the parent
// folder when parentID is set. Returns ENOTFOUND for a workspace that is not
// the client's or a parent that is not a folder of the workspace, ECONFLICT
// when the parent holds a folder of that name (case-insensitively).
func (db *DB) CreateFolder(ctx context.Context, clientID, workspaceID, name string, parentID *string) (*Folder, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*Folder, error) {
		if err := findWorkspace(ctx, tx, clientID, workspaceID); err != nil {
			return nil, err
		}
		if parentID != nil {
			if err := findInWorkspace(ctx, tx, clientID, workspaceID, *parentID,
				inWorkspace{"folders", "folder", "the workspace", []any{"ParentID"}}); err != nil {
				return nil, err
			}
		}
		var taken bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM folders WHERE client_id = ? AND workspace_id = ?
			AND coalesce(parent_id, '') = coalesce(?, '') AND name = ?)`, clientID, workspaceID, parentID, name).Scan(&taken); err != nil {
			return nil, fmt.Errorf("find folder name: %w", err)
		}
		if taken {
			return nil, &Error{Code: ECONFLICT, Field: []any{"Name"}, Message: "a folder named " + name + " exists in this place already"}
		}
		now := db.now().UTC().Truncate(time.Second)
		f := &Folder{ID: NewID(), ClientID: clientID, WorkspaceID: workspaceID, ParentID: parentID, Name: name, CreatedAt: now, UpdatedAt: now}
		if _, err := tx.ExecContext(ctx, `INSERT INTO folders (`+folderColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			f.ID, clientID, workspaceID, parentID, name, unix(now), unix(now)); err != nil {
			return nil, fmt.Errorf("create folder: %w", err)
		}
		return f, nil
	})
}

// ListFolders returns a page of the folders of the client's workspace.
// Returns ENOTFOUND for a workspace that is not the client's.
func (db *DB) ListFolders(ctx context.Context, clientID, workspaceID string, req PageRequest) (*Page[*Folder], error) {
	return listInWorkspace(ctx, db, "folders", folderColumns, clientID, workspaceID, req, func(s scanner) (*Folder, string, error) {
		var f Folder
		var parent sql.NullString
		var created, updated int64
		if err := s.Scan(&f.ID, &f.ClientID, &f.WorkspaceID, &parent, &f.Name, &created, &updated); err != nil {
			return nil, "", fmt.Errorf("scan folder: %w", err)
		}
		f.ParentID = nullString(parent)
		f.CreatedAt, f.UpdatedAt = fromUnix(created), fromUnix(updated)
		return &f, f.ID, nil
	})
}

// CreateLabel creates a label in the client's workspace. Returns ENOTFOUND
// for a workspace that is not the client's, ECONFLICT when the workspace has
// a label of that name (case-insensitively).
func (db *DB) CreateLabel(ctx context.Context, clientID, workspaceID, name string) (*Label, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*Label, error) {
		if err := findWorkspace(ctx, tx, clientID, workspaceID); err != nil {
			return nil, err
		}
		var taken bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM labels WHERE client_id = ? AND workspace_id = ? AND name = ?)`,
			clientID, workspaceID, name).Scan(&taken); err != nil {
			return nil, fmt.Errorf("find label name: %w", err)
		}
		if taken {
			return nil, &Error{Code: ECONFLICT, Field: []any{"Name"}, Message: "a label named " + name + " exists in this workspace already"}
		}
		now := db.now().UTC().Truncate(time.Second)
		l := &Label{ID: NewID(), ClientID: clientID, WorkspaceID: workspaceID, Name: name, CreatedAt: now, UpdatedAt: now}
		if _, err := tx.ExecContext(ctx, `INSERT INTO labels (`+labelColumns+`) VALUES (?, ?, ?, ?, ?, ?)`,
			l.ID, clientID, workspaceID, name, unix(now), unix(now)); err != nil {
			return nil, fmt.Errorf("create label: %w", err)
		}
		return l, nil
	})
}

// ListLabels returns a page of the labels of the client's workspace.
// Returns ENOTFOUND for a workspace that is not the client's.
func (db *DB) ListLabels(ctx context.Context, clientID, workspaceID string, req PageRequest) (*Page[*Label], error) {
	return listInWorkspace(ctx, db, "labels", labelColumns, clientID, workspaceID, req, func(s scanner) (*Label, string, error) {
		var l Label
		var created, updated int64
		if err := s.Scan(&l.ID, &l.ClientID, &l.WorkspaceID, &l.Name, &created, &updated); err != nil {
			return nil, "", fmt.Errorf("scan label: %w", err)
		}
		l.CreatedAt, l.UpdatedAt = fromUnix(created), fromUnix(updated)
		return &l, l.ID, nil
	})
}

// listInWorkspace pages through the rows of a table of workspace records
// (folders, labels) of the client's workspace.
func listInWorkspace[T any](ctx context.Context, db *DB, table, columns, clientID, workspaceID string, req PageRequest, scan func(scanner) (T, string, error)) (*Page[T], error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()

	if err := findWorkspace(ctx, tx, clientID, workspaceID); err != nil {
		return nil, err
	}
	tenant := condition{"client_id = ? AND workspace_id = ?", []any{clientID, workspaceID}}
	return paginate(ctx, tx, list{
		table: table, columns: columns, tenant: tenant, sorts: nameSortKeys,
	}, req, scan)
}
