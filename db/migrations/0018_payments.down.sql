CREATE TABLE bank_jobs_before AS SELECT * FROM bank_jobs WHERE target IN ('statement', 'file');
DROP TABLE bank_jobs;
CREATE TABLE bank_jobs (
    target          TEXT    NOT NULL CHECK (target IN ('statement', 'file')),
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
DROP INDEX files_client_direction;
ALTER TABLE files DROP COLUMN open_amount;
ALTER TABLE files DROP COLUMN payment_status;
ALTER TABLE files DROP COLUMN direction;
ALTER TABLE clients DROP COLUMN vat_ids;
