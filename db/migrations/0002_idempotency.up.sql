-- Answers to requests sent with an Idempotency-Key, per API key, replayed to
-- retries for 24 hours. A row with a NULL fingerprint was written in the same
-- transaction as the request's write: the write happened, but the server
-- stopped before it recorded the answer.
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
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
