-- Documents: every file is listed, searched, corrected and read. Reading a
-- file (its analysis) is a job written in the transaction of the file's
-- row, claimed by a background worker; what it finds lands on the file,
-- its text in file_texts and in the search index.

-- kind and document_date are set by a person (source 'user') or by the
-- analysis ('analysis'); the analysis never overwrites a person's value.
-- A document date the uploader did not give stays the upload time, with
-- no source, until the analysis finds the document's own.
ALTER TABLE files ADD COLUMN kind TEXT
    CHECK (kind IN ('invoice', 'credit_note', 'receipt', 'bank_statement', 'payslip', 'tax_notice', 'contract', 'other'));
ALTER TABLE files ADD COLUMN kind_source TEXT CHECK (kind_source IN ('user', 'analysis'));
ALTER TABLE files ADD COLUMN document_date_source TEXT CHECK (document_date_source IN ('user', 'analysis'));
-- analysis_fields is the JSON of what the document says (db.DocumentFields);
-- analysis_kind the kind it found, which kind shows unless a person set one.
ALTER TABLE files ADD COLUMN analysis_status TEXT NOT NULL DEFAULT 'pending'
    CHECK (analysis_status IN ('pending', 'done', 'failed', 'skipped'));
ALTER TABLE files ADD COLUMN analysis_source TEXT CHECK (analysis_source IN ('einvoice', 'text', 'ocr'));
ALTER TABLE files ADD COLUMN analysis_reason TEXT;
ALTER TABLE files ADD COLUMN analysis_language TEXT;
ALTER TABLE files ADD COLUMN analyzed_at INTEGER;
ALTER TABLE files ADD COLUMN analysis_fields TEXT;
ALTER TABLE files ADD COLUMN analysis_kind TEXT
    CHECK (analysis_kind IN ('invoice', 'credit_note', 'receipt', 'bank_statement', 'payslip', 'tax_notice', 'contract', 'other'));

-- Before this version an upload without a date got its upload time; one
-- that differs was given by the uploader.
UPDATE files SET document_date_source = 'user' WHERE document_date <> created_at;

-- The list's sorts, each walked from the tenant (the client). The
-- workspace's own index stays for its filter.
DROP INDEX files_client;
CREATE INDEX files_client_created ON files (client_id, created_at, id);
CREATE INDEX files_client_updated ON files (client_id, updated_at, id);
CREATE INDEX files_client_document_date ON files (client_id, document_date, id);
CREATE INDEX files_client_name ON files (client_id, name, id);
CREATE INDEX files_client_size ON files (client_id, size, id);

-- The text of each file, once: the search index keeps no copy of it
-- (contentless). A file has a row here once a reading found text.
CREATE TABLE file_texts (
    file_id   TEXT    NOT NULL PRIMARY KEY REFERENCES files (id) ON DELETE CASCADE,
    client_id TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    source    TEXT    NOT NULL CHECK (source IN ('einvoice', 'text', 'ocr')),
    pages     INTEGER NOT NULL,
    text      TEXT    NOT NULL
);

-- The full-text index of each file's name, text and fields. Accents and
-- case are folded; prefixes of two and three characters are indexed so
-- that the last word of a search, matched as a prefix, stays cheap.
CREATE VIRTUAL TABLE file_search USING fts5 (
    name, text, fields,
    content = '', contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3'
);

-- Each file's row in the search index, with its tenant: narrow, so that
-- a search counts and filters its matches without reading the files.
CREATE TABLE file_search_rows (
    seq       INTEGER NOT NULL PRIMARY KEY,
    file_id   TEXT    NOT NULL UNIQUE REFERENCES files (id) ON DELETE CASCADE,
    client_id TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE
);

CREATE TRIGGER file_search_rows_after_delete AFTER DELETE ON file_search_rows BEGIN
    DELETE FROM file_search WHERE rowid = old.seq;
END;

-- The analysis queue: one job per file to read. attempts counts readings
-- begun and not ended (a crash or a panic in the reader): a file that
-- broke the reader twice ends failed. retries counts the times the file's
-- bytes could not be fetched, which say nothing of the file. claimed_at is
-- set while a worker reads it; the worker releases the claims a crashed
-- process left when it starts.
CREATE TABLE analysis_jobs (
    file_id         TEXT    NOT NULL PRIMARY KEY REFERENCES files (id) ON DELETE CASCADE,
    client_id       TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    attempts        INTEGER NOT NULL DEFAULT 0,
    retries         INTEGER NOT NULL DEFAULT 0,
    claimed_at      INTEGER,
    next_attempt_at INTEGER NOT NULL,
    created_at      INTEGER NOT NULL
);
CREATE INDEX analysis_jobs_due ON analysis_jobs (claimed_at, next_attempt_at);

-- The files stored before this version are found by their names, and
-- read.
INSERT INTO file_search_rows (file_id, client_id) SELECT id, client_id FROM files ORDER BY created_at, id;
INSERT INTO file_search (rowid, name, text, fields)
    SELECT r.seq, f.name, '', '' FROM file_search_rows r JOIN files f ON f.id = r.file_id;
INSERT INTO analysis_jobs (file_id, client_id, next_attempt_at, created_at)
    SELECT id, client_id, created_at, created_at FROM files;
