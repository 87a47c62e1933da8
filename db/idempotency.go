package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// IdempotencyRetention is how long the answer to a request sent with an
// Idempotency-Key is replayed to its retries.
const IdempotencyRetention = 24 * time.Hour

// IdempotencyKey names a request: the API key that sent it and the value of
// its Idempotency-Key header. Keys of different API keys never meet.
type IdempotencyKey struct {
	APIKeyID string
	Key      string
}

// IdempotentAnswer is the recorded answer to a request.
type IdempotentAnswer struct {
	// Fingerprint identifies the request the answer belongs to; nil when the
	// request's write committed but the server stopped before it recorded
	// the answer.
	Fingerprint []byte
	Status      int
	ContentType string
	Body        []byte
}

// IdempotencyKeyFinder finds the idempotency key of the request a write
// serves, if it has one. The request and its context are the HTTP layer's:
// cmd gives its finder to Open.
type IdempotencyKeyFinder func(ctx context.Context) (IdempotencyKey, bool)

// recordIdempotencyKey runs in the transaction of every write whose request
// has a key, so that a write that committed is known to have happened even
// if the server stops before SaveIdempotentAnswer. A later write of the same
// request finds the row its first write made and leaves it.
func (db *DB) recordIdempotencyKey(ctx context.Context, tx *txn) error {
	if db.idempotencyKey == nil {
		return nil
	}
	k, ok := db.idempotencyKey(ctx)
	if !ok {
		return nil
	}
	now := db.now()
	_, err := tx.ExecContext(ctx, `INSERT INTO idempotency_keys (api_key_id, key, created_at) VALUES (?, ?, ?)
		ON CONFLICT DO UPDATE SET fingerprint = NULL, status = NULL, content_type = NULL, body = NULL,
			created_at = excluded.created_at
		WHERE idempotency_keys.created_at < ?`,
		k.APIKeyID, k.Key, unix(now), unix(now.Add(-IdempotencyRetention)))
	if err != nil {
		return fmt.Errorf("record idempotency key: %w", err)
	}
	return nil
}

// IdempotentAnswer returns the answer recorded for k within the retention
// period, or ENOTFOUND.
func (db *DB) IdempotentAnswer(ctx context.Context, k IdempotencyKey) (*IdempotentAnswer, error) {
	var a IdempotentAnswer
	var status sql.NullInt64
	var contentType sql.NullString
	err := db.queryRow(ctx, `SELECT fingerprint, status, content_type, body FROM idempotency_keys
		WHERE api_key_id = ? AND key = ? AND created_at >= ?`,
		k.APIKeyID, k.Key, unix(db.now().Add(-IdempotencyRetention))).Scan(&a.Fingerprint, &status, &contentType, &a.Body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "no answer recorded for this idempotency key")
	}
	if err != nil {
		return nil, fmt.Errorf("find idempotency key: %w", err)
	}
	a.Status, a.ContentType = int(status.Int64), contentType.String
	return &a, nil
}

// idempotencyPurgeEvery spaces out the deletions of expired answers.
const idempotencyPurgeEvery = time.Minute

// SaveIdempotentAnswer records the answer to the request k names, replacing
// the row its write recorded, and now and then deletes the answers past
// their retention.
func (db *DB) SaveIdempotentAnswer(ctx context.Context, k IdempotencyKey, a IdempotentAnswer) error {
	return db.update(ctx, func(ctx context.Context, tx *txn) error {
		now := db.now()
		_, err := tx.ExecContext(ctx, `INSERT INTO idempotency_keys
			(api_key_id, key, fingerprint, status, content_type, body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT DO UPDATE SET fingerprint = excluded.fingerprint, status = excluded.status,
				content_type = excluded.content_type, body = excluded.body, created_at = excluded.created_at`,
			k.APIKeyID, k.Key, a.Fingerprint, a.Status, a.ContentType, a.Body, unix(now))
		if err != nil {
			return fmt.Errorf("save idempotent answer: %w", err)
		}
		last := db.idempotencyPurgedAt.Load()
		if now.Unix()-last < int64(idempotencyPurgeEvery/time.Second) || !db.idempotencyPurgedAt.CompareAndSwap(last, now.Unix()) {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE created_at < ?`,
			unix(now.Add(-IdempotencyRetention))); err != nil {
			return fmt.Errorf("purge idempotency keys: %w", err)
		}
		return nil
	})
}
