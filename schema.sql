-- Generated from db/migrations by `go test ./db -run TestSchemaFile -update`. Do not edit.

CREATE TABLE analysis_jobs (
    file_id         TEXT    NOT NULL PRIMARY KEY REFERENCES files (id) ON DELETE CASCADE,
    client_id       TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    attempts        INTEGER NOT NULL DEFAULT 0,
    retries         INTEGER NOT NULL DEFAULT 0,
    claimed_at      INTEGER,
    next_attempt_at INTEGER NOT NULL,
    created_at      INTEGER NOT NULL
, lane TEXT NOT NULL DEFAULT 'fast' CHECK (lane IN ('fast', 'ocr')), turn INTEGER NOT NULL DEFAULT 0);

CREATE TABLE analysis_lanes (
    lane TEXT    NOT NULL PRIMARY KEY CHECK (lane IN ('fast', 'ocr')),
    turn INTEGER NOT NULL
);

CREATE TABLE api_keys (
    id                   TEXT    NOT NULL PRIMARY KEY,
    firm_id              TEXT    NOT NULL REFERENCES firms (id) ON DELETE CASCADE,
    client_id            TEXT             REFERENCES clients (id) ON DELETE CASCADE,
    name                 TEXT    NOT NULL,
    secret_hash          BLOB    NOT NULL,
    permissions          TEXT    NOT NULL,
    rate_limit_max       INTEGER NOT NULL CHECK (rate_limit_max > 0),
    rate_limit_window_ms INTEGER NOT NULL CHECK (rate_limit_window_ms > 0),
    expires_at           INTEGER,
    revoked_at           INTEGER,
    created_at           INTEGER NOT NULL
);

CREATE TABLE bank_accounts (
    id           TEXT    NOT NULL PRIMARY KEY,
    client_id    TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    account_ref  TEXT    NOT NULL,
    iban         TEXT,
    bic          TEXT,
    currency     TEXT    NOT NULL,
    owner_name   TEXT,
    balance      INTEGER,
    balance_date TEXT,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    UNIQUE (client_id, account_ref)
);

CREATE TABLE bank_jobs (
    target          TEXT    NOT NULL CHECK (target IN ('statement', 'file', 'client')),
    target_id       TEXT    NOT NULL,
    client_id       TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    attempts        INTEGER NOT NULL DEFAULT 0,
    claimed_at      INTEGER,
    next_attempt_at INTEGER NOT NULL,
    created_at      INTEGER NOT NULL,
    PRIMARY KEY (target, target_id)
);

CREATE TABLE bank_statements (
    id                TEXT    NOT NULL PRIMARY KEY,
    client_id         TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    account_id        TEXT    NOT NULL REFERENCES bank_accounts (id) ON DELETE CASCADE,
    format            TEXT    NOT NULL CHECK (format IN ('camt.053', 'mt940')),
    from_date         TEXT    NOT NULL,
    to_date           TEXT    NOT NULL,
    currency          TEXT    NOT NULL,
    opening_balance   INTEGER,
    closing_balance   INTEGER,
    transaction_count INTEGER NOT NULL,
    duplicate_count   INTEGER NOT NULL,
    file_id           TEXT    UNIQUE REFERENCES files (id) ON DELETE SET NULL,
    created_at        INTEGER NOT NULL
, importing INTEGER NOT NULL DEFAULT 0 CHECK (importing IN (0, 1)));

CREATE TABLE bank_transaction_matches (
    transaction_id TEXT    NOT NULL REFERENCES bank_transactions (id) ON DELETE CASCADE,
    file_id        TEXT    NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    client_id      TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    state          TEXT    NOT NULL CHECK (state IN ('confirmed', 'suggested')),
    score          REAL    NOT NULL,
    reasons        TEXT    NOT NULL,
    source         TEXT    NOT NULL CHECK (source IN ('auto', 'user', 'collect')),
    position       INTEGER NOT NULL,
    created_at     INTEGER NOT NULL,
    PRIMARY KEY (transaction_id, file_id)
);

CREATE TABLE bank_transactions (
    id                TEXT    NOT NULL PRIMARY KEY,
    client_id         TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    account_id        TEXT    NOT NULL REFERENCES bank_accounts (id) ON DELETE CASCADE,
    statement_id      TEXT    NOT NULL REFERENCES bank_statements (id) ON DELETE CASCADE,
    booking_date      TEXT    NOT NULL,
    value_date        TEXT,
    amount            INTEGER NOT NULL,
    currency          TEXT    NOT NULL,
    counterparty_name TEXT,
    counterparty_iban TEXT,
    remittance_info   TEXT,
    end_to_end_id     TEXT,
    bank_reference    TEXT,
    dedup_key         TEXT    NOT NULL,
    status            TEXT    NOT NULL CHECK (status IN ('unmatched', 'suggested', 'matched', 'ignored')),
    decided_by_user   INTEGER NOT NULL DEFAULT 0 CHECK (decided_by_user IN (0, 1)),
    note              TEXT,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL, search_id INTEGER,
    UNIQUE (account_id, dedup_key)
);

CREATE VIRTUAL TABLE bank_transactions_search USING fts5 (
    counterparty_name, remittance_info, bank_reference, end_to_end_id,
    content = 'bank_transactions', content_rowid = 'search_id', tokenize = 'trigram'
);

CREATE TABLE 'bank_transactions_search_config'(k PRIMARY KEY, v) WITHOUT ROWID;

CREATE TABLE 'bank_transactions_search_data'(id INTEGER PRIMARY KEY, block BLOB);

CREATE TABLE 'bank_transactions_search_docsize'(id INTEGER PRIMARY KEY, sz BLOB);

CREATE TABLE 'bank_transactions_search_idx'(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID;

CREATE TABLE booking_lessons (
    firm_id    TEXT    NOT NULL REFERENCES firms (id) ON DELETE CASCADE,
    supplier   TEXT    NOT NULL,
    account    TEXT    NOT NULL,
    tax_key    TEXT,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (firm_id, supplier)
) WITHOUT ROWID;

CREATE TABLE clients (
    id                   TEXT    NOT NULL PRIMARY KEY,
    firm_id              TEXT    NOT NULL REFERENCES firms (id) ON DELETE CASCADE,
    name                 TEXT    NOT NULL COLLATE NOCASE,
    slug                 TEXT    NOT NULL,
    type                 TEXT    NOT NULL CHECK (type IN ('natural_person', 'individual_enterprise', 'legal_person')),
    custom_id            TEXT,
    legal_name           TEXT,
    ledger_client_id     TEXT,
    address_line1        TEXT,
    address_line2        TEXT,
    address_city         TEXT,
    address_postal_code  TEXT,
    address_country_code TEXT,
    archived_at          INTEGER,
    created_at           INTEGER NOT NULL,
    updated_at           INTEGER NOT NULL, vat_ids TEXT,
    UNIQUE (firm_id, slug)
);

CREATE TABLE collect_item_files (
    seq        INTEGER NOT NULL PRIMARY KEY,
    client_id  TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    collect_id TEXT    NOT NULL REFERENCES collects (id) ON DELETE CASCADE,
    item_id    TEXT    NOT NULL REFERENCES collect_items (id) ON DELETE CASCADE,
    file_id    TEXT    NOT NULL REFERENCES files (id) ON DELETE CASCADE, session_id TEXT,
    UNIQUE (item_id, file_id)
);

CREATE TABLE collect_items (
    id               TEXT    NOT NULL PRIMARY KEY,
    client_id        TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    collect_id       TEXT    NOT NULL REFERENCES collects (id) ON DELETE CASCADE,
    position         INTEGER NOT NULL CHECK (position >= 0),
    title            TEXT    NOT NULL,
    description      TEXT,
    required         INTEGER NOT NULL CHECK (required IN (0, 1)),
    folder_id        TEXT             REFERENCES folders (id) ON DELETE SET NULL,
    status           TEXT    NOT NULL CHECK (status IN ('PENDING', 'RECEIVED', 'REJECTED')),
    rejection_reason TEXT,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL, kind TEXT
    CHECK (kind IN ('invoice', 'credit_note', 'receipt', 'bank_statement', 'payslip', 'tax_notice', 'contract')), transaction_id TEXT,
    UNIQUE (collect_id, position)
);

CREATE TABLE collect_sessions (
    id           TEXT    NOT NULL PRIMARY KEY,
    client_id    TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    collect_id   TEXT    NOT NULL REFERENCES collects (id) ON DELETE CASCADE,
    token_hash   BLOB    NOT NULL,
    label        TEXT,
    expires_at   INTEGER NOT NULL,
    revoked_at   INTEGER,
    last_used_at INTEGER,
    created_at   INTEGER NOT NULL
, email TEXT, reminders INTEGER NOT NULL DEFAULT 0 CHECK (reminders IN (0, 1)));

CREATE TABLE collects (
    id           TEXT    NOT NULL PRIMARY KEY,
    client_id    TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    -- Like a file's task: a deleted task leaves the collect without one.
    task_id      TEXT             REFERENCES tasks (id) ON DELETE SET NULL,
    title        TEXT    NOT NULL COLLATE NOCASE,
    message      TEXT,
    due_date     INTEGER,
    due_asc      INTEGER GENERATED ALWAYS AS (coalesce(due_date, 9223372036854775807)) VIRTUAL,
    due_desc     INTEGER GENERATED ALWAYS AS (coalesce(due_date, -9223372036854775808)) VIRTUAL,
    status       TEXT    NOT NULL CHECK (status IN ('OPEN', 'SUBMITTED', 'CLOSED', 'CANCELLED')),
    locale       TEXT    NOT NULL CHECK (locale IN ('en', 'de')),
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    submitted_at INTEGER,
    deleted_at   INTEGER
);

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

CREATE TABLE counterparty_keys (
    client_id       TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    role            TEXT NOT NULL,
    key             TEXT NOT NULL,
    counterparty_id TEXT NOT NULL REFERENCES counterparties (id) ON DELETE CASCADE,
    PRIMARY KEY (client_id, role, key)
) WITHOUT ROWID;

CREATE TABLE export_files (
    export_id   TEXT    NOT NULL REFERENCES exports (id) ON DELETE CASCADE,
    file_id     TEXT    NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    client_id   TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    exported_at INTEGER NOT NULL,
    fingerprint TEXT    NOT NULL,
    PRIMARY KEY (export_id, file_id)
) WITHOUT ROWID;

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

CREATE TABLE file_labels (
    file_id  TEXT NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    label_id TEXT NOT NULL REFERENCES labels (id) ON DELETE CASCADE,
    PRIMARY KEY (file_id, label_id)
) WITHOUT ROWID;

CREATE VIRTUAL TABLE file_search USING fts5 (
    name, text, fields,
    content = '', contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3'
);

CREATE TABLE 'file_search_config'(k PRIMARY KEY, v) WITHOUT ROWID;

CREATE TABLE 'file_search_data'(id INTEGER PRIMARY KEY, block BLOB);

CREATE TABLE 'file_search_docsize'(id INTEGER PRIMARY KEY, sz BLOB, origin INTEGER);

CREATE TABLE 'file_search_idx'(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID;

CREATE TABLE file_search_rows (
    seq       INTEGER NOT NULL PRIMARY KEY,
    file_id   TEXT    NOT NULL UNIQUE REFERENCES files (id) ON DELETE CASCADE,
    client_id TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE
);

CREATE TABLE file_texts (
    file_id   TEXT    NOT NULL PRIMARY KEY REFERENCES files (id) ON DELETE CASCADE,
    client_id TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    source    TEXT    NOT NULL CHECK (source IN ('einvoice', 'text', 'ocr')),
    pages     INTEGER NOT NULL,
    text      TEXT    NOT NULL
);

CREATE TABLE files (
    id            TEXT    NOT NULL PRIMARY KEY,
    client_id     TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    workspace_id  TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    task_id       TEXT             REFERENCES tasks (id) ON DELETE SET NULL,
    folder_id     TEXT             REFERENCES folders (id) ON DELETE SET NULL,
    created_by_id TEXT,
    name          TEXT    NOT NULL,
    mimetype      TEXT    NOT NULL,
    size          INTEGER NOT NULL CHECK (size >= 0),
    sha256        BLOB    NOT NULL,
    document_date INTEGER NOT NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
, kind TEXT
    CHECK (kind IN ('invoice', 'credit_note', 'receipt', 'bank_statement', 'payslip', 'tax_notice', 'contract', 'other')), kind_source TEXT CHECK (kind_source IN ('user', 'analysis')), document_date_source TEXT CHECK (document_date_source IN ('user', 'analysis')), analysis_status TEXT NOT NULL DEFAULT 'pending'
    CHECK (analysis_status IN ('pending', 'done', 'failed', 'skipped')), analysis_source TEXT CHECK (analysis_source IN ('einvoice', 'text', 'ocr')), analysis_reason TEXT, analysis_language TEXT, analyzed_at INTEGER, analysis_fields TEXT, analysis_kind TEXT
    CHECK (analysis_kind IN ('invoice', 'credit_note', 'receipt', 'bank_statement', 'payslip', 'tax_notice', 'contract', 'other')), analysis_confidence TEXT, analysis_warnings TEXT, user_fields TEXT, total_amount INTEGER
    GENERATED ALWAYS AS (CAST(round(CASE WHEN json_type(user_fields, '$.totalAmount') IS NOT NULL
        THEN json_extract(user_fields, '$.totalAmount') ELSE json_extract(analysis_fields, '$.totalAmount') END
        * 100000) AS INTEGER)) VIRTUAL, direction TEXT CHECK (direction IN ('received', 'issued')), payment_status TEXT CHECK (payment_status IN ('open', 'partial', 'paid')), open_amount INTEGER);

CREATE TABLE firms (
    id         TEXT    NOT NULL PRIMARY KEY,
    name       TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
, mail_from_name TEXT, locale TEXT NOT NULL DEFAULT 'en' CHECK (locale IN ('en', 'de')));

CREATE TABLE folders (
    id           TEXT    NOT NULL PRIMARY KEY,
    client_id    TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    parent_id    TEXT             REFERENCES folders (id) ON DELETE CASCADE,
    name         TEXT    NOT NULL COLLATE NOCASE,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
);

CREATE TABLE idempotency_keys (
    api_key_id   TEXT    NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    key          TEXT    NOT NULL,
    fingerprint  BLOB,
    status       INTEGER,
    content_type TEXT,
    body         BLOB,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (api_key_id, key)
) WITHOUT ROWID;

CREATE TABLE kind_examples (
    file_id    TEXT    NOT NULL PRIMARY KEY REFERENCES files (id) ON DELETE CASCADE,
    firm_id    TEXT    NOT NULL REFERENCES firms (id) ON DELETE CASCADE,
    kind       TEXT    NOT NULL,
    features   BLOB    NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TABLE labels (
    id           TEXT    NOT NULL PRIMARY KEY,
    client_id    TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         TEXT    NOT NULL COLLATE NOCASE,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    UNIQUE (workspace_id, name)
);

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
    sent_at         INTEGER, counted_at INTEGER,
    CHECK ((kind = 'collect_reminder') = (remind_before IS NOT NULL)),
    CHECK (kind NOT IN ('collect_link', 'collect_reminder') OR session_id IS NOT NULL)
);

CREATE TABLE roles (
    id          TEXT    NOT NULL PRIMARY KEY,
    firm_id     TEXT    NOT NULL REFERENCES firms (id) ON DELETE CASCADE,
    name        TEXT    NOT NULL CHECK (name IN ('admin', 'user', 'custom')),
    custom_name TEXT,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    CHECK ((name = 'custom') = (custom_name IS NOT NULL))
);

CREATE TABLE settings (
    name       TEXT    NOT NULL PRIMARY KEY,
    value      BLOB    NOT NULL,
    updated_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE supplier_anchors (
    firm_id    TEXT    NOT NULL REFERENCES firms (id) ON DELETE CASCADE,
    supplier   TEXT    NOT NULL,
    field      TEXT    NOT NULL,
    anchor     TEXT    NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (firm_id, supplier, field)
) WITHOUT ROWID;

CREATE TABLE task_asset_files (
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    file_id TEXT NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    PRIMARY KEY (task_id, file_id)
) WITHOUT ROWID;

CREATE TABLE task_counts (
    client_id TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    scope     TEXT    NOT NULL,
    n         INTEGER NOT NULL,
    PRIMARY KEY (client_id, scope)
) WITHOUT ROWID;

CREATE TABLE task_tombstones (
    id         TEXT    NOT NULL PRIMARY KEY,
    client_id  TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    title      TEXT    NOT NULL COLLATE NOCASE,
    status     INTEGER NOT NULL,
    due_date   INTEGER,
    due_asc    INTEGER GENERATED ALWAYS AS (coalesce(due_date, 9223372036854775807)) VIRTUAL,
    due_desc   INTEGER GENERATED ALWAYS AS (coalesce(due_date, -9223372036854775808)) VIRTUAL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    deleted_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE tasks (
    id                    TEXT    NOT NULL PRIMARY KEY,
    client_id             TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    workspace_id          TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    parent_id             TEXT             REFERENCES tasks (id) ON DELETE CASCADE,
    title                 TEXT    NOT NULL COLLATE NOCASE,
    text                  TEXT,
    status                INTEGER NOT NULL DEFAULT 0 CHECK (status BETWEEN 0 AND 4),
    due_date              INTEGER,
    due_asc               INTEGER GENERATED ALWAYS AS (coalesce(due_date, 9223372036854775807)) VIRTUAL,
    due_desc              INTEGER GENERATED ALWAYS AS (coalesce(due_date, -9223372036854775808)) VIRTUAL,
    created_by_id         TEXT             REFERENCES users (id) ON DELETE SET NULL,
    actor_type            TEXT    NOT NULL CHECK (actor_type IN ('USER', 'SYSTEM', 'AI', 'API')),
    destination_folder_id TEXT             REFERENCES folders (id) ON DELETE SET NULL,
    created_at            INTEGER NOT NULL,
    updated_at            INTEGER NOT NULL
);

CREATE TABLE users (
    id              TEXT    NOT NULL PRIMARY KEY,
    firm_id         TEXT    NOT NULL REFERENCES firms (id) ON DELETE CASCADE,
    client_id       TEXT             REFERENCES clients (id) ON DELETE CASCADE,
    email           TEXT    NOT NULL,
    first_name      TEXT,
    last_name       TEXT,
    image           TEXT,
    role_id         TEXT             REFERENCES roles (id) ON DELETE RESTRICT,
    client_role     TEXT             CHECK (client_role IN ('admin', 'user')),
    invited_at      INTEGER,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    first_name_asc  TEXT    GENERATED ALWAYS AS (coalesce(first_name, char(1114111))) VIRTUAL COLLATE NOCASE,
    first_name_desc TEXT    GENERATED ALWAYS AS (coalesce(first_name, '')) VIRTUAL COLLATE NOCASE,
    last_name_asc   TEXT    GENERATED ALWAYS AS (coalesce(last_name, char(1114111))) VIRTUAL COLLATE NOCASE,
    last_name_desc  TEXT    GENERATED ALWAYS AS (coalesce(last_name, '')) VIRTUAL COLLATE NOCASE,
    CHECK ((client_id IS NULL AND role_id IS NOT NULL AND client_role IS NULL)
        OR (client_id IS NOT NULL AND role_id IS NULL AND client_role IS NOT NULL))
);

CREATE TABLE webhook_attempts (
    delivery_id TEXT    NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    n           INTEGER NOT NULL,
    at          INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
    status_code INTEGER,
    error       TEXT,
    PRIMARY KEY (delivery_id, n)
) WITHOUT ROWID;

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

CREATE TABLE webhook_events (
    seq        INTEGER NOT NULL PRIMARY KEY,
    id         TEXT    NOT NULL UNIQUE,
    firm_id    TEXT    NOT NULL REFERENCES firms (id) ON DELETE CASCADE,
    client_id  TEXT    REFERENCES clients (id) ON DELETE CASCADE,
    type       TEXT    NOT NULL,
    payload    BLOB    NOT NULL,
    created_at INTEGER NOT NULL
);

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

CREATE TABLE workspace_members (
    workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    user_id      TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    is_muted     INTEGER NOT NULL DEFAULT 0 CHECK (is_muted IN (0, 1)),
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, user_id)
) WITHOUT ROWID;

CREATE TABLE workspaces (
    id          TEXT    NOT NULL PRIMARY KEY,
    client_id   TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    name        TEXT    NOT NULL,
    archived_at INTEGER,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

CREATE INDEX analysis_jobs_client_turns ON analysis_jobs (client_id, lane, turn);

CREATE INDEX analysis_jobs_turns ON analysis_jobs (lane, claimed_at, turn, next_attempt_at, file_id);

CREATE INDEX api_keys_firm_created ON api_keys (firm_id, created_at, id);

CREATE INDEX bank_accounts_client_created ON bank_accounts (client_id, created_at, id);

CREATE INDEX bank_jobs_due ON bank_jobs (claimed_at, next_attempt_at);

CREATE INDEX bank_statements_account_created ON bank_statements (client_id, account_id, created_at, id);

CREATE INDEX bank_statements_account_importing ON bank_statements (account_id) WHERE importing = 1;

CREATE INDEX bank_statements_client_created ON bank_statements (client_id, created_at, id);

CREATE INDEX bank_statements_importing ON bank_statements (id) WHERE importing = 1;

CREATE INDEX bank_transaction_matches_file ON bank_transaction_matches (file_id, state);

CREATE INDEX bank_transactions_client_amount ON bank_transactions (client_id, amount, id);

CREATE INDEX bank_transactions_client_booking ON bank_transactions (client_id, booking_date, id);

CREATE UNIQUE INDEX bank_transactions_search_id ON bank_transactions (search_id);

CREATE INDEX bank_transactions_statement ON bank_transactions (statement_id);

CREATE INDEX clients_firm_created ON clients (firm_id, created_at, id);

CREATE INDEX clients_firm_name ON clients (firm_id, name, id);

CREATE INDEX clients_firm_updated ON clients (firm_id, updated_at, id);

CREATE INDEX collect_item_files_collect ON collect_item_files (collect_id, seq);

CREATE INDEX collect_item_files_file ON collect_item_files (file_id);

CREATE INDEX collect_item_files_session ON collect_item_files (client_id, session_id);

CREATE INDEX collect_items_folder ON collect_items (folder_id);

CREATE INDEX collect_sessions_collect_created ON collect_sessions (client_id, collect_id, created_at, id);

CREATE UNIQUE INDEX collect_sessions_token_hash ON collect_sessions (token_hash);

CREATE INDEX collects_client_created ON collects (client_id, created_at, id) WHERE deleted_at IS NULL;

CREATE INDEX collects_client_due_asc ON collects (client_id, due_asc, id) WHERE deleted_at IS NULL;

CREATE INDEX collects_client_due_desc ON collects (client_id, due_desc, id) WHERE deleted_at IS NULL;

CREATE INDEX collects_client_status ON collects (client_id, status, created_at, id) WHERE deleted_at IS NULL;

CREATE INDEX collects_client_title ON collects (client_id, title, id) WHERE deleted_at IS NULL;

CREATE INDEX collects_client_updated ON collects (client_id, updated_at, id) WHERE deleted_at IS NULL;

CREATE INDEX collects_task ON collects (task_id);

CREATE INDEX collects_workspace_created ON collects (client_id, workspace_id, created_at, id) WHERE deleted_at IS NULL;

CREATE INDEX collects_workspace_due_asc ON collects (client_id, workspace_id, due_asc, id) WHERE deleted_at IS NULL;

CREATE INDEX collects_workspace_due_desc ON collects (client_id, workspace_id, due_desc, id) WHERE deleted_at IS NULL;

CREATE INDEX collects_workspace_title ON collects (client_id, workspace_id, title, id) WHERE deleted_at IS NULL;

CREATE INDEX collects_workspace_updated ON collects (client_id, workspace_id, updated_at, id) WHERE deleted_at IS NULL;

CREATE INDEX counterparties_client_created ON counterparties (client_id, created_at, id);

CREATE INDEX counterparty_keys_counterparty ON counterparty_keys (counterparty_id);

CREATE INDEX export_files_file ON export_files (file_id, exported_at);

CREATE INDEX exports_client_created ON exports (client_id, created_at, id);

CREATE INDEX exports_queued ON exports (status, created_at) WHERE status IN ('queued', 'running');

CREATE INDEX file_bookings_counterparty ON file_bookings (counterparty_id);

CREATE INDEX file_labels_label ON file_labels (label_id);

CREATE INDEX files_client_created ON files (client_id, created_at, id);

CREATE INDEX files_client_direction ON files (client_id, direction) WHERE direction IS NOT NULL;

CREATE INDEX files_client_document_date ON files (client_id, document_date, id);

CREATE INDEX files_client_name ON files (client_id, name, id);

CREATE INDEX files_client_size ON files (client_id, size, id);

CREATE INDEX files_client_total_amount ON files (client_id, total_amount) WHERE total_amount IS NOT NULL;

CREATE INDEX files_client_updated ON files (client_id, updated_at, id);

CREATE INDEX files_folder ON files (folder_id);

CREATE INDEX files_task ON files (task_id);

CREATE INDEX files_workspace_created ON files (workspace_id, created_at, id);

CREATE INDEX folders_parent ON folders (parent_id);

CREATE INDEX folders_workspace_created ON folders (client_id, workspace_id, created_at, id);

CREATE INDEX folders_workspace_name ON folders (client_id, workspace_id, name, id);

CREATE UNIQUE INDEX folders_workspace_parent_name ON folders (workspace_id, coalesce(parent_id, ''), name);

CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

CREATE INDEX kind_examples_firm ON kind_examples (firm_id, updated_at);

CREATE INDEX labels_workspace_created ON labels (client_id, workspace_id, created_at, id);

CREATE INDEX labels_workspace_name ON labels (client_id, workspace_id, name, id);

CREATE INDEX mail_outbox_due ON mail_outbox (status, next_attempt_at);

CREATE INDEX mail_outbox_quota ON mail_outbox (firm_id, counted_at);

CREATE INDEX mail_outbox_session ON mail_outbox (session_id, kind);

CREATE UNIQUE INDEX roles_firm_builtin ON roles (firm_id, name) WHERE name <> 'custom';

CREATE UNIQUE INDEX roles_firm_custom_name ON roles (firm_id, custom_name) WHERE name = 'custom';

CREATE INDEX task_asset_files_file ON task_asset_files (file_id);

CREATE INDEX task_tombstones_deleted ON task_tombstones (deleted_at);

CREATE INDEX tasks_client_created ON tasks (client_id, created_at, id);

CREATE INDEX tasks_client_due_asc ON tasks (client_id, due_asc, id);

CREATE INDEX tasks_client_due_desc ON tasks (client_id, due_desc, id);

CREATE INDEX tasks_client_status ON tasks (client_id, status, id);

CREATE INDEX tasks_client_title ON tasks (client_id, title, id);

CREATE INDEX tasks_client_updated ON tasks (client_id, updated_at, id);

CREATE INDEX tasks_created_by ON tasks (created_by_id);

CREATE INDEX tasks_destination_folder ON tasks (destination_folder_id);

CREATE INDEX tasks_parent_created ON tasks (client_id, parent_id, created_at, id);

CREATE INDEX tasks_workspace_created ON tasks (client_id, workspace_id, created_at, id);

CREATE INDEX tasks_workspace_due_asc ON tasks (client_id, workspace_id, due_asc, id);

CREATE INDEX tasks_workspace_due_desc ON tasks (client_id, workspace_id, due_desc, id);

CREATE INDEX tasks_workspace_status ON tasks (client_id, workspace_id, status, id);

CREATE INDEX tasks_workspace_title ON tasks (client_id, workspace_id, title, id);

CREATE INDEX tasks_workspace_updated ON tasks (client_id, workspace_id, updated_at, id);

CREATE INDEX users_accountant_created ON users (firm_id, created_at, id) WHERE client_id IS NULL;

CREATE UNIQUE INDEX users_accountant_email ON users (firm_id, email) WHERE client_id IS NULL;

CREATE INDEX users_accountant_first_name_asc ON users (firm_id, first_name_asc, id) WHERE client_id IS NULL;

CREATE INDEX users_accountant_first_name_desc ON users (firm_id, first_name_desc, id) WHERE client_id IS NULL;

CREATE INDEX users_accountant_last_name_asc ON users (firm_id, last_name_asc, id) WHERE client_id IS NULL;

CREATE INDEX users_accountant_last_name_desc ON users (firm_id, last_name_desc, id) WHERE client_id IS NULL;

CREATE INDEX users_accountant_updated ON users (firm_id, updated_at, id) WHERE client_id IS NULL;

CREATE UNIQUE INDEX users_client_email ON users (client_id, email) WHERE client_id IS NOT NULL;

CREATE INDEX users_role ON users (role_id);

CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_seq);

CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (webhook_id, event_seq) WHERE status = 'pending';

CREATE INDEX webhook_deliveries_webhook_created ON webhook_deliveries (webhook_id, created_at, id);

CREATE INDEX webhooks_firm_created ON webhooks (firm_id, created_at, id);

CREATE INDEX webhooks_firm_updated ON webhooks (firm_id, updated_at, id);

CREATE INDEX workspace_members_user ON workspace_members (user_id);

CREATE INDEX workspaces_client_created ON workspaces (client_id, created_at, id);

CREATE TRIGGER bank_transactions_search_delete AFTER DELETE ON bank_transactions BEGIN
    INSERT INTO bank_transactions_search (bank_transactions_search, rowid, counterparty_name, remittance_info,
        bank_reference, end_to_end_id)
    VALUES ('delete', old.search_id, old.counterparty_name, old.remittance_info, old.bank_reference, old.end_to_end_id);
END;

CREATE TRIGGER bank_transactions_search_insert AFTER INSERT ON bank_transactions BEGIN
    INSERT INTO bank_transactions_search (rowid, counterparty_name, remittance_info, bank_reference, end_to_end_id)
    VALUES (new.search_id, new.counterparty_name, new.remittance_info, new.bank_reference, new.end_to_end_id);
END;

CREATE TRIGGER bank_transactions_search_update AFTER UPDATE OF search_id, counterparty_name, remittance_info,
    bank_reference, end_to_end_id ON bank_transactions BEGIN
    INSERT INTO bank_transactions_search (bank_transactions_search, rowid, counterparty_name, remittance_info,
        bank_reference, end_to_end_id)
    VALUES ('delete', old.search_id, old.counterparty_name, old.remittance_info, old.bank_reference, old.end_to_end_id);
    INSERT INTO bank_transactions_search (rowid, counterparty_name, remittance_info, bank_reference, end_to_end_id)
    VALUES (new.search_id, new.counterparty_name, new.remittance_info, new.bank_reference, new.end_to_end_id);
END;

CREATE TRIGGER collect_sessions_cancel_reminders AFTER UPDATE OF revoked_at ON collect_sessions
WHEN NEW.revoked_at IS NOT NULL
BEGIN
    UPDATE mail_outbox SET status = 'cancelled', data = NULL, updated_at = NEW.revoked_at
    WHERE kind = 'collect_reminder' AND status = 'queued' AND client_id = NEW.client_id AND session_id = NEW.id;
END;

CREATE TRIGGER collects_cancel_reminders AFTER UPDATE OF status, deleted_at ON collects
WHEN NEW.status <> 'OPEN' OR NEW.deleted_at IS NOT NULL
BEGIN
    UPDATE mail_outbox SET status = 'cancelled', data = NULL, updated_at = NEW.updated_at
    WHERE kind = 'collect_reminder' AND status = 'queued' AND client_id = NEW.client_id
      AND session_id IN (SELECT id FROM collect_sessions WHERE client_id = NEW.client_id AND collect_id = NEW.id);
END;

CREATE TRIGGER file_search_rows_after_delete AFTER DELETE ON file_search_rows BEGIN
    DELETE FROM file_search WHERE rowid = old.seq;
END;

CREATE TRIGGER tasks_after_delete AFTER DELETE ON tasks BEGIN
    UPDATE task_counts SET n = n - 1
    WHERE client_id = OLD.client_id AND scope IN ('', 'w:' || OLD.workspace_id, 'p:' || OLD.parent_id);
    DELETE FROM task_counts WHERE client_id = OLD.client_id AND scope = 'p:' || OLD.id;
    INSERT OR REPLACE INTO task_tombstones (id, client_id, title, status, due_date, created_at, updated_at, deleted_at)
    VALUES (OLD.id, OLD.client_id, OLD.title, OLD.status, OLD.due_date, OLD.created_at, OLD.updated_at, unixepoch());
END;

CREATE TRIGGER tasks_after_insert AFTER INSERT ON tasks BEGIN
    INSERT INTO task_counts (client_id, scope, n)
    VALUES (NEW.client_id, '', 1), (NEW.client_id, 'w:' || NEW.workspace_id, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
    INSERT INTO task_counts (client_id, scope, n)
    SELECT NEW.client_id, 'p:' || NEW.parent_id, 1 WHERE NEW.parent_id IS NOT NULL
    ON CONFLICT DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER tasks_after_reparent AFTER UPDATE OF parent_id ON tasks
WHEN OLD.parent_id IS NOT NEW.parent_id BEGIN
    UPDATE task_counts SET n = n - 1 WHERE client_id = OLD.client_id AND scope = 'p:' || OLD.parent_id;
    INSERT INTO task_counts (client_id, scope, n)
    SELECT NEW.client_id, 'p:' || NEW.parent_id, 1 WHERE NEW.parent_id IS NOT NULL
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
