-- A client's VAT ids, a JSON array of strings: with its name and its
-- accounts they tell the invoices it issued from those it received.
ALTER TABLE clients ADD COLUMN vat_ids TEXT;

-- What the banking worker last decided of a document: whether the client
-- issued or received it, and what its confirmed payments left open (an
-- amount in units of 10^-5, as total_amount). The worker recomputes them
-- with every matching job of the client.
ALTER TABLE files ADD COLUMN direction TEXT CHECK (direction IN ('received', 'issued'));
ALTER TABLE files ADD COLUMN payment_status TEXT CHECK (payment_status IN ('open', 'partial', 'paid'));
ALTER TABLE files ADD COLUMN open_amount INTEGER;
CREATE INDEX files_client_direction ON files (client_id, direction) WHERE direction IS NOT NULL;

-- A bank job may be about a whole client (target 'client': its
-- identity changed, so every document's direction and every open
-- transaction's candidates may have). The table is made again for the
-- wider CHECK.
CREATE TABLE bank_jobs_before AS SELECT * FROM bank_jobs;
DROP TABLE bank_jobs;
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
INSERT INTO bank_jobs (target, target_id, client_id, attempts, claimed_at, next_attempt_at, created_at)
    SELECT target, target_id, client_id, attempts, claimed_at, next_attempt_at, created_at FROM bank_jobs_before;
DROP TABLE bank_jobs_before;
CREATE INDEX bank_jobs_due ON bank_jobs (claimed_at, next_attempt_at);

-- The documents read before this migration get their direction and
-- payment state from one job per client that has any.
INSERT INTO bank_jobs (target, target_id, client_id, next_attempt_at, created_at)
SELECT 'client', c.id, c.id, CAST(strftime('%s', 'now') AS INTEGER), CAST(strftime('%s', 'now') AS INTEGER)
FROM clients c
WHERE EXISTS (SELECT 1 FROM files f WHERE f.client_id = c.id AND (f.analysis_fields IS NOT NULL OR f.user_fields IS NOT NULL));
