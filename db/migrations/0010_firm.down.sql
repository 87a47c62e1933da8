UPDATE api_keys SET permissions = trim(replace(replace(' ' || permissions || ' ', ' firm:read ', ' '), ' firm:write ', ' '));
ALTER TABLE firms DROP COLUMN locale;
ALTER TABLE firms DROP COLUMN mail_from_name;
