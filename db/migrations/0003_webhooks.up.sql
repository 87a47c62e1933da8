-- Outgoing webhooks: the firm's subscriptions, the outbox of events written in
-- the transaction of the change each describes, one delivery per event and
-- subscription, and the attempts of each delivery.
CREATE TABLE webhooks (
    id                         TEXT    NOT NULL PRIMARY KEY,
    firm_id                    TEXT    NOT NULL REFERENCES firms (id) ON DELETE CASCADE,
    -- NULL: the events of every client of the firm, and the firm's own.
    client_id                  TEXT    REFERENCES clients (id) ON DELETE CASCADE,
    url                        TEXT    NOT NULL,
    -- A JSON array of event types, or ["*"].
    events                     TEXT    NOT NULL CHECK (json_valid(events) AND json_type(events) = 'array'),
    description                TEXT,
    secret                     TEXT    NOT NULL,
    -- The secret before the last rotation, still signed with until it expires.
    previous_secret            TEXT,
    previous_secret_expires_at INTEGER,
    status                     TEXT    NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'failing', 'disabled')),
    failing_since              INTEGER,
    created_at                 INTEGER NOT NULL,
    updated_at                 INTEGER NOT NULL
);
CREATE INDEX webhooks_firm_created ON webhooks (firm_id, created_at, id);
CREATE INDEX webhooks_firm_updated ON webhooks (firm_id, updated_at, id);

-- seq orders the events as they were made: deliveries of one subscription go
-- out in that order.
CREATE TABLE webhook_events (
    seq        INTEGER NOT NULL PRIMARY KEY,
    id         TEXT    NOT NULL UNIQUE,
    firm_id    TEXT    NOT NULL REFERENCES firms (id) ON DELETE CASCADE,
    client_id  TEXT    REFERENCES clients (id) ON DELETE CASCADE,
    type       TEXT    NOT NULL,
    payload    BLOB    NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE webhook_deliveries (
    id              TEXT    NOT NULL PRIMARY KEY,
    webhook_id      TEXT    NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_seq       INTEGER NOT NULL REFERENCES webhook_events (seq) ON DELETE CASCADE,
    status          TEXT    NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    UNIQUE (webhook_id, event_seq)
);
-- The head of each subscription's queue: its pending delivery of the lowest seq.
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (webhook_id, event_seq) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_webhook_created ON webhook_deliveries (webhook_id, created_at, id);
-- The deliveries of an event: deleting an event (PurgeDeliveries) finds its
-- deliveries for the foreign key through it instead of scanning the table.
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_seq);

CREATE TABLE webhook_attempts (
    delivery_id TEXT    NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    n           INTEGER NOT NULL,
    at          INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
    status_code INTEGER,
    error       TEXT,
    PRIMARY KEY (delivery_id, n)
) WITHOUT ROWID;

-- Keys that held every accountant permission keep holding every one.
UPDATE api_keys SET permissions = permissions || ' webhooks:read webhooks:write'
WHERE client_id IS NULL AND permissions = 'tasks:read tasks:write workspaces:read workspaces:write members:read members:write users:read users:write files:read files:write clients:read clients:write accountant_users:read accountant_users:write';
