-- Uploads through collect links have a budget per link and per collect.
-- session_id is the link a file came through (null for files linked before
-- this version), so that each link's files count against its budget.
ALTER TABLE collect_item_files ADD COLUMN session_id TEXT;
CREATE INDEX collect_item_files_session ON collect_item_files (client_id, session_id);
