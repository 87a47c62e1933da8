DROP INDEX collect_item_files_session;
ALTER TABLE collect_item_files DROP COLUMN session_id;
