DROP TRIGGER bank_transactions_search_update;
DROP TRIGGER bank_transactions_search_delete;
DROP TRIGGER bank_transactions_search_insert;
DROP TABLE bank_transactions_search;
DROP INDEX bank_transactions_search_id;
ALTER TABLE bank_transactions DROP COLUMN search_id;
