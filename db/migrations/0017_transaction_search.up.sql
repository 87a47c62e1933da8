-- The transaction list's q searches counterparty, remittance and
-- references through a full-text index of trigrams: any part of three
-- characters or more of a word or phrase, as LIKE '%q%' would find it,
-- without reading every transaction of the client.
--
-- The index names each transaction by search_id, a number of its own: the
-- table's rowid is no key (it has a text primary key), and VACUUM, which a
-- backup runs (VACUUM INTO), may number rowids anew. An import gives each
-- new transaction the next number; the triggers keep the index with the
-- transactions, cascaded deletes included.
ALTER TABLE bank_transactions ADD COLUMN search_id INTEGER;
UPDATE bank_transactions SET search_id = rowid;
CREATE UNIQUE INDEX bank_transactions_search_id ON bank_transactions (search_id);

CREATE VIRTUAL TABLE bank_transactions_search USING fts5 (
    counterparty_name, remittance_info, bank_reference, end_to_end_id,
    content = 'bank_transactions', content_rowid = 'search_id', tokenize = 'trigram'
);
INSERT INTO bank_transactions_search (bank_transactions_search) VALUES ('rebuild');

CREATE TRIGGER bank_transactions_search_insert AFTER INSERT ON bank_transactions BEGIN
    INSERT INTO bank_transactions_search (rowid, counterparty_name, remittance_info, bank_reference, end_to_end_id)
    VALUES (new.search_id, new.counterparty_name, new.remittance_info, new.bank_reference, new.end_to_end_id);
END;
CREATE TRIGGER bank_transactions_search_delete AFTER DELETE ON bank_transactions BEGIN
    INSERT INTO bank_transactions_search (bank_transactions_search, rowid, counterparty_name, remittance_info,
        bank_reference, end_to_end_id)
    VALUES ('delete', old.search_id, old.counterparty_name, old.remittance_info, old.bank_reference, old.end_to_end_id);
END;
CREATE TRIGGER bank_transactions_search_update AFTER UPDATE OF search_id, counterparty_name, remittance_info,
    bank_reference, end_to_end_id ON bank_transactions BEGIN
    INSERT INTO bank_transactions_search (bank_transactions_search, rowid, counterparty_name, remittance_info,
        bank_reference, end_to_end_id)
    VALUES ('delete', old.search_id, old.counterparty_name, old.remittance_info, old.bank_reference, old.end_to_end_id);
    INSERT INTO bank_transactions_search (rowid, counterparty_name, remittance_info, bank_reference, end_to_end_id)
    VALUES (new.search_id, new.counterparty_name, new.remittance_info, new.bank_reference, new.end_to_end_id);
END;
