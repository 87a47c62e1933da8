-- What a reading is sure of and what it found wrong, and what a person
-- corrected. analysis_confidence is JSON {field: number in [0, 1]} for the
-- values the reading found; analysis_warnings a JSON list of sentences.
-- user_fields is JSON {field: value or null}: a person's corrections, which
-- no later reading overwrites (null: the person cleared the field).
ALTER TABLE files ADD COLUMN analysis_confidence TEXT;
ALTER TABLE files ADD COLUMN analysis_warnings TEXT;
ALTER TABLE files ADD COLUMN user_fields TEXT;

-- What the firm's corrections taught its readings: the firm's, shared by
-- its clients, read only by the analysis. supplier is a SHA-256 of the
-- supplier's key (VAT id, IBAN or normalised name); anchor says where the
-- field's value stands, its label words hashed, never the text itself.
CREATE TABLE supplier_anchors (
    firm_id    TEXT    NOT NULL REFERENCES firms (id) ON DELETE CASCADE,
    supplier   TEXT    NOT NULL,
    field      TEXT    NOT NULL,
    anchor     TEXT    NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (firm_id, supplier, field)
) WITHOUT ROWID;

-- A document whose kind a person set, as the firm's kind classifier
-- learns from it: its words, hashed. One row a file: a second correction
-- replaces the first, and the lesson goes with the file.
CREATE TABLE kind_examples (
    file_id    TEXT    NOT NULL PRIMARY KEY REFERENCES files (id) ON DELETE CASCADE,
    firm_id    TEXT    NOT NULL REFERENCES firms (id) ON DELETE CASCADE,
    kind       TEXT    NOT NULL,
    features   BLOB    NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX kind_examples_firm ON kind_examples (firm_id, updated_at);
