UPDATE api_keys SET permissions = trim(replace(' ' || permissions || ' ', ' mail:send ', ' '));
DROP INDEX mail_outbox_quota;
ALTER TABLE mail_outbox DROP COLUMN counted_at;
