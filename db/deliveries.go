package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Delivery statuses: pending until an attempt succeeds or the retries are
// exhausted.
const (
	DeliveryPending   = "pending"
	DeliverySucceeded = "succeeded"
	DeliveryFailed    = "failed"
)

// DueDelivery is a delivery whose next attempt is due, with what sending it
// needs.
type DueDelivery struct {
	ID        string
	WebhookID string
	URL       string
	// Secrets sign the delivery: the current one, and the previous one while
	// it is still valid.
	Secrets  []string
	EventID  string
	Payload  []byte
	Attempts int
}

// DueDeliveries returns up to limit deliveries due at now, at most one per
// subscription: the oldest pending one, so that each subscription gets its
// events in the order they were made.
func (db *DB) DueDeliveries(ctx context.Context, limit int) ([]DueDelivery, error) {
	now := unix(db.now())
	rows, err := db.query(ctx, `SELECT d.id, w.id, w.url, w.secret,
			CASE WHEN w.previous_secret_expires_at > ? THEN w.previous_secret END, e.id, e.payload, d.attempts
		FROM webhooks w
		JOIN webhook_deliveries d ON d.id = (SELECT id FROM webhook_deliveries
			WHERE webhook_id = w.id AND status = 'pending' ORDER BY event_seq LIMIT 1)
		JOIN webhook_events e ON e.seq = d.event_seq
		WHERE w.status <> 'disabled' AND d.next_attempt_at <= ?
		ORDER BY d.next_attempt_at, d.id LIMIT ?`, now, now, limit)
	if err != nil {
		return nil, fmt.Errorf("due deliveries: %w", err)
	}
	defer rows.Close()
	var due []DueDelivery
	for rows.Next() {
		var d DueDelivery
		var secret string
		var previous sql.NullString
		if err := rows.Scan(&d.ID, &d.WebhookID, &d.URL, &secret, &previous, &d.EventID, &d.Payload, &d.Attempts); err != nil {
			return nil, fmt.Errorf("due deliveries: %w", err)
		}
		d.Secrets = []string{secret}
		if previous.Valid {
			d.Secrets = append(d.Secrets, previous.String)
		}
		due = append(due, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("due deliveries: %w", err)
	}
	return due, nil
}

// AttemptResult is the outcome of one attempt to deliver.
type AttemptResult struct {
	At         time.Time
	Duration   time.Duration
	StatusCode int    // 0 when no answer came
	Error      string // "" for a success
	// Retry is when to try again after a failure; nil when the retries are
	// exhausted, which fails the delivery for good.
	Retry *time.Time
}

// RecordAttempt records an attempt of the delivery and its consequences: a
// success ends the delivery and makes its subscription active again; a
// failure schedules the retry or, with none left, fails the delivery and
// marks the subscription failing, disabled once it has been failing for
// WebhookDisableAfter. Returns ENOTFOUND for a delivery no longer pending
// (its subscription deleted, or it ended meanwhile).
func (db *DB) RecordAttempt(ctx context.Context, deliveryID string, r AttemptResult) error {
	return db.update(ctx, func(ctx context.Context, tx *txn) error {
		var webhookID string
		var attempts int
		err := tx.QueryRowContext(ctx, `SELECT webhook_id, attempts FROM webhook_deliveries WHERE id = ? AND status = 'pending'`,
			deliveryID).Scan(&webhookID, &attempts)
		if errors.Is(err, sql.ErrNoRows) {
			return Errorf(ENOTFOUND, "delivery %s is not pending", deliveryID)
		}
		if err != nil {
			return fmt.Errorf("find delivery: %w", err)
		}
		at := unix(r.At)
		var code, errText any
		if r.StatusCode != 0 {
			code = r.StatusCode
		}
		if r.Error != "" {
			errText = r.Error
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_attempts (delivery_id, n, at, duration_ms, status_code, error)
			VALUES (?, ?, ?, ?, ?, ?)`, deliveryID, attempts+1, at, r.Duration.Milliseconds(), code, errText); err != nil {
			return fmt.Errorf("record attempt: %w", err)
		}
		status, next := DeliverySucceeded, any(nil)
		switch {
		case r.Error == "":
		case r.Retry != nil:
			status, next = DeliveryPending, unix(*r.Retry)
		default:
			status = DeliveryFailed
		}
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1,
			next_attempt_at = ?, updated_at = ? WHERE id = ?`, status, next, at, deliveryID); err != nil {
			return fmt.Errorf("record attempt: %w", err)
		}
		switch status {
		case DeliverySucceeded:
			_, err = tx.ExecContext(ctx, `UPDATE webhooks SET status = 'active', failing_since = NULL
				WHERE id = ? AND status = 'failing'`, webhookID)
		case DeliveryFailed:
			_, err = tx.ExecContext(ctx, `UPDATE webhooks SET
				status = CASE WHEN failing_since IS NOT NULL AND failing_since <= ? THEN 'disabled' ELSE 'failing' END,
				failing_since = coalesce(failing_since, ?)
				WHERE id = ? AND status <> 'disabled'`, at-int64(WebhookDisableAfter/time.Second), at, webhookID)
		}
		if err != nil {
			return fmt.Errorf("update webhook status: %w", err)
		}
		return nil
	})
}

// Delivery is a delivery of an event to a subscription, with its attempts.
type Delivery struct {
	ID            string
	WebhookID     string
	EventID       string
	EventType     string
	Status        string
	NextAttemptAt *time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
	Attempts      []Attempt
}

// Attempt is one recorded attempt of a delivery.
type Attempt struct {
	At         time.Time
	Duration   time.Duration
	StatusCode *int
	Error      *string
}

// DeliverySorts are the sorts a delivery list accepts.
var DeliverySorts = []string{"createdAt"}

// ListDeliveries returns a page of the deliveries of the firm's
// subscription, each with its attempts. Returns ENOTFOUND for a
// subscription that is not the firm's.
func (db *DB) ListDeliveries(ctx context.Context, firmID, webhookID string, req PageRequest) (*Page[*Delivery], error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if _, err := db.findWebhook(ctx, tx, firmID, webhookID); err != nil {
		return nil, err
	}
	tenant := condition{"webhook_id = (SELECT id FROM webhooks WHERE firm_id = ? AND id = ?)", []any{firmID, webhookID}}
	page, err := paginate(ctx, tx, list{
		table: "webhook_deliveries", columns: deliveryColumns, tenant: tenant,
		sorts: map[string]sortKey{"createdAt": column("created_at")},
	}, req, func(s scanner) (*Delivery, string, error) {
		d, err := scanDelivery(s)
		if err != nil {
			return nil, "", err
		}
		return d, d.ID, nil
	})
	if err != nil {
		return nil, err
	}
	if err := addAttempts(ctx, tx, firmID, webhookID, page.Items); err != nil {
		return nil, err
	}
	return page, nil
}

const deliveryColumns = `id, webhook_id, (SELECT id FROM webhook_events WHERE seq = event_seq),
	(SELECT type FROM webhook_events WHERE seq = event_seq), status, next_attempt_at, created_at, updated_at`

func scanDelivery(s scanner) (*Delivery, error) {
	var d Delivery
	var next sql.NullInt64
	var created, updated int64
	if err := s.Scan(&d.ID, &d.WebhookID, &d.EventID, &d.EventType, &d.Status, &next, &created, &updated); err != nil {
		return nil, fmt.Errorf("scan delivery: %w", err)
	}
	d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = nullTime(next), fromUnix(created), fromUnix(updated)
	return &d, nil
}

// addAttempts fills in the attempts of the deliveries, with one query for
// all of them (a page holds up to 100).
func addAttempts(ctx context.Context, tx *txn, firmID, webhookID string, deliveries []*Delivery) error {
	if len(deliveries) == 0 {
		return nil
	}
	byID := make(map[string]*Delivery, len(deliveries))
	ids := make([]any, len(deliveries))
	for i, d := range deliveries {
		d.Attempts = []Attempt{}
		byID[d.ID], ids[i] = d, d.ID
	}
	rows, err := tx.QueryContext(ctx, `SELECT a.delivery_id, a.at, a.duration_ms, a.status_code, a.error
		FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
		WHERE d.webhook_id = (SELECT id FROM webhooks WHERE firm_id = ? AND id = ?)
		AND a.delivery_id IN (`+placeholders(len(ids))+`) ORDER BY a.delivery_id, a.n`, append([]any{firmID, webhookID}, ids...)...)
	if err != nil {
		return fmt.Errorf("delivery attempts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var a Attempt
		var deliveryID string
		var at, ms int64
		var code sql.NullInt64
		var errText sql.NullString
		if err := rows.Scan(&deliveryID, &at, &ms, &code, &errText); err != nil {
			return fmt.Errorf("delivery attempts: %w", err)
		}
		a.At, a.Duration, a.Error = fromUnix(at), time.Duration(ms)*time.Millisecond, nullString(errText)
		if code.Valid {
			c := int(code.Int64)
			a.StatusCode = &c
		}
		d := byID[deliveryID]
		d.Attempts = append(d.Attempts, a)
	}
	return rows.Err()
}

// RetryDelivery makes a delivery of the firm's subscription pending and due
// now, whatever its status, so that it is sent again (after the pending
// deliveries of older events of the subscription), and returns it.
// Returns ENOTFOUND.
func (db *DB) RetryDelivery(ctx context.Context, firmID, webhookID, deliveryID string) (*Delivery, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*Delivery, error) {
		now := unix(db.now())
		d, err := scanDelivery(tx.QueryRowContext(ctx, `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?, updated_at = ?
			WHERE id = ? AND webhook_id = (SELECT id FROM webhooks WHERE firm_id = ? AND id = ?)
			RETURNING `+deliveryColumns, now, now, deliveryID, firmID, webhookID))
		if errors.Is(err, sql.ErrNoRows) {
			return nil, Errorf(ENOTFOUND, "delivery %s not found", deliveryID)
		}
		if err != nil {
			return nil, fmt.Errorf("retry delivery: %w", err)
		}
		if err := addAttempts(ctx, tx, firmID, webhookID, []*Delivery{d}); err != nil {
			return nil, err
		}
		tx.deliveriesDue = true
		return d, nil
	})
}

// DeliveryRetention is how long a delivery that ended (succeeded, or failed
// for good) is kept, with its attempts, for GET .../deliveries: 30 days after
// its last change. A pending delivery is kept until it ends; a retry makes an
// ended one pending again and so restarts its retention.
const DeliveryRetention = 30 * 24 * time.Hour

// PurgeDeliveries deletes the deliveries that are no longer pending and
// were last updated before before, with their attempts, then the events
// left with no delivery (also those of deleted subscriptions), and returns
// how many deliveries it deleted. The dispatcher calls it with
// now - DeliveryRetention.
func (db *DB) PurgeDeliveries(ctx context.Context, before time.Time) (int, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (int, error) {
		res, err := tx.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE status <> 'pending' AND updated_at < ?`, unix(before))
		if err != nil {
			return 0, fmt.Errorf("purge deliveries: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, fmt.Errorf("purge deliveries: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_events
			WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries WHERE event_seq = webhook_events.seq)`); err != nil {
			return 0, fmt.Errorf("purge events: %w", err)
		}
		return int(n), nil
	})
}
