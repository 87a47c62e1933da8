DROP TRIGGER collect_sessions_cancel_reminders;
DROP TRIGGER collects_cancel_reminders;
DROP TABLE mail_outbox;
ALTER TABLE collect_sessions DROP COLUMN reminders;
ALTER TABLE collect_sessions DROP COLUMN email;
