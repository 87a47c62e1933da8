-- Mail: the address a collect link was sent to, and the outbox of mails
-- the background sender delivers. A mail is queued in the transaction of
-- the change that calls for it, so that it exists exactly when the change
-- does.

-- email is where the link was mailed (null: handed out by hand);
-- reminders says whether that address gets the reminders before the due
-- date.
ALTER TABLE collect_sessions ADD COLUMN email TEXT;
ALTER TABLE collect_sessions ADD COLUMN reminders INTEGER NOT NULL DEFAULT 0 CHECK (reminders IN (0, 1));

-- One row per mail. message_id is made when the mail is queued and sent
-- with every attempt, so that a resend after a crash is recognisable.
-- status: queued (waiting for its time), sending (claimed by the sender:
-- an attempt is under way, or the process died during one; the sender
-- releases such claims when it starts), sent, failed (retries exhausted or
-- refused for good), cancelled (a reminder no longer wanted).
-- A reminder has no next_attempt_at of its own until an attempt failed: it
-- comes due remind_before seconds before its collect's due date, so a new
-- due date moves it. data holds what the mail says beyond the rows it
-- names (the link, the invitation's workspaces), as JSON; it is erased when
-- the mail ends, so a link does not outlive its mail here.
CREATE TABLE mail_outbox (
    id              TEXT    NOT NULL PRIMARY KEY,
    firm_id         TEXT    NOT NULL REFERENCES firms (id) ON DELETE CASCADE,
    client_id       TEXT             REFERENCES clients (id) ON DELETE CASCADE,
    kind            TEXT    NOT NULL CHECK (kind IN ('collect_link', 'collect_reminder', 'client_invitation', 'accountant_invitation')),
    recipient       TEXT    NOT NULL,
    locale          TEXT    NOT NULL CHECK (locale IN ('en', 'de')),
    message_id      TEXT    NOT NULL UNIQUE,
    session_id      TEXT             REFERENCES collect_sessions (id) ON DELETE CASCADE,
    remind_before   INTEGER,
    data            TEXT,
    status          TEXT    NOT NULL CHECK (status IN ('queued', 'sending', 'sent', 'failed', 'cancelled')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER,
    last_error      TEXT,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    sent_at         INTEGER,
    CHECK ((kind = 'collect_reminder') = (remind_before IS NOT NULL)),
    CHECK (kind NOT IN ('collect_link', 'collect_reminder') OR session_id IS NOT NULL)
);
-- The sender's claim: the queued mails by their time.
CREATE INDEX mail_outbox_due ON mail_outbox (status, next_attempt_at);
-- A session's mails: its state in the session list, its reminders.
CREATE INDEX mail_outbox_session ON mail_outbox (session_id, kind);

-- Reminders end with their collect's life: once it is submitted, closed,
-- cancelled or deleted, or its link revoked, the reminders still waiting are
-- cancelled for good, so that reopening the collect does not bring them back.
CREATE TRIGGER collects_cancel_reminders AFTER UPDATE OF status, deleted_at ON collects
WHEN NEW.status <> 'OPEN' OR NEW.deleted_at IS NOT NULL
BEGIN
    UPDATE mail_outbox SET status = 'cancelled', data = NULL, updated_at = NEW.updated_at
    WHERE kind = 'collect_reminder' AND status = 'queued' AND client_id = NEW.client_id
      AND session_id IN (SELECT id FROM collect_sessions WHERE client_id = NEW.client_id AND collect_id = NEW.id);
END;
CREATE TRIGGER collect_sessions_cancel_reminders AFTER UPDATE OF revoked_at ON collect_sessions
WHEN NEW.revoked_at IS NOT NULL
BEGIN
    UPDATE mail_outbox SET status = 'cancelled', data = NULL, updated_at = NEW.revoked_at
    WHERE kind = 'collect_reminder' AND status = 'queued' AND client_id = NEW.client_id AND session_id = NEW.id;
END;
