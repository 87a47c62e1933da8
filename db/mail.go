package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// The kinds of mail the store queues.
const (
	MailCollectLink          = "collect_link"
	MailCollectReminder      = "collect_reminder"
	MailClientInvitation     = "client_invitation"
	MailAccountantInvitation = "accountant_invitation"
)

// The states of a queued mail.
const (
	MailQueued    = "queued"
	MailSending   = "sending"
	MailSent      = "sent"
	MailFailed    = "failed"
	MailCancelled = "cancelled"
)

// MailLocales are the languages a mail is written in.
var MailLocales = []string{"en", "de"}

// ReminderTimes are how long before a collect's due date each reminder of
// a mailed link goes out, while required items are missing.
var ReminderTimes = []time.Duration{72 * time.Hour, 24 * time.Hour}

// MailRetention is how long a mail that ended (sent, failed, cancelled) is
// kept, for the session list's mail state, before the sender purges it.
const MailRetention = 30 * 24 * time.Hour

// Invitation asks for an invitation to be mailed in Locale ("en" or "de";
// "": the firm's).
type Invitation struct {
	Locale string
}

// SessionMail asks for a new collect session's link to be mailed to Email,
// and the reminders too unless NoReminders. Link is the page address the
// mail carries: it holds the token, which the store keeps only as a hash,
// so it is stored with the queued mails alone, and erased when they end.
type SessionMail struct {
	Email       string
	NoReminders bool
	// Link is "" when mail is off: the session keeps its address and no
	// mail is queued.
	Link string
}

// SessionMailState is the state of the mail that carried a session's link.
type SessionMailState struct {
	Status string // MailQueued (MailSending counts as queued), MailSent or MailFailed
	// Error is the relay's last answer after a failed attempt.
	Error  *string
	SentAt *time.Time
}

// mailData is what a mail says beyond the rows it names, kept as JSON in
// its row until it ends.
type mailData struct {
	Link       string   `json:"link,omitempty"`
	FirstName  *string  `json:"firstName,omitempty"`
	LastName   *string  `json:"lastName,omitempty"`
	Workspaces []string `json:"workspaces,omitempty"`
}

// queuedMail is a mail to write to the outbox.
type queuedMail struct {
	firmID       string
	clientID     *string
	kind         string
	recipient    string
	locale       string
	sessionID    *string
	remindBefore *time.Duration
	data         mailData
}

// queueMail writes m to the outbox in the transaction of the change that
// calls for it, with its Message-ID, and tells the sender after the commit.
// A reminder waits for its collect's due date; every other mail is due now.
func (db *DB) queueMail(ctx context.Context, tx *txn, m queuedMail) error {
	data, err := json.Marshal(m.data)
	if err != nil {
		return fmt.Errorf("queue mail: %w", err)
	}
	now := unix(db.now())
	var next, before any = now, nil
	if m.remindBefore != nil {
		next, before = nil, int64(*m.remindBefore/time.Second)
	}
	var counted any
	if m.remindBefore == nil {
		// A reminder counts when it goes out; every other mail now.
		if err := db.checkMailQuota(ctx, tx, m.firmID, now); err != nil {
			return err
		}
		counted = now
	}
	messageID := "<" + uuid.NewString() + "@" + db.mailHost + ">"
	if _, err := tx.ExecContext(ctx, `INSERT INTO mail_outbox (id, firm_id, client_id, kind, recipient, locale, message_id,
		session_id, remind_before, data, status, attempts, next_attempt_at, created_at, updated_at, counted_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', 0, ?, ?, ?, ?)`,
		NewID(), m.firmID, m.clientID, m.kind, m.recipient, m.locale, messageID, m.sessionID, before, string(data),
		next, now, now, counted); err != nil {
		return fmt.Errorf("queue mail: %w", err)
	}
	tx.mailQueued = true
	return nil
}

// mailQuotaWindow is the period of a firm's mail quota.
const mailQuotaWindow = int64(time.Hour / time.Second)

// mailQuotaFull returns how long until the firm's hourly quota has room for
// one more mail at now, in seconds; 0 when it has room now.
func (db *DB) mailQuotaFull(ctx context.Context, tx *txn, firmID string, now int64) (int64, error) {
	var count int64
	var oldest sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT count(*), min(counted_at) FROM mail_outbox
		WHERE firm_id = ? AND counted_at > ?`, firmID, now-mailQuotaWindow).Scan(&count, &oldest); err != nil {
		return 0, fmt.Errorf("mail quota: %w", err)
	}
	if count < int64(db.mailQuota) {
		return 0, nil
	}
	return max(oldest.Int64+mailQuotaWindow-now, 1), nil
}

// checkMailQuota refuses, with a *QuotaError, a mail past the firm's quota.
func (db *DB) checkMailQuota(ctx context.Context, tx *txn, firmID string, now int64) error {
	wait, err := db.mailQuotaFull(ctx, tx, firmID, now)
	if err != nil || wait == 0 {
		return err
	}
	return &QuotaError{RetryAfter: time.Duration(wait) * time.Second, err: &Error{Code: EQUOTA,
		Message: fmt.Sprintf("the firm has mailed its %d mails of the last hour: nothing was created or queued; retry in %d s", db.mailQuota, wait)}}
}

// queueSessionMail records where a new session's link goes, and queues the
// link and, unless turned off, the reminders.
func (db *DB) queueSessionMail(ctx context.Context, tx *txn, s *CollectSession, in *SessionMail) error {
	if in == nil {
		return nil
	}
	s.Email, s.Reminders = &in.Email, !in.NoReminders
	if _, err := tx.ExecContext(ctx, `UPDATE collect_sessions SET email = ?, reminders = ? WHERE client_id = ? AND id = ?`,
		in.Email, s.Reminders, s.ClientID, s.ID); err != nil {
		return fmt.Errorf("create collect session: %w", err)
	}
	if in.Link == "" {
		return nil
	}
	var firmID, locale string
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT firm_id FROM clients WHERE id = c.client_id), c.locale
		FROM collects c WHERE c.client_id = ? AND c.id = ?`, s.ClientID, s.CollectID).Scan(&firmID, &locale); err != nil {
		return fmt.Errorf("create collect session: %w", err)
	}
	m := queuedMail{firmID: firmID, clientID: &s.ClientID, kind: MailCollectLink, recipient: in.Email, locale: locale,
		sessionID: &s.ID, data: mailData{Link: in.Link}}
	if err := db.queueMail(ctx, tx, m); err != nil {
		return err
	}
	s.Mail = &SessionMailState{Status: MailQueued}
	if in.NoReminders {
		return nil
	}
	for _, before := range ReminderTimes {
		m.kind, m.remindBefore = MailCollectReminder, &before
		if err := db.queueMail(ctx, tx, m); err != nil {
			return err
		}
	}
	return nil
}

// MailsQueued is signalled after a commit that queued mails, so that the
// sender sends them without waiting for its next round.
func (db *DB) MailsQueued() <-chan struct{} { return db.mailsQueued }

// OutgoingMail is a claimed mail with what writing it needs.
type OutgoingMail struct {
	ID        string
	Kind      string
	To        string
	Locale    string
	MessageID string
	// Attempt is the number of the attempt this claim is for, from 1.
	Attempt  int
	FirmName string
	// FromName is the sender's name: the firm's mail sender name, else
	// its name. Both are read when the mail is sent, so a renamed firm's
	// mails already queued carry the new name.
	FromName string
	// ClientName is "" for a mail of the firm's own (an accountant's
	// invitation).
	ClientName string
	Link       string
	FirstName  *string
	LastName   *string
	Workspaces []string
	// Collect is the collect of a link or reminder as it is now, with its
	// items.
	Collect *Collect
	// RemindBefore is how long before the due date a reminder goes out.
	RemindBefore time.Duration
	// LinkExpiresAt is when the link of a collect mail stops working.
	LinkExpiresAt time.Time
}

// ReleaseMailClaims makes the mails claimed by a sender that stopped
// during an attempt (a crash) due again, with their Message-ID, and returns
// how many. One sender serves a store, so it calls this when it starts,
// and after the store failed during a batch it had claimed.
func (db *DB) ReleaseMailClaims(ctx context.Context) (int, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (int, error) {
		now := unix(db.now())
		res, err := tx.ExecContext(ctx, `UPDATE mail_outbox SET status = 'queued', next_attempt_at = ?, updated_at = ?
			WHERE status = 'sending'`, now, now)
		if err != nil {
			return 0, fmt.Errorf("release mail claims: %w", err)
		}
		n, err := res.RowsAffected()
		return int(n), err
	})
}

// dueMails selects the mails due now, reminders by their collect's due
// date: a reminder is due from RemindBefore before that date until it,
// while the collect is open with a required item not received, its link
// live, and no later reminder of the link also due (a due date moved close
// sends the nearest reminder only). A reminder whose time came before its
// link was made is not sent.
const dueMails = `SELECT id FROM (
	SELECT id, next_attempt_at AS due FROM mail_outbox
	WHERE status = 'queued' AND kind <> 'collect_reminder' AND next_attempt_at <= ?1
	UNION ALL
	SELECT m.id, c.due_date - m.remind_before AS due FROM mail_outbox m
	JOIN collect_sessions s ON s.id = m.session_id AND s.client_id = m.client_id
	JOIN collects c ON c.id = s.collect_id AND c.client_id = m.client_id
	WHERE m.status = 'queued' AND m.kind = 'collect_reminder' AND coalesce(m.next_attempt_at, 0) <= ?1
	  AND c.status = 'OPEN' AND c.deleted_at IS NULL AND c.due_date IS NOT NULL
	  AND c.due_date - m.remind_before <= ?1 AND ?1 < c.due_date AND c.due_date - m.remind_before > s.created_at
	  AND s.revoked_at IS NULL AND s.expires_at > ?1
	  AND EXISTS (SELECT 1 FROM collect_items i WHERE i.client_id = m.client_id AND i.collect_id = c.id
		AND i.required = 1 AND i.status <> 'RECEIVED')
	  AND NOT EXISTS (SELECT 1 FROM mail_outbox o WHERE o.session_id = m.session_id AND o.kind = 'collect_reminder'
		AND o.status = 'queued' AND o.remind_before < m.remind_before AND c.due_date - o.remind_before <= ?1)
) ORDER BY due, id LIMIT ?2`

// ClaimMails claims up to limit due mails: each is marked as being sent,
// with its attempt counted, in one transaction, and returned with what
// writing it needs. The caller sends each and reports with MailSent or
// MailFailed; a claim left by a crash is released by ReleaseMailClaims. A
// link or reminder whose collect was deleted meanwhile is cancelled, not
// returned. The reminders of the same link that were passed over (a later
// one was due too) are cancelled with it. The sender asks every second:
// when nothing is due, a read answers and nothing is written.
func (db *DB) ClaimMails(ctx context.Context, limit int) ([]*OutgoingMail, error) {
	rows, err := db.query(ctx, dueMails, unix(db.now()), 1)
	if err != nil {
		return nil, fmt.Errorf("due mails: %w", err)
	}
	if due, err := scanIDs(rows); err != nil || len(due) == 0 {
		return nil, err
	}
	return write(ctx, db, func(ctx context.Context, tx *txn) ([]*OutgoingMail, error) {
		now := unix(db.now())
		// Again in the write: a collect may have been submitted meanwhile.
		rows, err := tx.QueryContext(ctx, dueMails, now, limit)
		if err != nil {
			return nil, fmt.Errorf("due mails: %w", err)
		}
		ids, err := scanIDs(rows)
		if err != nil {
			return nil, err
		}
		var claimed []*OutgoingMail
		for _, id := range ids {
			m, err := db.claimMail(ctx, tx, id, now)
			if err != nil {
				return nil, err
			}
			if m != nil {
				claimed = append(claimed, m)
			}
		}
		return claimed, nil
	})
}

// scanIDs reads and closes rows of one id each.
func scanIDs(rows *sql.Rows) ([]string, error) {
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("due mails: %w", err)
		}
		ids = append(ids, id)
	}
	if err := errors.Join(rows.Close(), rows.Err()); err != nil {
		return nil, fmt.Errorf("due mails: %w", err)
	}
	return ids, nil
}

// claimMail marks one due mail as being sent and reads what it says; nil
// when its collect is gone, after cancelling it, and for a reminder the
// firm's quota has no room for, after delaying it until there is.
func (db *DB) claimMail(ctx context.Context, tx *txn, id string, now int64) (*OutgoingMail, error) {
	var kind, firmID string
	var counted sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT kind, firm_id, counted_at FROM mail_outbox WHERE id = ?`, id).
		Scan(&kind, &firmID, &counted); err != nil {
		return nil, fmt.Errorf("claim mail %s: %w", id, err)
	}
	if kind == MailCollectReminder && !counted.Valid {
		// A reminder is never refused by the quota: it waits for room.
		wait, err := db.mailQuotaFull(ctx, tx, firmID, now)
		if err != nil {
			return nil, err
		}
		if wait > 0 {
			if _, err := tx.ExecContext(ctx, `UPDATE mail_outbox SET next_attempt_at = ?, updated_at = ? WHERE id = ?`,
				now+wait, now, id); err != nil {
				return nil, fmt.Errorf("delay reminder %s: %w", id, err)
			}
			return nil, nil
		}
	}
	m := &OutgoingMail{ID: id}
	var clientID, sessionID, data sql.NullString
	var before sql.NullInt64
	err := tx.QueryRowContext(ctx, `UPDATE mail_outbox SET status = 'sending', attempts = attempts + 1, updated_at = ?1,
		counted_at = coalesce(counted_at, ?1)
		WHERE id = ?2 AND status = 'queued'
		RETURNING kind, recipient, locale, message_id, attempts, client_id, session_id, remind_before, data,
			(SELECT name FROM firms WHERE id = mail_outbox.firm_id),
			(SELECT coalesce(mail_from_name, name) FROM firms WHERE id = mail_outbox.firm_id)`, now, id).
		Scan(&m.Kind, &m.To, &m.Locale, &m.MessageID, &m.Attempt, &clientID, &sessionID, &before, &data, &m.FirmName, &m.FromName)
	if err != nil {
		return nil, fmt.Errorf("claim mail %s: %w", id, err)
	}
	var d mailData
	if data.Valid {
		if err := json.Unmarshal([]byte(data.String), &d); err != nil {
			return nil, fmt.Errorf("claim mail %s: %w", id, err)
		}
	}
	m.Link, m.FirstName, m.LastName, m.Workspaces = d.Link, d.FirstName, d.LastName, d.Workspaces
	m.RemindBefore = time.Duration(before.Int64) * time.Second
	if clientID.Valid {
		if err := tx.QueryRowContext(ctx, `SELECT name FROM clients WHERE id = ?`, clientID.String).Scan(&m.ClientName); err != nil {
			return nil, fmt.Errorf("claim mail %s: client: %w", id, err)
		}
	}
	if !sessionID.Valid {
		return m, nil
	}
	var collectID string
	var expires int64
	if err := tx.QueryRowContext(ctx, `SELECT collect_id, expires_at FROM collect_sessions WHERE client_id = ? AND id = ?`,
		clientID.String, sessionID.String).Scan(&collectID, &expires); err != nil {
		return nil, fmt.Errorf("claim mail %s: session: %w", id, err)
	}
	m.LinkExpiresAt = fromUnix(expires)
	m.Collect, err = findCollect(ctx, tx, clientID.String, collectID)
	if ErrorCode(err) == ENOTFOUND {
		return nil, endMail(ctx, tx, id, MailCancelled, now, nil)
	}
	if err != nil {
		return nil, err
	}
	if m.Kind == MailCollectReminder {
		if _, err := tx.ExecContext(ctx, `UPDATE mail_outbox SET status = 'cancelled', data = NULL, updated_at = ?
			WHERE client_id = ? AND session_id = ? AND kind = 'collect_reminder' AND status = 'queued' AND remind_before > ?`,
			now, clientID.String, sessionID.String, before.Int64); err != nil {
			return nil, fmt.Errorf("claim mail %s: passed-over reminders: %w", id, err)
		}
	}
	return m, nil
}

// endMail ends a mail: its data (the link) is erased.
func endMail(ctx context.Context, tx *txn, id, status string, now int64, errText *string) error {
	var sent any
	if status == MailSent {
		sent = now
	}
	if _, err := tx.ExecContext(ctx, `UPDATE mail_outbox SET status = ?, data = NULL, next_attempt_at = NULL,
		last_error = coalesce(?, last_error), sent_at = ?, updated_at = ? WHERE id = ?`,
		status, errText, sent, now, id); err != nil {
		return fmt.Errorf("end mail %s: %w", id, err)
	}
	return nil
}

// MailSent records that the relay accepted the claimed mail.
func (db *DB) MailSent(ctx context.Context, id string, at time.Time) error {
	return db.update(ctx, func(ctx context.Context, tx *txn) error {
		return endMail(ctx, tx, id, MailSent, unix(at), nil)
	})
}

// MailFailed records a failed attempt of the claimed mail with the relay's
// answer: it is queued again for retry, or, when retry is nil, has failed
// for good.
func (db *DB) MailFailed(ctx context.Context, id string, at time.Time, answer string, retry *time.Time) error {
	return db.update(ctx, func(ctx context.Context, tx *txn) error {
		if retry == nil {
			return endMail(ctx, tx, id, MailFailed, unix(at), &answer)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE mail_outbox SET status = 'queued', next_attempt_at = ?, last_error = ?,
			updated_at = ? WHERE id = ? AND status = 'sending'`, unix(*retry), answer, unix(at), id); err != nil {
			return fmt.Errorf("mail %s failed: %w", id, err)
		}
		return nil
	})
}

// PurgeMails deletes the mails that ended before before, and the waiting
// reminders of links that expired then, and returns how many it deleted.
func (db *DB) PurgeMails(ctx context.Context, before time.Time) (int, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (int, error) {
		res, err := tx.ExecContext(ctx, `DELETE FROM mail_outbox WHERE (status IN ('sent', 'failed', 'cancelled') AND updated_at < ?1)
			OR (kind = 'collect_reminder' AND status = 'queued'
				AND session_id IN (SELECT id FROM collect_sessions WHERE expires_at < ?1))`, unix(before))
		if err != nil {
			return 0, fmt.Errorf("purge mails: %w", err)
		}
		n, err := res.RowsAffected()
		return int(n), err
	})
}

// MailOutbox returns the state of the mail outbox: the mails waiting to be
// sent (due or being retried; reminders before their time are not
// counted), and when the oldest of them was queued.
func (db *DB) MailOutbox(ctx context.Context) (OutboxStats, error) {
	var stats OutboxStats
	var oldest sql.NullInt64
	if err := db.queryRow(ctx, `SELECT count(*), min(created_at) FROM mail_outbox
		WHERE status IN ('queued', 'sending') AND next_attempt_at IS NOT NULL`).Scan(&stats.Pending, &oldest); err != nil {
		return OutboxStats{}, fmt.Errorf("mail outbox: %w", err)
	}
	if oldest.Valid {
		stats.OldestPending = fromUnix(oldest.Int64)
	}
	return stats, nil
}

// addSessionMail fills in the state of each session's link mail, with one
// query for the page.
func addSessionMail(ctx context.Context, tx *txn, clientID string, sessions []*CollectSession) error {
	if len(sessions) == 0 {
		return nil
	}
	byID := make(map[string]*CollectSession, len(sessions))
	ids := make([]any, len(sessions))
	for i, s := range sessions {
		byID[s.ID], ids[i] = s, s.ID
	}
	rows, err := tx.QueryContext(ctx, `SELECT session_id, status, last_error, sent_at FROM mail_outbox
		WHERE client_id = ? AND kind = 'collect_link' AND session_id IN (`+placeholders(len(ids))+`)`,
		append([]any{clientID}, ids...)...)
	if err != nil {
		return fmt.Errorf("session mail: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var sessionID string
		var st SessionMailState
		var lastError sql.NullString
		var sent sql.NullInt64
		if err := rows.Scan(&sessionID, &st.Status, &lastError, &sent); err != nil {
			return fmt.Errorf("session mail: %w", err)
		}
		if st.Status == MailSending {
			st.Status = MailQueued
		}
		st.Error, st.SentAt = nullString(lastError), nullTime(sent)
		byID[sessionID].Mail = &st
	}
	return rows.Err()
}

// queueInvitation queues the mail of an invitation; nothing when inv is
// nil.
func (db *DB) queueInvitation(ctx context.Context, tx *txn, inv *Invitation, m queuedMail) error {
	if inv == nil {
		return nil
	}
	m.locale = inv.Locale
	if m.clientID != nil {
		m.kind = MailClientInvitation
		if err := tx.QueryRowContext(ctx, `SELECT firm_id FROM clients WHERE id = ?`, *m.clientID).Scan(&m.firmID); err != nil {
			return fmt.Errorf("queue invitation: %w", err)
		}
	} else {
		m.kind = MailAccountantInvitation
	}
	if m.locale == "" {
		if err := tx.QueryRowContext(ctx, `SELECT locale FROM firms WHERE id = ?`, m.firmID).Scan(&m.locale); err != nil {
			return fmt.Errorf("queue invitation: %w", err)
		}
	}
	return db.queueMail(ctx, tx, m)
}

// workspaceNames returns the names of the client's workspaces, in the
// order of ids.
func workspaceNames(ctx context.Context, tx *txn, clientID string, ids []string) ([]string, error) {
	names := make([]string, 0, len(ids))
	for _, id := range ids {
		var name string
		if err := tx.QueryRowContext(ctx, `SELECT name FROM workspaces WHERE client_id = ? AND id = ?`, clientID, id).
			Scan(&name); err != nil {
			return nil, fmt.Errorf("workspace name: %w", err)
		}
		names = append(names, strings.TrimSpace(name))
	}
	return names, nil
}
