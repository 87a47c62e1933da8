-- The kind of document a collect item asks for (null: any). A file
-- uploaded for it whose kind is known and differs is pointed out to the
-- uploader, never refused. "other" is not asked for: it says only that a
-- document is none of the kinds.
ALTER TABLE collect_items ADD COLUMN kind TEXT
    CHECK (kind IN ('invoice', 'credit_note', 'receipt', 'bank_statement', 'payslip', 'tax_notice', 'contract'));
