package db

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Webhook subscription statuses. A subscription whose deliveries exhaust
// their retries is failing; failing for WebhookDisableAfter, it is disabled
// and gets no new events until it is enabled again.
const (
	WebhookActive   = "active"
	WebhookFailing  = "failing"
	WebhookDisabled = "disabled"
)

// WebhookDisableAfter is how long a subscription may fail before it is
// disabled.
const WebhookDisableAfter = 5 * 24 * time.Hour

// PreviousSecretLifetime is how long deliveries are also signed with the
// secret a rotation replaced, so that receivers can switch without a gap.
const PreviousSecretLifetime = 24 * time.Hour

// AllEvents is the events list of a subscription to every event type.
const AllEvents = "*"

// Webhook is a subscription of a firm to events.
type Webhook struct {
	ID       string
	FirmID   string
	ClientID *string // nil: every client's events and the firm's own
	URL      string
	Events   []string
	// Description is the firm's note about the subscription.
	Description *string
	Secret      string
	// PreviousSecret is the secret before the last rotation while deliveries
	// are still signed with it too.
	PreviousSecret *string
	Status         string
	FailingSince   *time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// dropExpiredSecret forgets the previous secret once it no longer signs.
func (w *Webhook) dropExpiredSecret(previousExpires sql.NullInt64, now time.Time) {
	if w.PreviousSecret != nil && (!previousExpires.Valid || now.Unix() >= previousExpires.Int64) {
		w.PreviousSecret = nil
	}
}

// WebhookCreate holds the fields of a new subscription.
type WebhookCreate struct {
	URL         string
	Events      []string
	ClientID    *string
	Description *string
	Secret      string
}

// WebhookUpdate holds the fields an update may change. Enabled true makes a
// failing or disabled subscription active again; false disables it.
type WebhookUpdate struct {
	URL         Update[string]
	Events      Update[[]string]
	ClientID    Update[string]
	Description Update[string]
	Enabled     Update[bool]
}

// WebhookSorts are the sorts a subscription list accepts.
var WebhookSorts = []string{"createdAt", "updatedAt"}

const webhookColumns = `id, firm_id, client_id, url, events, description, secret, previous_secret,
	previous_secret_expires_at, status, failing_since, created_at, updated_at`

func (db *DB) scanWebhook(s scanner) (*Webhook, error) {
	var w Webhook
	var events string
	var previousExpires, failingSince sql.NullInt64
	var created, updated int64
	if err := s.Scan(&w.ID, &w.FirmID, &w.ClientID, &w.URL, &events, &w.Description, &w.Secret, &w.PreviousSecret,
		&previousExpires, &w.Status, &failingSince, &created, &updated); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(events), &w.Events); err != nil {
		return nil, fmt.Errorf("webhook %s: events: %w", w.ID, err)
	}
	w.dropExpiredSecret(previousExpires, db.now())
	w.FailingSince = nullTime(failingSince)
	w.CreatedAt, w.UpdatedAt = fromUnix(created), fromUnix(updated)
	return &w, nil
}

// checkWebhookClient returns ENOTFOUND, naming clientId, unless the client
// is the firm's.
func checkWebhookClient(ctx context.Context, tx *txn, firmID string, clientID *string) error {
	if clientID == nil {
		return nil
	}
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM clients WHERE firm_id = ? AND id = ?`, firmID, *clientID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return &Error{Code: ENOTFOUND, Field: []any{"ClientID"}, Message: fmt.Sprintf("client %s not found", *clientID)}
	}
	if err != nil {
		return fmt.Errorf("find client: %w", err)
	}
	return nil
}

// CreateWebhook stores a subscription of the firm. Returns ENOTFOUND for a
// client that is not the firm's.
func (db *DB) CreateWebhook(ctx context.Context, firmID string, in WebhookCreate) (*Webhook, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*Webhook, error) {
		if err := checkWebhookClient(ctx, tx, firmID, in.ClientID); err != nil {
			return nil, err
		}
		events, err := json.Marshal(in.Events)
		if err != nil {
			return nil, err
		}
		now := db.now().UTC().Truncate(time.Second)
		w := &Webhook{ID: NewID(), FirmID: firmID, ClientID: in.ClientID, URL: in.URL, Events: in.Events,
			Description: in.Description, Secret: in.Secret, Status: WebhookActive, CreatedAt: now, UpdatedAt: now}
		if _, err := tx.ExecContext(ctx, `INSERT INTO webhooks (id, firm_id, client_id, url, events, description, secret,
			status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			w.ID, firmID, w.ClientID, w.URL, string(events), w.Description, w.Secret, w.Status, unix(now), unix(now)); err != nil {
			return nil, fmt.Errorf("insert webhook: %w", err)
		}
		return w, nil
	})
}

// FindWebhook returns the firm's subscription, or ENOTFOUND.
func (db *DB) FindWebhook(ctx context.Context, firmID, id string) (*Webhook, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	return db.findWebhook(ctx, tx, firmID, id)
}

func (db *DB) findWebhook(ctx context.Context, tx *txn, firmID, id string) (*Webhook, error) {
	w, err := db.scanWebhook(tx.QueryRowContext(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE firm_id = ? AND id = ?`, firmID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "webhook %s not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("find webhook: %w", err)
	}
	return w, nil
}

// ListWebhooks returns a page of the firm's subscriptions.
func (db *DB) ListWebhooks(ctx context.Context, firmID string, req PageRequest) (*Page[*Webhook], error) {
	return readPage(ctx, db, list{
		table: "webhooks", columns: webhookColumns, tenant: condition{"firm_id = ?", []any{firmID}},
		sorts: map[string]sortKey{"createdAt": column("created_at"), "updatedAt": column("updated_at")},
	}, req, func(s scanner) (*Webhook, string, error) {
		w, err := db.scanWebhook(s)
		if err != nil {
			return nil, "", fmt.Errorf("scan webhook: %w", err)
		}
		return w, w.ID, nil
	})
}

// UpdateWebhook changes what u sets. Returns ENOTFOUND, also naming clientId
// for a client that is not the firm's, and EINVALID for a null url, events
// or enabled.
func (db *DB) UpdateWebhook(ctx context.Context, firmID, id string, u WebhookUpdate) (*Webhook, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*Webhook, error) {
		w, err := db.findWebhook(ctx, tx, firmID, id)
		if err != nil {
			return nil, err
		}
		if err := cmp.Or(notNull("URL", "url", u.URL), notNull("Events", "events", u.Events), notNull("Enabled", "enabled", u.Enabled)); err != nil {
			return nil, err
		}
		apply(u.URL, func(v *string) { w.URL = *v })
		apply(u.Events, func(v *[]string) { w.Events = *v })
		apply(u.ClientID, func(v *string) { w.ClientID = v })
		apply(u.Description, func(v *string) { w.Description = v })
		if err := checkWebhookClient(ctx, tx, firmID, w.ClientID); err != nil {
			return nil, err
		}
		apply(u.Enabled, func(v *bool) {
			w.FailingSince = nil
			w.Status = WebhookActive
			if !*v {
				w.Status = WebhookDisabled
			}
		})
		events, err := json.Marshal(w.Events)
		if err != nil {
			return nil, err
		}
		w.UpdatedAt = db.now().UTC().Truncate(time.Second)
		var failingSince any
		if w.FailingSince != nil {
			failingSince = unix(*w.FailingSince)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE webhooks SET url = ?, events = ?, client_id = ?, description = ?,
			status = ?, failing_since = ?, updated_at = ? WHERE firm_id = ? AND id = ?`,
			w.URL, string(events), w.ClientID, w.Description, w.Status, failingSince, unix(w.UpdatedAt), firmID, id); err != nil {
			return nil, fmt.Errorf("update webhook: %w", err)
		}
		return w, nil
	})
}

// DeleteWebhook removes the firm's subscription with its deliveries.
// Returns ENOTFOUND.
func (db *DB) DeleteWebhook(ctx context.Context, firmID, id string) error {
	return db.update(ctx, func(ctx context.Context, tx *txn) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM webhooks WHERE firm_id = ? AND id = ?`, firmID, id)
		if err != nil {
			return fmt.Errorf("delete webhook: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return Errorf(ENOTFOUND, "webhook %s not found", id)
		}
		return nil
	})
}

// RotateWebhookSecret makes secret the subscription's signing secret; the
// one it replaces still signs deliveries for PreviousSecretLifetime.
// Returns ENOTFOUND.
func (db *DB) RotateWebhookSecret(ctx context.Context, firmID, id, secret string) (*Webhook, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*Webhook, error) {
		w, err := db.findWebhook(ctx, tx, firmID, id)
		if err != nil {
			return nil, err
		}
		now := db.now().UTC().Truncate(time.Second)
		previous := w.Secret
		w.Secret, w.PreviousSecret, w.UpdatedAt = secret, &previous, now
		if _, err := tx.ExecContext(ctx, `UPDATE webhooks SET secret = ?, previous_secret = ?, previous_secret_expires_at = ?,
			updated_at = ? WHERE firm_id = ? AND id = ?`,
			secret, previous, unix(now.Add(PreviousSecretLifetime)), unix(now), firmID, id); err != nil {
			return nil, fmt.Errorf("rotate webhook secret: %w", err)
		}
		return w, nil
	})
}
