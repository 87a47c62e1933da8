-- The firm's own settings: the sender name of its mails (null: its name)
-- and the language collects and invitations take when a request names none.
ALTER TABLE firms ADD COLUMN mail_from_name TEXT;
ALTER TABLE firms ADD COLUMN locale TEXT NOT NULL DEFAULT 'en' CHECK (locale IN ('en', 'de'));

-- Keys that held every permission of their kind keep holding every one.
-- Client keys never hold the firm's.
UPDATE api_keys SET permissions = permissions || ' firm:read firm:write'
WHERE client_id IS NULL AND permissions = 'tasks:read tasks:write workspaces:read workspaces:write members:read members:write users:read users:write files:read files:write clients:read clients:write accountant_users:read accountant_users:write webhooks:read webhooks:write collects:read collects:write mail:send';
