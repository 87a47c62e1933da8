-- A file read to the end, or changed by a person, is queued for matching
-- by the store's Go code in the transaction of the change (FinishAnalysis,
-- UpdateFile), and the bank statement a file is, is imported with its
-- reading: no trigger does a package's job out of sight.
DROP TRIGGER files_matching_after_update;

-- The statement files the trigger queued that were not imported yet are
-- read again: the reading imports them now.
UPDATE files SET analysis_status = 'pending', analysis_reason = NULL
WHERE analysis_status = 'done' AND kind = 'bank_statement'
    AND id IN (SELECT target_id FROM matching_jobs WHERE target = 'file')
    AND NOT EXISTS (SELECT 1 FROM bank_statements s WHERE s.client_id = files.client_id AND s.file_id = files.id);
INSERT INTO analysis_jobs (file_id, client_id, lane, turn, next_attempt_at, created_at)
SELECT f.id, f.client_id, 'fast', 0, j.next_attempt_at, j.created_at
FROM matching_jobs j JOIN files f ON f.id = j.target_id AND f.client_id = j.client_id
WHERE j.target = 'file' AND f.analysis_status = 'pending' AND f.kind = 'bank_statement'
    AND NOT EXISTS (SELECT 1 FROM bank_statements s WHERE s.client_id = f.client_id AND s.file_id = f.id)
ON CONFLICT (file_id) DO NOTHING;

-- The queue of what the banking worker matches is the bank jobs: "matching"
-- is the name of the rules alone.
ALTER TABLE matching_jobs RENAME TO bank_jobs;
DROP INDEX matching_jobs_due;
CREATE INDEX bank_jobs_due ON bank_jobs (claimed_at, next_attempt_at);
