ALTER TABLE collect_items DROP COLUMN kind;
