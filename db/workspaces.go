package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Workspace is a workspace of a client.
type Workspace struct {
	ID         string
	ClientID   string
	Name       string
	ArchivedAt *time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// WorkspaceSorts are the sorts a workspace list accepts.
var WorkspaceSorts = []string{"createdAt"}

const workspaceColumns = `id, client_id, name, archived_at, created_at, updated_at`

// CreateWorkspace creates a workspace of the client.
func (db *DB) CreateWorkspace(ctx context.Context, clientID, name string) (*Workspace, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*Workspace, error) {
		now := db.now().UTC().Truncate(time.Second)
		w := &Workspace{ID: NewID(), ClientID: clientID, Name: name, CreatedAt: now, UpdatedAt: now}
		if _, err := tx.ExecContext(ctx, `INSERT INTO workspaces (`+workspaceColumns+`) VALUES (?, ?, ?, NULL, ?, ?)`,
			w.ID, clientID, name, unix(now), unix(now)); err != nil {
			return nil, fmt.Errorf("create workspace: %w", err)
		}
		return w, db.emit(ctx, tx, event{typ: EventWorkspaceCreated, clientID: &clientID, record: w})
	})
}

// RenameWorkspace renames the client's workspace. Returns ENOTFOUND.
func (db *DB) RenameWorkspace(ctx context.Context, clientID, id, name string) (*Workspace, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*Workspace, error) {
		row := tx.QueryRowContext(ctx, `UPDATE workspaces SET name = ?, updated_at = ?
			WHERE client_id = ? AND id = ? RETURNING `+workspaceColumns,
			name, unix(db.now()), clientID, id)
		w, err := scanWorkspace(row)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, Errorf(ENOTFOUND, "workspace %s not found", id)
		}
		if err != nil {
			return nil, err
		}
		return w, db.emit(ctx, tx, event{typ: EventWorkspaceUpdated, clientID: &clientID, record: w, changes: []string{"Name"}})
	})
}

// ListWorkspaces returns a page of the client's workspaces.
func (db *DB) ListWorkspaces(ctx context.Context, clientID string, req PageRequest) (*Page[*Workspace], error) {
	return readPage(ctx, db, list{
		table:   "workspaces",
		columns: workspaceColumns,
		tenant:  condition{"client_id = ?", []any{clientID}},
		sorts:   map[string]sortKey{"createdAt": column("created_at")},
	}, req, func(s scanner) (*Workspace, string, error) {
		w, err := scanWorkspace(s)
		if err != nil {
			return nil, "", err
		}
		return w, w.ID, nil
	})
}

func scanWorkspace(row scanner) (*Workspace, error) {
	var w Workspace
	var archived sql.NullInt64
	var created, updated int64
	if err := row.Scan(&w.ID, &w.ClientID, &w.Name, &archived, &created, &updated); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		return nil, fmt.Errorf("scan workspace: %w", err)
	}
	w.ArchivedAt = nullTime(archived)
	w.CreatedAt, w.UpdatedAt = fromUnix(created), fromUnix(updated)
	return &w, nil
}

// Member is a user's membership of a workspace, with the user's name.
type Member struct {
	WorkspaceID string
	UserID      string
	IsMuted     bool
	CreatedAt   time.Time
	UpdatedAt   time.Time
	User        MemberUser
}

// MemberUser is what a member list shows of the user.
type MemberUser struct {
	ID        string
	Email     string
	FirstName *string
	LastName  *string
	Image     *string
}

const memberColumns = `m.workspace_id, m.user_id, m.is_muted, m.created_at, m.updated_at,
	u.id, u.email, u.first_name, u.last_name, u.image`

// ListMembers returns the members of the client's workspace, oldest
// membership first. Returns ENOTFOUND for a workspace that is not the client's.
func (db *DB) ListMembers(ctx context.Context, clientID, workspaceID string) ([]*Member, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()

	if err := findWorkspace(ctx, tx, clientID, workspaceID); err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+memberColumns+`
		FROM workspace_members m
		JOIN workspaces w ON w.id = m.workspace_id
		JOIN users u ON u.id = m.user_id
		WHERE w.client_id = ? AND m.workspace_id = ?
		ORDER BY m.created_at, m.user_id`, clientID, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("list members: %w", err)
	}
	defer rows.Close()
	members := []*Member{}
	for rows.Next() {
		m, err := scanMember(rows)
		if err != nil {
			return nil, err
		}
		members = append(members, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list members: %w", err)
	}
	return members, nil
}

// AddMember makes the user a member of the client's workspace. The user must
// be a user of the client or an accountant user of the client's firm.
// Returns ENOTFOUND for the workspace or the user, ECONFLICT when the user is
// a member already.
func (db *DB) AddMember(ctx context.Context, clientID, workspaceID, userID string) (*Member, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*Member, error) {
		if err := findWorkspace(ctx, tx, clientID, workspaceID); err != nil {
			return nil, err
		}
		var reachable bool
		err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM users u JOIN clients c ON c.id = ?
			WHERE u.id = ? AND (u.client_id = c.id OR (u.client_id IS NULL AND u.firm_id = c.firm_id)))`,
			clientID, userID).Scan(&reachable)
		if err != nil {
			return nil, fmt.Errorf("find user: %w", err)
		}
		if !reachable {
			return nil, &Error{Code: ENOTFOUND, Field: []any{"UserID"}, Message: "user " + userID + " not found"}
		}
		now := unix(db.now())
		res, err := tx.ExecContext(ctx, `INSERT INTO workspace_members (workspace_id, user_id, is_muted, created_at, updated_at)
			VALUES (?, ?, 0, ?, ?) ON CONFLICT DO NOTHING`, workspaceID, userID, now, now)
		if err != nil {
			return nil, fmt.Errorf("add member: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err != nil {
				return nil, fmt.Errorf("add member: %w", err)
			}
			return nil, &Error{Code: ECONFLICT, Field: []any{"UserID"}, Message: "user " + userID + " is a member of the workspace already"}
		}
		m, err := scanMember(tx.QueryRowContext(ctx, `SELECT `+memberColumns+`
			FROM workspace_members m JOIN users u ON u.id = m.user_id
			WHERE m.workspace_id = (SELECT id FROM workspaces WHERE client_id = ? AND id = ?) AND m.user_id = ?`,
			clientID, workspaceID, userID))
		if err != nil {
			return nil, err
		}
		return m, db.emit(ctx, tx, event{typ: EventWorkspaceMemberAdded, clientID: &clientID, record: m})
	})
}

// RemoveMember ends the user's membership of the client's workspace. The
// user's tasks and files stay. Returns ENOTFOUND for a workspace that is not
// the client's or a user who is not a member.
func (db *DB) RemoveMember(ctx context.Context, clientID, workspaceID, userID string) error {
	return db.update(ctx, func(ctx context.Context, tx *txn) error {
		if err := findWorkspace(ctx, tx, clientID, workspaceID); err != nil {
			return err
		}
		// The member as it was is the event's data.
		m, err := scanMember(tx.QueryRowContext(ctx, `SELECT `+memberColumns+`
			FROM workspace_members m JOIN users u ON u.id = m.user_id
			WHERE m.workspace_id = (SELECT id FROM workspaces WHERE client_id = ? AND id = ?) AND m.user_id = ?`,
			clientID, workspaceID, userID))
		if errors.Is(err, sql.ErrNoRows) {
			return &Error{Code: ENOTFOUND, Field: []any{"UserID"}, Message: "user " + userID + " is not a member of the workspace"}
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM workspace_members WHERE workspace_id = ? AND user_id = ?
			AND workspace_id IN (SELECT id FROM workspaces WHERE client_id = ?)`, workspaceID, userID, clientID); err != nil {
			return fmt.Errorf("remove member: %w", err)
		}
		return db.emit(ctx, tx, event{typ: EventWorkspaceMemberRemoved, clientID: &clientID, record: m})
	})
}

func scanMember(row scanner) (*Member, error) {
	var m Member
	var first, last, image sql.NullString
	var created, updated int64
	if err := row.Scan(&m.WorkspaceID, &m.UserID, &m.IsMuted, &created, &updated,
		&m.User.ID, &m.User.Email, &first, &last, &image); err != nil {
		return nil, fmt.Errorf("scan member: %w", err)
	}
	m.User.FirstName, m.User.LastName, m.User.Image = nullString(first), nullString(last), nullString(image)
	m.CreatedAt, m.UpdatedAt = fromUnix(created), fromUnix(updated)
	return &m, nil
}
