package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Firm is an accounting firm: the top-level tenant.
type Firm struct {
	ID        string
	Name      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// CreateFirm creates a firm with its built-in roles, admin and user.
func (db *DB) CreateFirm(ctx context.Context, name string) (*Firm, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*Firm, error) {
		now := db.now().UTC().Truncate(time.Second)
		firm := &Firm{ID: NewID(), Name: name, CreatedAt: now, UpdatedAt: now}
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO firms (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)`,
			firm.ID, firm.Name, unix(now), unix(now)); err != nil {
			return nil, fmt.Errorf("create firm: %w", err)
		}
		for _, role := range []string{"admin", "user"} {
			if _, err := tx.ExecContext(ctx,
				`INSERT INTO roles (id, firm_id, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
				NewID(), firm.ID, role, unix(now), unix(now)); err != nil {
				return nil, fmt.Errorf("create firm roles: %w", err)
			}
		}
		return firm, nil
	})
}

// DeploymentFirm returns the firm this deployment was set up for: the first
// one created. Returns ENOTFOUND on a database without a firm.
func (db *DB) DeploymentFirm(ctx context.Context) (*Firm, error) {
	var f Firm
	var created, updated int64
	err := db.queryRow(ctx,
		`SELECT id, name, created_at, updated_at FROM firms ORDER BY created_at, id LIMIT 1`).
		Scan(&f.ID, &f.Name, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "no firm has been set up")
	}
	if err != nil {
		return nil, fmt.Errorf("find firm: %w", err)
	}
	f.CreatedAt, f.UpdatedAt = fromUnix(created), fromUnix(updated)
	return &f, nil
}
