-- Mailing in the firm's name has a permission of its own, mail:send, and
-- each firm an hourly quota of mails.

-- counted_at is when a mail counted against its firm's quota: when it was
-- queued, a reminder when it was first claimed for sending; null for a
-- reminder still waiting.
ALTER TABLE mail_outbox ADD COLUMN counted_at INTEGER;
UPDATE mail_outbox SET counted_at = created_at WHERE kind <> 'collect_reminder';
UPDATE mail_outbox SET counted_at = updated_at WHERE kind = 'collect_reminder' AND attempts > 0;
CREATE INDEX mail_outbox_quota ON mail_outbox (firm_id, counted_at);

-- Accountant keys that held every permission of their kind keep mailing;
-- client keys and keys minted with a chosen list get it only when minted
-- with it.
UPDATE api_keys SET permissions = permissions || ' mail:send'
WHERE client_id IS NULL AND permissions LIKE 'tasks:read tasks:write workspaces:read workspaces:write members:read members:write users:read users:write files:read files:write clients:read clients:write accountant_users:read accountant_users:write webhooks:read webhooks:write collects:read collects:write%';
