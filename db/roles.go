package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Role is a role of the firm's accountant users: the built-in "admin" and
// "user", or a custom one (Name "custom") with the firm's own name.
type Role struct {
	ID         string
	FirmID     string
	Name       string
	CustomName *string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

const roleColumns = `id, firm_id, name, custom_name, created_at, updated_at`

// CreateRole creates a custom role of the firm. Returns ECONFLICT when the
// firm has a custom role of that name.
func (db *DB) CreateRole(ctx context.Context, firmID, customName string) (*Role, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*Role, error) {
		var taken bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM roles WHERE firm_id = ? AND name = 'custom' AND custom_name = ?)`,
			firmID, customName).Scan(&taken); err != nil {
			return nil, fmt.Errorf("find role: %w", err)
		}
		if taken {
			return nil, Errorf(ECONFLICT, "the firm has a role named %q", customName)
		}
		now := db.now().UTC().Truncate(time.Second)
		r := &Role{ID: NewID(), FirmID: firmID, Name: "custom", CustomName: &customName, CreatedAt: now, UpdatedAt: now}
		if _, err := tx.ExecContext(ctx, `INSERT INTO roles (`+roleColumns+`) VALUES (?, ?, 'custom', ?, ?, ?)`,
			r.ID, firmID, customName, unix(now), unix(now)); err != nil {
			return nil, fmt.Errorf("create role: %w", err)
		}
		return r, nil
	})
}

// ListRoles returns the firm's roles, built-in ones first.
func (db *DB) ListRoles(ctx context.Context, firmID string) ([]*Role, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	return listRoles(ctx, tx, firmID)
}

func listRoles(ctx context.Context, tx *txn, firmID string) ([]*Role, error) {
	rows, err := tx.QueryContext(ctx, `SELECT `+roleColumns+` FROM roles WHERE firm_id = ?
		ORDER BY name = 'custom', name, custom_name, id`, firmID)
	if err != nil {
		return nil, fmt.Errorf("list roles: %w", err)
	}
	defer rows.Close()
	var roles []*Role
	for rows.Next() {
		r, err := scanRole(rows)
		if err != nil {
			return nil, err
		}
		roles = append(roles, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list roles: %w", err)
	}
	return roles, nil
}

// findRole returns the firm's role that ref names. Returns ENOTFOUND for a
// role id that is not the firm's.
func findRole(ctx context.Context, tx *txn, firmID string, ref RoleRef) (*Role, error) {
	query, arg := `SELECT `+roleColumns+` FROM roles WHERE firm_id = ? AND id = ?`, ref.ID
	if ref.ID == "" {
		query, arg = `SELECT `+roleColumns+` FROM roles WHERE firm_id = ? AND name = ? AND name <> 'custom'`, ref.Name
	}
	r, err := scanRole(tx.QueryRowContext(ctx, query, firmID, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &Error{Code: ENOTFOUND, Field: []any{"Role"}, Message: "role " + arg + " not found"}
	}
	return r, err
}

func scanRole(row scanner) (*Role, error) {
	var r Role
	var custom sql.NullString
	var created, updated int64
	if err := row.Scan(&r.ID, &r.FirmID, &r.Name, &custom, &created, &updated); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		return nil, fmt.Errorf("scan role: %w", err)
	}
	r.CustomName = nullString(custom)
	r.CreatedAt, r.UpdatedAt = fromUnix(created), fromUnix(updated)
	return &r, nil
}
