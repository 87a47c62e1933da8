DROP INDEX bank_jobs_due;
ALTER TABLE bank_jobs RENAME TO matching_jobs;
CREATE INDEX matching_jobs_due ON matching_jobs (claimed_at, next_attempt_at);
CREATE TRIGGER files_matching_after_update AFTER UPDATE OF analysis_status, analysis_fields, user_fields, kind ON files
WHEN new.analysis_status = 'done' BEGIN
    INSERT INTO matching_jobs (target, target_id, client_id, next_attempt_at, created_at)
    VALUES ('file', new.id, new.client_id, new.updated_at, new.updated_at)
    ON CONFLICT (target, target_id) DO UPDATE SET attempts = 0, claimed_at = NULL,
        next_attempt_at = excluded.next_attempt_at;
END;
