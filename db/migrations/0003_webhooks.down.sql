UPDATE api_keys SET permissions = trim(replace(replace(' ' || permissions || ' ', ' webhooks:read ', ' '), ' webhooks:write ', ' '))
WHERE client_id IS NULL;
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_events;
DROP TABLE webhooks;
