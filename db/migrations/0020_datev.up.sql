-- The month to the ledger: a client's ledger settings, its counterparties
-- with their personal accounts, the booking of each document, and the
-- DATEV exports with the files each one holds.

-- A client's ledger settings; the export names what is missing (chart,
-- consultant_number, client_number) until a person set it.
-- bank_accounts is JSON [{accountId, ledgerAccount}].
CREATE TABLE ledger_settings (
    client_id               TEXT    NOT NULL PRIMARY KEY REFERENCES clients (id) ON DELETE CASCADE,
    chart                   TEXT    CHECK (chart IN ('SKR03', 'SKR04')),
    consultant_number       INTEGER CHECK (consultant_number BETWEEN 1001 AND 9999999),
    client_number           INTEGER CHECK (client_number BETWEEN 1 AND 99999),
    fiscal_year_start       TEXT    NOT NULL DEFAULT '01-01',
    account_length          INTEGER NOT NULL DEFAULT 4 CHECK (account_length BETWEEN 4 AND 8),
    bank_accounts           TEXT    NOT NULL DEFAULT '[]',
    default_expense_account TEXT,
    default_revenue_account TEXT,
    updated_at              INTEGER NOT NULL
);

-- A client's supplier or customer. account is its personal account
-- (Kreditor, Debitor), given on the first export that needs it and kept:
-- only a person changes it. Unique within the client.
CREATE TABLE counterparties (
    id         TEXT    NOT NULL PRIMARY KEY,
    client_id  TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    role       TEXT    NOT NULL CHECK (role IN ('supplier', 'customer')),
    name       TEXT    NOT NULL,
    vat_id     TEXT,
    iban       TEXT,
    account    INTEGER,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (client_id, account)
);
CREATE INDEX counterparties_client_created ON counterparties (client_id, created_at, id);

-- The keys a counterparty is found by: the hashed VAT id, IBAN and
-- normalised name the field corrections key a supplier by.
CREATE TABLE counterparty_keys (
    client_id       TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    role            TEXT NOT NULL,
    key             TEXT NOT NULL,
    counterparty_id TEXT NOT NULL REFERENCES counterparties (id) ON DELETE CASCADE,
    PRIMARY KEY (client_id, role, key)
) WITHOUT ROWID;
CREATE INDEX counterparty_keys_counterparty ON counterparty_keys (counterparty_id);

-- The booking of a document: what the last export booked (source 'rule'
-- or 'learned'), or what a person chose ('user'), which no export
-- overwrites. contra_account is the counterparty's account when booked.
CREATE TABLE file_bookings (
    file_id         TEXT    NOT NULL PRIMARY KEY REFERENCES files (id) ON DELETE CASCADE,
    client_id       TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    counterparty_id TEXT    REFERENCES counterparties (id) ON DELETE SET NULL,
    account         TEXT,
    contra_account  TEXT,
    tax_key         TEXT,
    text            TEXT,
    source          TEXT    NOT NULL CHECK (source IN ('rule', 'learned', 'user')),
    updated_at      INTEGER NOT NULL
);
CREATE INDEX file_bookings_counterparty ON file_bookings (counterparty_id);

-- What a person's booking of a supplier's document teaches the firm's
-- next documents of that supplier, by the supplier's hashed keys: the
-- firm's, never another firm's.
CREATE TABLE booking_lessons (
    firm_id    TEXT    NOT NULL REFERENCES firms (id) ON DELETE CASCADE,
    supplier   TEXT    NOT NULL,
    account    TEXT    NOT NULL,
    tax_key    TEXT,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (firm_id, supplier)
) WITHOUT ROWID;

-- An export of a client's period, written by a background job: queued,
-- running (claimed_at set), done (its ZIP kept in the file store under
-- the export's id, size and sha256 recorded) or failed (reason).
-- skipped is JSON [{fileId, reason}], changed_since_export JSON [fileId].
CREATE TABLE exports (
    id                   TEXT    NOT NULL PRIMARY KEY,
    client_id            TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    format               TEXT    NOT NULL CHECK (format IN ('datev')),
    from_date            TEXT    NOT NULL,
    to_date              TEXT    NOT NULL,
    status               TEXT    NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
    document_count       INTEGER NOT NULL DEFAULT 0,
    row_count            INTEGER NOT NULL DEFAULT 0,
    skipped              TEXT    NOT NULL DEFAULT '[]',
    changed_since_export TEXT    NOT NULL DEFAULT '[]',
    reason               TEXT,
    size                 INTEGER,
    sha256               BLOB,
    claimed_at           INTEGER,
    attempts             INTEGER NOT NULL DEFAULT 0,
    created_at           INTEGER NOT NULL,
    finished_at          INTEGER
);
CREATE INDEX exports_client_created ON exports (client_id, created_at, id);
CREATE INDEX exports_queued ON exports (status, created_at) WHERE status IN ('queued', 'running');

-- Each file an export booked, with when, and a fingerprint of what it
-- booked from (kind, date, fields, a person's booking): a later export
-- whose fingerprint differs lists the file as changed since.
CREATE TABLE export_files (
    export_id   TEXT    NOT NULL REFERENCES exports (id) ON DELETE CASCADE,
    file_id     TEXT    NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    client_id   TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    exported_at INTEGER NOT NULL,
    fingerprint TEXT    NOT NULL,
    PRIMARY KEY (export_id, file_id)
) WITHOUT ROWID;
CREATE INDEX export_files_file ON export_files (file_id, exported_at);

-- Accountant keys that held every permission keep holding every one.
UPDATE api_keys SET permissions = permissions || ' exports:read exports:write'
WHERE client_id IS NULL AND permissions = 'tasks:read tasks:write workspaces:read workspaces:write members:read members:write users:read users:write files:read files:write clients:read clients:write accountant_users:read accountant_users:write webhooks:read webhooks:write collects:read collects:write mail:send firm:read firm:write banking:read banking:write';
