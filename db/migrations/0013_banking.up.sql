-- Bank statements: a client's bank accounts, the statements imported for
-- them, their entries as transactions, and the documents matched to each.
-- Amounts are integers in hundred-thousandths of their currency's unit
-- (five decimals, the most ISO 20022 gives an amount), so that they are
-- exact, compare as numbers and sort.

-- An account is created by the first statement that names it: by its IBAN,
-- or by the account id an MT940 statement gives (account_ref, either one).
-- balance and balance_date are the newest closing balance imported.
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
CREATE INDEX bank_accounts_client_created ON bank_accounts (client_id, created_at, id);

-- A statement as imported: what the file said of itself, and how many of
-- its entries were new (transaction_count) or known before
-- (duplicate_count). file_id is the File the statement was read from, when
-- it was kept as one: a file is imported once.
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
);
CREATE INDEX bank_statements_client_created ON bank_statements (client_id, created_at, id);
CREATE INDEX bank_statements_account_created ON bank_statements (client_id, account_id, created_at, id);

-- A transaction is an entry of a statement, once per account: dedup_key is
-- the bank's reference, else the date, amount, counterparty and remittance
-- with the entry's rank among its equals in its statement (two equal
-- coffees of one day stay two). decided_by_user says a person decided it
-- (its documents, or that it needs none): matching leaves it alone.
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
    updated_at        INTEGER NOT NULL,
    UNIQUE (account_id, dedup_key)
);
-- The list's sorts, walked from the tenant; candidates for a document by
-- their amount.
CREATE INDEX bank_transactions_client_booking ON bank_transactions (client_id, booking_date, id);
CREATE INDEX bank_transactions_client_amount ON bank_transactions (client_id, amount, id);
CREATE INDEX bank_transactions_statement ON bank_transactions (statement_id);

-- The documents matched to a transaction: confirmed (by matching where
-- certain, by a person, or by an upload to the transaction's collect item)
-- or suggested, with the score and the reasons.
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
CREATE INDEX bank_transaction_matches_file ON bank_transaction_matches (file_id, state);

-- A document's total, in the transactions' units, for finding the
-- transactions it may explain: a person's value where they set one (null
-- included), else the reading's.
ALTER TABLE files ADD COLUMN total_amount INTEGER
    GENERATED ALWAYS AS (CAST(round(CASE WHEN json_type(user_fields, '$.totalAmount') IS NOT NULL
        THEN json_extract(user_fields, '$.totalAmount') ELSE json_extract(analysis_fields, '$.totalAmount') END
        * 100000) AS INTEGER)) VIRTUAL;
CREATE INDEX files_client_total_amount ON files (client_id, total_amount) WHERE total_amount IS NOT NULL;

-- The matching queue: a statement's transactions to match (target
-- 'statement'), or a file whose reading ended or was corrected (target
-- 'file': imported when it is a bank statement, else matched to the
-- transactions of its amount). Written in the transaction of what triggers
-- it; the triggers below queue a file whenever its reading, a person's
-- correction of its fields or its kind changes, whoever changes them.
CREATE TABLE matching_jobs (
    target          TEXT    NOT NULL CHECK (target IN ('statement', 'file')),
    target_id       TEXT    NOT NULL,
    client_id       TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    attempts        INTEGER NOT NULL DEFAULT 0,
    claimed_at      INTEGER,
    next_attempt_at INTEGER NOT NULL,
    created_at      INTEGER NOT NULL,
    PRIMARY KEY (target, target_id)
);
CREATE INDEX matching_jobs_due ON matching_jobs (claimed_at, next_attempt_at);

CREATE TRIGGER files_matching_after_update AFTER UPDATE OF analysis_status, analysis_fields, user_fields, kind ON files
WHEN new.analysis_status = 'done' BEGIN
    INSERT INTO matching_jobs (target, target_id, client_id, next_attempt_at, created_at)
    VALUES ('file', new.id, new.client_id, new.updated_at, new.updated_at)
    ON CONFLICT (target, target_id) DO UPDATE SET attempts = 0, claimed_at = NULL,
        next_attempt_at = excluded.next_attempt_at;
END;

-- A collect item may ask for the document of one transaction; a file
-- uploaded to it is confirmed for that transaction.
ALTER TABLE collect_items ADD COLUMN transaction_id TEXT;

-- Keys that held every permission of their kind keep holding every one
-- (a client key with or without mail:send, which is opt-in for it).
UPDATE api_keys SET permissions = permissions || ' banking:read banking:write'
WHERE client_id IS NULL AND permissions = 'tasks:read tasks:write workspaces:read workspaces:write members:read members:write users:read users:write files:read files:write clients:read clients:write accountant_users:read accountant_users:write webhooks:read webhooks:write collects:read collects:write mail:send firm:read firm:write';
UPDATE api_keys SET permissions = permissions || ' banking:read banking:write'
WHERE client_id IS NOT NULL AND permissions IN (
    'tasks:read tasks:write workspaces:read workspaces:write members:read members:write users:read users:write files:read files:write collects:read collects:write',
    'tasks:read tasks:write workspaces:read workspaces:write members:read members:write users:read users:write files:read files:write collects:read collects:write mail:send');
