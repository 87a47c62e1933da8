package db

import (
	"context"
	"fmt"
)

// Settings names of the link-signing secrets.
const (
	linkSecret         = "link_signing_secret"
	previousLinkSecret = "link_signing_secret_previous"
)

// LinkSigningSecrets returns the current secret that signs download links and
// the one it replaced (nil before the first rotation). Returns ENOTFOUND
// before InitLinkSigningSecret.
func (db *DB) LinkSigningSecrets(ctx context.Context) (current, previous []byte, err error) {
	rows, err := db.query(ctx, `SELECT name, value FROM settings WHERE name IN (?, ?)`, linkSecret, previousLinkSecret)
	if err != nil {
		return nil, nil, fmt.Errorf("link signing secrets: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var value []byte
		if err := rows.Scan(&name, &value); err != nil {
			return nil, nil, fmt.Errorf("link signing secrets: %w", err)
		}
		if name == linkSecret {
			current = value
		} else {
			previous = value
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("link signing secrets: %w", err)
	}
	if current == nil {
		return nil, nil, Errorf(ENOTFOUND, "no link signing secret")
	}
	return current, previous, nil
}

// InitLinkSigningSecret stores secret as the link-signing secret unless one
// exists.
func (db *DB) InitLinkSigningSecret(ctx context.Context, secret []byte) error {
	return db.update(ctx, func(ctx context.Context, tx *txn) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO settings (name, value, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (name) DO NOTHING`, linkSecret, secret, unix(db.now()))
		if err != nil {
			return fmt.Errorf("init link signing secret: %w", err)
		}
		return nil
	})
}

// RotateLinkSigningSecret makes secret the current link-signing secret and
// keeps the current one as the previous, so that links it signed keep working
// until they expire. Returns ENOTFOUND before InitLinkSigningSecret.
func (db *DB) RotateLinkSigningSecret(ctx context.Context, secret []byte) error {
	return db.update(ctx, func(ctx context.Context, tx *txn) error {
		now := unix(db.now())
		res, err := tx.ExecContext(ctx, `INSERT INTO settings (name, value, updated_at)
			SELECT ?, value, ? FROM settings WHERE name = ?
			ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
			previousLinkSecret, now, linkSecret)
		if err != nil {
			return fmt.Errorf("rotate link signing secret: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err != nil {
				return fmt.Errorf("rotate link signing secret: %w", err)
			}
			return Errorf(ENOTFOUND, "no link signing secret to rotate")
		}
		if _, err := tx.ExecContext(ctx, `UPDATE settings SET value = ?, updated_at = ? WHERE name = ?`, secret, now, linkSecret); err != nil {
			return fmt.Errorf("rotate link signing secret: %w", err)
		}
		return nil
	})
}
