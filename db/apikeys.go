package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// APIKey is a stored API key. The secret itself is never stored: SecretHash
// is its SHA-256.
type APIKey struct {
	ID                string
	FirmID            string
	ClientID          *string // nil for an accountant key
	Name              string
	SecretHash        []byte
	Permissions       []string
	RateLimitMax      int
	RateLimitWindowMS int64
	ExpiresAt         *time.Time
	RevokedAt         *time.Time
	CreatedAt         time.Time
}

// APIKeyCreate holds the fields of a new key. ID must be new: the caller
// builds the key string from it before storing the hash of its secret.
type APIKeyCreate struct {
	ID                string
	ClientID          *string
	Name              string
	SecretHash        []byte
	Permissions       []string
	RateLimitMax      int
	RateLimitWindowMS int64
	ExpiresAt         *time.Time
}

const apiKeyColumns = `id, firm_id, client_id, name, secret_hash, permissions,
	rate_limit_max, rate_limit_window_ms, expires_at, revoked_at, created_at`

// CreateAPIKey stores a key of the firm. A client key's client must belong to
// the firm: else ENOTFOUND.
func (db *DB) CreateAPIKey(ctx context.Context, firmID string, in APIKeyCreate) (*APIKey, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*APIKey, error) {
		if in.ClientID != nil {
			var one int
			err := tx.QueryRowContext(ctx, `SELECT 1 FROM clients WHERE firm_id = ? AND id = ?`, firmID, *in.ClientID).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				return nil, Errorf(ENOTFOUND, "client %s not found", *in.ClientID)
			}
			if err != nil {
				return nil, fmt.Errorf("find client: %w", err)
			}
		}
		now := db.now().UTC().Truncate(time.Second)
		if in.ExpiresAt != nil {
			// Stored to the second, so return what FindAPIKey will.
			e := in.ExpiresAt.UTC().Truncate(time.Second)
			in.ExpiresAt = &e
		}
		k := &APIKey{
			ID: in.ID, FirmID: firmID, ClientID: in.ClientID, Name: in.Name, SecretHash: in.SecretHash,
			Permissions: in.Permissions, RateLimitMax: in.RateLimitMax, RateLimitWindowMS: in.RateLimitWindowMS,
			ExpiresAt: in.ExpiresAt, CreatedAt: now,
		}
		var expires *int64
		if in.ExpiresAt != nil {
			e := unix(*in.ExpiresAt)
			expires = &e
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO api_keys (`+apiKeyColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)`,
			k.ID, firmID, k.ClientID, k.Name, k.SecretHash, strings.Join(k.Permissions, " "),
			k.RateLimitMax, k.RateLimitWindowMS, expires, unix(now)); err != nil {
			return nil, fmt.Errorf("create api key: %w", err)
		}
		return k, nil
	})
}

// FindAPIKey returns the key with the id, revoked or not: authentication
// starts here, before any tenant is known, and the key's row names its tenant.
// Returns ENOTFOUND.
func (db *DB) FindAPIKey(ctx context.Context, id string) (*APIKey, error) {
	row := db.queryRow(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE id = ?`, id)
	k, err := scanAPIKey(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "api key not found")
	}
	return k, err
}

// ListAPIKeys returns the firm's keys, oldest first.
func (db *DB) ListAPIKeys(ctx context.Context, firmID string) ([]*APIKey, error) {
	rows, err := db.query(ctx,
		`SELECT `+apiKeyColumns+` FROM api_keys WHERE firm_id = ? ORDER BY created_at, id`, firmID)
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	defer rows.Close()
	var keys []*APIKey
	for rows.Next() {
		k, err := scanAPIKey(rows)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	return keys, nil
}

// RevokeAPIKey marks the firm's key revoked. Revoking twice keeps the first
// time. Returns ENOTFOUND.
func (db *DB) RevokeAPIKey(ctx context.Context, firmID, id string) (*APIKey, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*APIKey, error) {
		now := db.now().UTC().Truncate(time.Second)
		row := tx.QueryRowContext(ctx, `UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?)
			WHERE firm_id = ? AND id = ? RETURNING `+apiKeyColumns, unix(now), firmID, id)
		k, err := scanAPIKey(row)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, Errorf(ENOTFOUND, "api key %s not found", id)
		}
		if err != nil {
			return nil, err
		}
		return k, nil
	})
}

func scanAPIKey(row interface{ Scan(...any) error }) (*APIKey, error) {
	var k APIKey
	var client sql.NullString
	var perms string
	var expires, revoked sql.NullInt64
	var created int64
	if err := row.Scan(&k.ID, &k.FirmID, &client, &k.Name, &k.SecretHash, &perms,
		&k.RateLimitMax, &k.RateLimitWindowMS, &expires, &revoked, &created); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		return nil, fmt.Errorf("scan api key: %w", err)
	}
	k.ClientID = nullString(client)
	k.Permissions = strings.Fields(perms)
	k.ExpiresAt, k.RevokedAt = nullTime(expires), nullTime(revoked)
	k.CreatedAt = fromUnix(created)
	return &k, nil
}
