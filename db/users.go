package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ClientRoles are the roles of a client's users.
var ClientRoles = []string{"admin", "user"}

// ClientUser is a user of one client.
type ClientUser struct {
	ID        string
	ClientID  string
	Email     string
	FirstName *string
	LastName  *string
	Role      string
	InvitedAt *time.Time
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ClientUserInvite holds the fields of an invitation to a client.
type ClientUserInvite struct {
	Email     string // trimmed and lower-cased by the caller
	Role      string
	FirstName *string
	LastName  *string
	// WorkspaceIDs are workspaces of the client the user joins at once.
	WorkspaceIDs []string
	// Mail asks for the invitation to be mailed; nil when mail is off.
	Mail *Invitation
}

const clientUserColumns = `id, client_id, email, first_name, last_name, client_role, invited_at, created_at, updated_at`

// InviteClientUser records the invitation of a user to the client and makes
// the user a member of the workspaces named, all or nothing. Returns
// ECONFLICT when the client has a user with the email, ENOTFOUND when a
// workspace is not the client's.
func (db *DB) InviteClientUser(ctx context.Context, clientID string, in ClientUserInvite) (*ClientUser, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*ClientUser, error) {
		var taken bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE client_id = ? AND email = ?)`,
			clientID, in.Email).Scan(&taken); err != nil {
			return nil, fmt.Errorf("find user email: %w", err)
		}
		if taken {
			return nil, &Error{Code: ECONFLICT, Field: []any{"Email"}, Message: "the client has a user with the email " + in.Email}
		}
		for i, id := range in.WorkspaceIDs {
			if err := findWorkspace(ctx, tx, clientID, id); err != nil {
				return nil, withField(err, "WorkspaceIDs", i)
			}
		}
		now := db.now().UTC().Truncate(time.Second)
		u := &ClientUser{ID: NewID(), ClientID: clientID, Email: in.Email, FirstName: in.FirstName, LastName: in.LastName,
			Role: in.Role, InvitedAt: &now, CreatedAt: now, UpdatedAt: now}
		res, err := tx.ExecContext(ctx, `INSERT INTO users (firm_id, `+clientUserColumns+`)
			SELECT firm_id, ?, id, ?, ?, ?, ?, ?, ?, ? FROM clients WHERE id = ?`,
			u.ID, u.Email, u.FirstName, u.LastName, u.Role, unix(now), unix(now), unix(now), clientID)
		if err != nil {
			return nil, fmt.Errorf("invite client user: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			if err != nil {
				return nil, fmt.Errorf("invite client user: %w", err)
			}
			return nil, Errorf(ENOTFOUND, "client %s not found", clientID)
		}
		for _, id := range in.WorkspaceIDs {
			if _, err := tx.ExecContext(ctx, `INSERT INTO workspace_members (workspace_id, user_id, is_muted, created_at, updated_at)
				VALUES (?, ?, 0, ?, ?)`, id, u.ID, unix(now), unix(now)); err != nil {
				return nil, fmt.Errorf("invite client user: %w", err)
			}
		}
		if err := db.emit(ctx, tx, event{typ: EventUserInvited, clientID: &clientID, record: u}); err != nil {
			return nil, err
		}
		if in.Mail != nil {
			names, err := workspaceNames(ctx, tx, clientID, in.WorkspaceIDs)
			if err != nil {
				return nil, err
			}
			if err := db.queueInvitation(ctx, tx, in.Mail, queuedMail{clientID: &clientID, recipient: u.Email,
				data: mailData{FirstName: u.FirstName, LastName: u.LastName, Workspaces: names}}); err != nil {
				return nil, err
			}
		}
		// Each membership the invitation made is a change of its own.
		for _, id := range in.WorkspaceIDs {
			m := &Member{WorkspaceID: id, UserID: u.ID, CreatedAt: now, UpdatedAt: now,
				User: MemberUser{ID: u.ID, Email: u.Email, FirstName: u.FirstName, LastName: u.LastName}}
			if err := db.emit(ctx, tx, event{typ: EventWorkspaceMemberAdded, clientID: &clientID, record: m}); err != nil {
				return nil, err
			}
		}
		return u, nil
	})
}

// SetClientUserRole changes the role of the client's user. Returns ENOTFOUND.
func (db *DB) SetClientUserRole(ctx context.Context, clientID, id, role string) (*ClientUser, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*ClientUser, error) {
		row := tx.QueryRowContext(ctx, `UPDATE users SET client_role = ?, updated_at = ?
			WHERE client_id = ? AND id = ? RETURNING `+clientUserColumns, role, unix(db.now()), clientID, id)
		var u ClientUser
		var first, last sql.NullString
		var invited sql.NullInt64
		var created, updated int64
		err := row.Scan(&u.ID, &u.ClientID, &u.Email, &first, &last, &u.Role, &invited, &created, &updated)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, Errorf(ENOTFOUND, "user %s not found", id)
		}
		if err != nil {
			return nil, fmt.Errorf("set client user role: %w", err)
		}
		u.FirstName, u.LastName, u.InvitedAt = nullString(first), nullString(last), nullTime(invited)
		u.CreatedAt, u.UpdatedAt = fromUnix(created), fromUnix(updated)
		return &u, db.emit(ctx, tx, event{typ: EventUserUpdated, clientID: &clientID, record: &u, changes: []string{"Role"}})
	})
}

// AccountantUser is a user of the firm itself.
type AccountantUser struct {
	ID        string
	FirmID    string
	Email     string
	FirstName *string
	LastName  *string
	RoleID    string
	InvitedAt *time.Time
	CreatedAt time.Time
	UpdatedAt time.Time
	// Role is the role RoleID names.
	Role *Role
}

// RoleRef names a role of the firm: a built-in one by Name ("admin",
// "user"), or any by ID.
type RoleRef struct {
	Name string
	ID   string
}

// AccountantUserInvite holds the fields of an invitation to the firm.
type AccountantUserInvite struct {
	Email     string // trimmed and lower-cased by the caller
	FirstName *string
	LastName  *string
	Role      RoleRef
	// Mail asks for the invitation to be mailed; nil when mail is off.
	Mail *Invitation
}

// AccountantUserSorts are the sorts an accountant-user list accepts.
var AccountantUserSorts = []string{"createdAt", "updatedAt", "email", "firstName", "lastName"}

var accountantUserSortKeys = map[string]sortKey{
	"createdAt": column("created_at"),
	"updatedAt": column("updated_at"),
	"email":     column("email"),
	"firstName": {asc: "first_name_asc", desc: "first_name_desc"},
	"lastName":  {asc: "last_name_asc", desc: "last_name_desc"},
}

const accountantUserColumns = `id, firm_id, email, first_name, last_name, role_id, invited_at, created_at, updated_at`

// InviteAccountantUser records the invitation of a user to the firm with a
// role. Returns ENOTFOUND for a role id that is not the firm's, ECONFLICT
// when the firm has an accountant user with the email.
func (db *DB) InviteAccountantUser(ctx context.Context, firmID string, in AccountantUserInvite) (*AccountantUser, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*AccountantUser, error) {
		role, err := findRole(ctx, tx, firmID, in.Role)
		if err != nil {
			return nil, err
		}
		var taken bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE firm_id = ? AND client_id IS NULL AND email = ?)`,
			firmID, in.Email).Scan(&taken); err != nil {
			return nil, fmt.Errorf("find user email: %w", err)
		}
		if taken {
			return nil, &Error{Code: ECONFLICT, Field: []any{"Email"}, Message: "the firm has a user with the email " + in.Email}
		}
		now := db.now().UTC().Truncate(time.Second)
		u := &AccountantUser{ID: NewID(), FirmID: firmID, Email: in.Email, FirstName: in.FirstName, LastName: in.LastName,
			RoleID: role.ID, Role: role, InvitedAt: &now, CreatedAt: now, UpdatedAt: now}
		if _, err := tx.ExecContext(ctx, `INSERT INTO users (`+accountantUserColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			u.ID, firmID, u.Email, u.FirstName, u.LastName, u.RoleID, unix(now), unix(now), unix(now)); err != nil {
			return nil, fmt.Errorf("invite accountant user: %w", err)
		}
		if err := db.queueInvitation(ctx, tx, in.Mail, queuedMail{firmID: firmID, recipient: u.Email,
			data: mailData{FirstName: u.FirstName, LastName: u.LastName}}); err != nil {
			return nil, err
		}
		return u, db.emit(ctx, tx, event{typ: EventAccountantUserInvited, firmID: firmID, record: u})
	})
}

// FindAccountantUser returns the firm's accountant user. Returns ENOTFOUND,
// also for the id of a client's user.
func (db *DB) FindAccountantUser(ctx context.Context, firmID, id string) (*AccountantUser, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	return findAccountantUser(ctx, tx, firmID, id)
}

func findAccountantUser(ctx context.Context, tx *txn, firmID, id string) (*AccountantUser, error) {
	u, _, err := scanAccountantUser(tx.QueryRowContext(ctx, `SELECT `+accountantUserColumns+` FROM users
		WHERE firm_id = ? AND client_id IS NULL AND id = ?`, firmID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "user %s not found", id)
	}
	if err != nil {
		return nil, err
	}
	if u.Role, err = findRole(ctx, tx, firmID, RoleRef{ID: u.RoleID}); err != nil {
		return nil, err
	}
	return u, nil
}

// SetAccountantUserRole gives the firm's accountant user another role.
// Returns ENOTFOUND for the user or a role id that is not the firm's.
func (db *DB) SetAccountantUserRole(ctx context.Context, firmID, id string, ref RoleRef) (*AccountantUser, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*AccountantUser, error) {
		role, err := findRole(ctx, tx, firmID, ref)
		if err != nil {
			return nil, err
		}
		res, err := tx.ExecContext(ctx, `UPDATE users SET role_id = ?, updated_at = ?
			WHERE firm_id = ? AND client_id IS NULL AND id = ?`, role.ID, unix(db.now()), firmID, id)
		if err != nil {
			return nil, fmt.Errorf("set accountant user role: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err != nil {
				return nil, fmt.Errorf("set accountant user role: %w", err)
			}
			return nil, Errorf(ENOTFOUND, "user %s not found", id)
		}
		u, err := findAccountantUser(ctx, tx, firmID, id)
		if err != nil {
			return nil, err
		}
		return u, db.emit(ctx, tx, event{typ: EventAccountantUserUpdated, firmID: firmID, record: u, changes: []string{"Role"}})
	})
}

// ListAccountantUsers returns a page of the firm's accountant users.
func (db *DB) ListAccountantUsers(ctx context.Context, firmID string, req PageRequest) (*Page[*AccountantUser], error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()

	tenant := condition{"firm_id = ? AND client_id IS NULL", []any{firmID}}
	page, err := paginate(ctx, tx, list{
		table: "users", columns: accountantUserColumns, tenant: tenant,
		sorts: accountantUserSortKeys,
	}, req, scanAccountantUser)
	if err != nil {
		return nil, err
	}
	roles, err := listRoles(ctx, tx, firmID)
	if err != nil {
		return nil, err
	}
	byID := map[string]*Role{}
	for _, r := range roles {
		byID[r.ID] = r
	}
	for _, u := range page.Items {
		u.Role = byID[u.RoleID]
	}
	return page, nil
}

func scanAccountantUser(row scanner) (*AccountantUser, string, error) {
	var u AccountantUser
	var first, last sql.NullString
	var invited sql.NullInt64
	var created, updated int64
	if err := row.Scan(&u.ID, &u.FirmID, &u.Email, &first, &last, &u.RoleID, &invited, &created, &updated); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, "", err
		}
		return nil, "", fmt.Errorf("scan accountant user: %w", err)
	}
	u.FirstName, u.LastName, u.InvitedAt = nullString(first), nullString(last), nullTime(invited)
	u.CreatedAt, u.UpdatedAt = fromUnix(created), fromUnix(updated)
	return &u, u.ID, nil
}
