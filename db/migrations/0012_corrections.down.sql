DROP TABLE kind_examples;
DROP TABLE supplier_anchors;
ALTER TABLE files DROP COLUMN user_fields;
ALTER TABLE files DROP COLUMN analysis_warnings;
ALTER TABLE files DROP COLUMN analysis_confidence;
