-- A statement is imported in several writes, so that a large one never
-- holds the single writer long: its row is written first with importing =
-- 1, its transactions in batches, and the last write sets importing = 0
-- with its counts, the account's balance and its event. Until then the
-- statement and its transactions are seen by no read; an import that broke
-- off is removed by the next import of its account.
ALTER TABLE bank_statements ADD COLUMN importing INTEGER NOT NULL DEFAULT 0 CHECK (importing IN (0, 1));
CREATE INDEX bank_statements_importing ON bank_statements (id) WHERE importing = 1;
CREATE INDEX bank_statements_account_importing ON bank_statements (account_id) WHERE importing = 1;
