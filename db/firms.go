package db

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Firm is an accounting firm: the top-level tenant.
type Firm struct {
	ID   string
	Name string
	// MailFromName is the sender name of the firm's mails; nil: its Name.
	MailFromName *string
	// Locale is the language ("en" or "de") of the collects and invitations
	// whose request names none.
	Locale    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

const firmColumns = `id, name, mail_from_name, locale, created_at, updated_at`

func scanFirm(s scanner) (*Firm, error) {
	var f Firm
	var created, updated int64
	if err := s.Scan(&f.ID, &f.Name, &f.MailFromName, &f.Locale, &created, &updated); err != nil {
		return nil, err
	}
	f.CreatedAt, f.UpdatedAt = fromUnix(created), fromUnix(updated)
	return &f, nil
}

// CreateFirm creates a firm with its built-in roles, admin and user.
func (db *DB) CreateFirm(ctx context.Context, name string) (*Firm, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*Firm, error) {
		now := db.now().UTC().Truncate(time.Second)
		firm := &Firm{ID: NewID(), Name: name, Locale: "en", CreatedAt: now, UpdatedAt: now}
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO firms (id, name, locale, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
			firm.ID, firm.Name, firm.Locale, unix(now), unix(now)); err != nil {
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
	f, err := scanFirm(db.queryRow(ctx, `SELECT `+firmColumns+` FROM firms ORDER BY created_at, id LIMIT 1`))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "no firm has been set up")
	}
	if err != nil {
		return nil, fmt.Errorf("find firm: %w", err)
	}
	return f, nil
}

// GetFirm returns the firm. Returns ENOTFOUND when there is none by the id.
func (db *DB) GetFirm(ctx context.Context, id string) (*Firm, error) {
	f, err := scanFirm(db.queryRow(ctx, `SELECT `+firmColumns+` FROM firms WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "firm %s not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get firm: %w", err)
	}
	return f, nil
}

// FirmUpdate is a partial update of a firm: unset fields stay as they are.
type FirmUpdate struct {
	Name Update[string]
	// MailFromName set to null makes the mails' sender name the firm's name.
	MailFromName Update[string]
	Locale       Update[string]
}

// UpdateFirm changes the firm and records a firm.updated event. The upload
// pages and the mails read the firm's names when they are shown or sent, so
// the change reaches them at once. Returns ENOTFOUND when there is no firm
// by the id, and EINVALID for a null name or locale or a locale other than
// en or de.
func (db *DB) UpdateFirm(ctx context.Context, id string, u FirmUpdate) (*Firm, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*Firm, error) {
		f, err := scanFirm(tx.QueryRowContext(ctx, `SELECT `+firmColumns+` FROM firms WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return nil, Errorf(ENOTFOUND, "firm %s not found", id)
		}
		if err != nil {
			return nil, fmt.Errorf("update firm: %w", err)
		}
		if err := cmp.Or(notNull("Name", "name", u.Name), notNull("Locale", "locale", u.Locale)); err != nil {
			return nil, err
		}
		if u.Locale.Set && *u.Locale.Value != "en" && *u.Locale.Value != "de" {
			return nil, &Error{Code: EINVALID, Field: []any{"Locale"}, Message: "locale must be en or de, not " + strconv.Quote(*u.Locale.Value)}
		}
		apply(u.Name, func(v *string) { f.Name = *v })
		apply(u.MailFromName, func(v *string) { f.MailFromName = v })
		apply(u.Locale, func(v *string) { f.Locale = *v })
		f.UpdatedAt = db.now().UTC().Truncate(time.Second)
		if _, err := tx.ExecContext(ctx, `UPDATE firms SET name = ?, mail_from_name = ?, locale = ?, updated_at = ? WHERE id = ?`,
			f.Name, f.MailFromName, f.Locale, unix(f.UpdatedAt), id); err != nil {
			return nil, fmt.Errorf("update firm: %w", err)
		}
		return f, db.emit(ctx, tx, event{typ: EventFirmUpdated, firmID: id, record: f, changes: u.fields()})
	})
}

// fields names the fields u sets.
func (u FirmUpdate) fields() []string {
	var names []string
	for _, f := range []struct {
		set  bool
		name string
	}{{u.Name.Set, "Name"}, {u.MailFromName.Set, "MailFromName"}, {u.Locale.Set, "Locale"}} {
		if f.set {
			names = append(names, f.name)
		}
	}
	return names
}
